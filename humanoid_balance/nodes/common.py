"""What every humanoid_balance node shares: QoS, reading JointState by name, rejecting bad input
(count, rate-limited log, keep the last good state), /diagnostics and the console entry point."""
import math
import sys
import time
from collections import Counter

import numpy as np
import rclpy
import rclpy.executors
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, PointStamped, Vector3, WrenchStamped
from rclpy.exceptions import NameValidationException, ParameterException
from rclpy.executors import ExternalShutdownException
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rcl_interfaces.msg import ParameterDescriptor

from humanoid_balance.model.errors import ModelError
from humanoid_balance.nodes import shutdown_requested

__all__ = ["SENSOR_QOS", "RELIABLE_QOS", "RejectedMessage", "JointStateReader", "InputGuard", "RateMeter",
           "Diagnostics", "describe", "stamp_seconds", "finite", "autostarted", "run", "point_message",
           "wrench_message", "USER_MISTAKES"]

SENSOR_QOS = qos_profile_sensor_data
"""Sensor topics in: best effort, shallow (CONVENTIONS.md)."""
RELIABLE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
"""The suite's own outputs: reliable."""

LEVELS = {"OK": DiagnosticStatus.OK, "WARN": DiagnosticStatus.WARN, "ERROR": DiagnosticStatus.ERROR,
          "STALE": DiagnosticStatus.STALE}


class RejectedMessage(Exception):
    """An input message that must not reach the algorithms; ``reason`` is a short counter key."""

    def __init__(self, reason, detail):
        self.reason = reason
        self.detail = detail
        super().__init__(detail)


def describe(text, read_only=False, **ranges):
    """A ParameterDescriptor with a description (and optional ranges given as descriptors' fields)."""
    return ParameterDescriptor(description=text, read_only=read_only, **ranges)


def stamp_seconds(stamp):
    return stamp.sec + 1e-9 * stamp.nanosec


def finite(values, topic, field):
    """``values`` as a float array; raises RejectedMessage('not_finite') on NaN or Inf."""
    array = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(array)):
        raise RejectedMessage("not_finite", f"{topic}: {field} contains NaN or Inf")
    return array


class JointStateReader:
    """Pick named joints out of sensor_msgs/JointState messages: any order, extra joints ignored."""

    def __init__(self, topic, required, optional=()):
        self.topic = topic
        self.required = tuple(required)
        self.optional = tuple(optional)
        self._layout = None
        self._index = None

    def _indices(self, names):
        if names != self._layout:
            position = {name: i for i, name in enumerate(names)}
            if len(position) != len(names):
                raise RejectedMessage("duplicate_names", f"{self.topic}: a joint name appears twice")
            missing = [name for name in self.required if name not in position]
            if missing:
                raise RejectedMessage("missing_joints", f"{self.topic}: missing required joints {missing}")
            self._index = (np.array([position[n] for n in self.required], dtype=int),
                           {n: position[n] for n in self.optional if n in position})
            self._layout = names
        return self._index

    def read(self, message):
        """(positions, velocities or None, efforts or None, {optional name: position}) of the joints.

        Raises:
            RejectedMessage: mismatched array lengths, missing joints, NaN/Inf.
        """
        names = tuple(message.name)
        count = len(names)
        for field in ("position", "velocity", "effort"):
            length = len(getattr(message, field))
            if length not in ((0, count) if field != "position" else (count,)):
                raise RejectedMessage("length_mismatch",
                                      f"{self.topic}: {length} {field} values for {count} names")
        required, optional = self._indices(names)
        position = finite(message.position, self.topic, "position")
        velocity = finite(message.velocity, self.topic, "velocity")[required] if len(message.velocity) else None
        effort = finite(message.effort, self.topic, "effort")[required] if len(message.effort) else None
        return position[required], velocity, effort, {n: float(position[i]) for n, i in optional.items()}


class InputGuard:
    """Counts rejected messages by reason, logs them at a limited rate and checks stamps go forward."""

    def __init__(self, node, log_period=2.0):
        self.node = node
        self.log_period = log_period
        self.rejected = Counter()
        self._last_stamp = {}

    def check_stamp(self, topic, stamp):
        seconds = stamp_seconds(stamp)
        previous = self._last_stamp.get(topic)
        if previous is not None and seconds < previous:
            raise RejectedMessage("stamp_backwards", f"{topic}: stamp {seconds:.6f} s is before {previous:.6f} s")
        self._last_stamp[topic] = seconds
        return seconds

    def reject(self, error):
        self.rejected[error.reason] += 1
        self.node.get_logger().warning(f"rejected: {error.detail} (kept the last good state)",
                                       throttle_duration_sec=self.log_period)

    @property
    def total(self):
        return sum(self.rejected.values())

    def figures(self):
        """Diagnostics values: the total and the count of each reason."""
        values = {"rejected messages": self.total}
        values.update({f"rejected: {reason}": count for reason, count in sorted(self.rejected.items())})
        return values


class RateMeter:
    """Update rate over a sliding window [Hz]."""

    def __init__(self, window=2.0):
        self.window = window
        self.times = []

    def tick(self, now=None):
        now = time.monotonic() if now is None else now
        self.times.append(now)
        while self.times and self.times[0] < now - self.window:
            self.times.pop(0)

    @property
    def hz(self):
        if len(self.times) < 2 or self.times[-1] == self.times[0]:
            return 0.0
        return (len(self.times) - 1) / (self.times[-1] - self.times[0])


class Diagnostics:
    """Publishes one DiagnosticStatus per call on /diagnostics, named '<node>: <what>'."""

    def __init__(self, node, what):
        self.node = node
        self.name = f"{node.get_name()}: {what}"
        self.publisher = node.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)

    def publish(self, level, message, values):
        status = DiagnosticStatus(level=LEVELS[level], name=self.name, message=message,
                                  hardware_id=self.node.get_fully_qualified_name())
        status.values = [KeyValue(key=key, value=_format(value)) for key, value in values.items()]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.node.get_clock().now().to_msg()
        self.publisher.publish(array)


def point_message(stamp, frame, xyz):
    """geometry_msgs/PointStamped of a 3-vector [m]."""
    message = PointStamped(point=Point(x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2])))
    message.header.stamp, message.header.frame_id = stamp, frame
    return message


def wrench_message(stamp, frame, wrench):
    """geometry_msgs/WrenchStamped of [f; τ] [N, N·m]."""
    message = WrenchStamped()
    message.header.stamp, message.header.frame_id = stamp, frame
    message.wrench.force = Vector3(x=float(wrench[0]), y=float(wrench[1]), z=float(wrench[2]))
    message.wrench.torque = Vector3(x=float(wrench[3]), y=float(wrench[4]), z=float(wrench[5]))
    return message


def _format(value):
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.6g}"
    return str(value)


def autostarted(lifecycle_node_class):
    """A factory that builds the lifecycle node and, if its ``autostart`` parameter is true, configures and
    activates it (as a lifecycle manager would); keyword arguments go to the node (rclpy node options).

    Raises:
        ModelError: the configuration was refused (the node's ``configuration_error`` says why).
    """
    def build(**node_options):
        node = lifecycle_node_class(**node_options)
        if node.get_parameter("autostart").value:
            if node.trigger_configure() != TransitionCallbackReturn.SUCCESS:
                raise ModelError(f"configuration refused: {node.configuration_error or 'the transition failed'}")
            node.trigger_activate()
        return node
    return build


USER_MISTAKES = (ModelError, ValueError, OSError, ParameterException, NameValidationException)
"""What a robot file, a parameter or a remap that a node cannot use raises while the node is built."""


def run(node_factory, name, args=None):
    """Console entry point: spin one node until Ctrl-C or shutdown, exit 0.

    A robot model, file or parameter the node cannot use (:data:`USER_MISTAKES` while building it) ends it with a
    one-line error naming the problem and exit code 1, not a traceback. Shutdown at any point of start-up (a
    signal noted by the entry point before ``rclpy.init``; after it, rclpy's handler invalidates the context, so
    whatever the node was creating fails) ends it with exit code 0. A message that rclpy fails to take or convert (RuntimeError out of the executor) does not kill the
    node: it is logged at a limited rate and counted as ``undecodable`` in the node's rejected inputs.
    """
    node = None
    try:
        rclpy.init(args=args)
        if shutdown_requested():  # a signal arrived before rclpy's handler was installed
            return 0
        executor = rclpy.executors.SingleThreadedExecutor()
        try:
            node = node_factory()
        except USER_MISTAKES as error:
            if not rclpy.ok():
                return 0
            print(f"{name}: error: {error}", file=sys.stderr)
            return 1
        executor.add_node(node)
        while rclpy.ok():
            try:
                executor.spin_once()
            except RuntimeError as error:
                if not rclpy.ok():
                    break
                guard = getattr(node, "guard", None)
                if guard is not None:
                    guard.rejected["undecodable"] += 1
                node.get_logger().error(f"a message could not be taken or converted: {error}",
                                        throttle_duration_sec=2.0)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok():
            raise  # a defect, not a shutdown: keep its traceback
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
