"""/diagnostics: one DiagnosticStatus per call, named '<node>: <what>', overruled by the node's InputGuard where
its inputs belie an OK."""
import math

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from humanoid_balance.nodes.qos import RELIABLE_QOS

__all__ = ["LEVELS", "LEVEL_NAMES", "Diagnostics", "rejected_key", "rejected_counts"]

LEVELS = {"OK": DiagnosticStatus.OK, "WARN": DiagnosticStatus.WARN, "ERROR": DiagnosticStatus.ERROR,
          "STALE": DiagnosticStatus.STALE}
LEVEL_NAMES = {value: name for name, value in LEVELS.items()}
"""A received DiagnosticStatus.level (bytes in this rclpy) → its name."""


REJECTED = "rejected: "  # the prefix of the figures that count an input's rejected messages by reason


def rejected_key(reason):
    """The figure that counts the messages rejected for ``reason``."""
    return f"{REJECTED}{reason}"


def rejected_counts(values):
    """reason → count of the rejected messages a status's figures ({key: text}) report."""
    return {key.removeprefix(REJECTED): int(value) for key, value in values.items() if key.startswith(REJECTED)}


class Diagnostics:
    """Publishes one DiagnosticStatus per call on /diagnostics, named '<node>: <what>'."""

    def __init__(self, node, what):
        self.node = node
        self.name = f"{node.get_name()}: {what}"
        self.publisher = node.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)

    def publish(self, level, message, values):
        """Publish a status; the node's InputGuard (``node.guard``) overrules an OK its inputs belie; the process's
        scheduling (nodes.entry.claim_real_time) is one of the values."""
        scheduling = getattr(self.node, "scheduling", None)
        if scheduling is not None:
            values = {**values, "scheduling": scheduling.describe()}
        guard = getattr(self.node, "guard", None)
        if guard is not None:
            level, message = guard.overrule(level, message)
        status = DiagnosticStatus(level=LEVELS[level], name=self.name, message=message,
                                  hardware_id=self.node.get_fully_qualified_name())
        status.values = [KeyValue(key=key, value=_format(value)) for key, value in values.items()]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.node.get_clock().now().to_msg()
        self.publisher.publish(array)


def _format(value):
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.6g}"
    return str(value)
