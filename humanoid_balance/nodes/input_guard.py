"""Guarded inputs: callbacks that reject bad input (counted by reason, logged at a limited rate, the last good state
kept), the stamp policy applied per topic (:mod:`humanoid_balance.nodes.stamp_policy`), the latest values of
inputs, and the node's subscriptions, publishers and timers wired through them (in balance_stack, the inputs another
node of the stack publishes are handed over by its cycle: :mod:`humanoid_balance.nodes.composition`)."""
import collections
import math
import time
from collections import Counter

from rclpy.lifecycle import LifecycleNode

from humanoid_balance.loop.starvation import MIN_TICKS, STARVED, SkippedTicks
from humanoid_balance.nodes.diagnostics import rejected_key
from humanoid_balance.nodes.output_topic import OutputTopic
from humanoid_balance.nodes.messages import RejectedMessage, stamp_seconds
from humanoid_balance.nodes.parameters import describe
from humanoid_balance.nodes.stamp_policy import StampPolicy

__all__ = ["ThrottledLog", "InputGuard", "LatestInput", "StampedInput", "PairedInput", "call_guarded", "subscribe",
           "advertise", "timer"]


class ThrottledLog:
    """A node's warnings and errors at most once per ``period`` [s] of wall time per kind. The throttle is checked
    here, before rclpy's logger: that one inspects the caller's source file on every call, throttled or not, which
    costs milliseconds on a message path."""

    def __init__(self, node, period=2.0):
        self.logger = node.get_logger()
        self.period = period
        self.last = {}

    def _due(self, kind):
        now = time.monotonic()
        if now - self.last.get(kind, -math.inf) < self.period:
            return False
        self.last[kind] = now
        return True

    def warning(self, kind, text):
        if self._due(kind):
            self.logger.warning(text)

    def error(self, kind, text):
        if self._due(kind):
            self.logger.error(text)


class InputGuard:
    """Counts rejected messages by reason, logs them at a limited rate, checks stamps, and tells the node's
    diagnostics what its inputs look like.

    Stamps: :mod:`humanoid_balance.nodes.stamp_policy`, per input topic, on the node's clock, with the node's
    ``max_stamp_lead`` and ``clock_jump_messages``; a jump of a source's clock it follows is logged.

    Diagnostics: :meth:`overrule` turns an OK into WARN when most recent input was rejected or when the node skipped
    more than loop.starvation.STARVED of its ``main_topic``'s ticks in a diagnostics period (it falls behind its
    source: a starved computer), and any status that does not already say its input is stale into ERROR when the last
    good ``main_topic`` message is older than the node's ``timeout_parameter``.
    """

    def __init__(self, node, main_topic=None, timeout_parameter="input_timeout", log_period=2.0):
        self.node = node
        self.clock = node.get_clock()  # the node's own (ROS time: simulated time under use_sim_time)
        self.log = ThrottledLog(node, log_period)
        self.rejected = Counter()
        self.stamps = StampPolicy(
            node.declare_parameter("max_stamp_lead", 1.0, describe(
                "input stamps further ahead of the node's clock are rejected [s]")).value,
            node.declare_parameter("clock_jump_messages", 10, describe(
                "out-of-line stamps in a row that are a jump of the source's clock, which the node then follows")).value)
        if main_topic is not None and not node.has_parameter(timeout_parameter):
            node.declare_parameter(timeout_parameter, 0.5, describe(f"{main_topic} older than this is stale [s]"))
        self.main_topic, self.timeout_parameter = main_topic, timeout_parameter
        self.clock_jumps = 0
        self._pending = None                 # (StampVerdict, clock [ns]) of the message in hand, until accepted
        self._last_good = None               # node clock [ns] of the last good main_topic message
        self._accepted = 0                   # messages accepted since the last diagnostics
        self._window_reasons = Counter()     # and those rejected, by reason
        self.rate, self.rate_reason, self.window_rejected = 0.0, "", 0  # of the last diagnostics period
        self.ticks = SkippedTicks()          # of main_topic's source
        self.skipped, self.source_ticks = 0.0, 0  # of the last diagnostics period: the fraction skipped, of ticks

    def _now(self):
        return self.clock.now().nanoseconds

    def check_stamp(self, topic, stamp):
        """The time to compute with [s] (the stamp, at most the node's clock: StampVerdict.time), if the stamp is in
        line (StampPolicy); else RejectedMessage. It is adopted when the message is accepted (:meth:`accept`)."""
        clock = self._now()
        verdict = self.stamps.check(topic, stamp_seconds(stamp), clock * 1e-9)
        self._pending = (verdict, clock)
        return verdict.time

    def accept(self, topic):
        self._accepted += 1
        pending, self._pending = self._pending, None
        if pending is not None:
            jump = self.stamps.adopt(pending[0])
            if jump is not None:
                self.clock_jumps += 1
                self.node.get_logger().warning(
                    f"{jump.topic}: the source's clock jumped {'ahead' if jump.ahead else 'back'} to {jump.to:.6f} s "
                    f"(from {jump.since:.6f} s; {jump.run} stamps in a row); following it")
        if topic == self.main_topic:  # the only topic whose age is reported: the clock its stamp was checked at
            self._last_good = self._now() if pending is None else pending[1]
            if pending is not None:
                self.ticks.take(pending[0].time)

    def reject(self, error):
        self._pending = None
        self.rejected[error.reason] += 1
        self._window_reasons[error.reason] += 1
        self.log.warning(error.reason, f"rejected: {error.detail} (kept the last good state)")

    def fault(self, where, error):
        """An unexpected exception in a callback: counted and logged, never allowed to reach the executor."""
        self._pending = None
        self.rejected["internal_error"] += 1
        self._window_reasons["internal_error"] += 1
        self.log.error(where, f"{where}: {type(error).__name__}: {error} (message dropped, last good state kept)")

    @property
    def total(self):
        return sum(self.rejected.values())

    def input_age(self):
        """Seconds since the last good ``main_topic`` message on the node's clock (None before the first)."""
        return None if self._last_good is None else (self._now() - self._last_good) * 1e-9

    def figures(self):
        """Diagnostics values: the total and the count of each reason, the recent rejection rate, the age of the
        last good input; starts a new window for the rate."""
        self.window_rejected = sum(self._window_reasons.values())
        received = self._accepted + self.window_rejected
        self.rate = self.window_rejected / received if received else 0.0
        self.rate_reason = self._window_reasons.most_common(1)[0][0] if self._window_reasons else ""
        self._accepted = 0
        self._window_reasons.clear()
        values = {"rejected messages": self.total, "rejected since last report [%]": 100.0 * self.rate,
                  "clock jumps followed": self.clock_jumps}
        age = self.input_age()
        if self.main_topic is not None:
            self.skipped, self.source_ticks = self.ticks.report()
            values[f"{self.main_topic} ticks skipped since last report [%]"] = 100.0 * self.skipped
            values[f"last good {self.main_topic} [s ago]"] = float("nan") if age is None else age
            # none: nothing publishes it (or a remap is wrong); some, yet no message: QoS, discovery, a stopped source
            values[f"publishers of {self.main_topic}"] = self.node.count_publishers(
                self.node.resolve_topic_name(self.main_topic))
        values.update({rejected_key(reason): count for reason, count in sorted(self.rejected.items())})
        return values

    def overrule(self, level, message):
        """The diagnostics level and message, made truthful about the inputs (see the class); call after
        :meth:`figures`."""
        age = self.input_age()
        timeout = self.node.get_parameter(self.timeout_parameter).value if self.main_topic is not None else None
        if age is not None and timeout is not None and age > timeout and "stale" not in message:
            return "ERROR", f"no good {self.main_topic} for {age:.2f} s (timeout {timeout} s); {message}"
        if self.window_rejected >= MIN_REJECTED and self.rate > 0.5 and level == "OK":
            return "WARN", f"{100 * self.rate:.0f} % of recent input rejected (mostly {self.rate_reason}); {message}"
        if self.source_ticks >= MIN_TICKS and self.skipped > STARVED and level == "OK":
            return "WARN", (f"falling behind: {100 * self.skipped:.0f} % of {self.main_topic}'s ticks skipped (the "
                            f"computer is short of time: see realtime_priority); {message}")
        return level, message


MIN_REJECTED = 10
"""Rejections within one diagnostics period below which a high rejection rate is no warning (a stray message)."""


class LatestInput:
    """The last value an input gave and when it arrived on the node's clock: :meth:`fresh` hands it back until it is
    older than ``timeout`` [s] (an attribute: a node may change it at run time), None before the first or after."""

    __slots__ = ("node", "timeout", "value", "arrival")

    def __init__(self, node, timeout):
        self.node, self.timeout, self.value, self.arrival = node, timeout, None, None

    def set(self, value):
        self.value, self.arrival = value, self.node.get_clock().now().nanoseconds

    def fresh(self):
        if self.value is None or (self.node.get_clock().now().nanoseconds - self.arrival) * 1e-9 > self.timeout:
            return None
        return self.value


class StampedInput(LatestInput):
    """The last few values an input gave, with their stamps [s]: :meth:`at` hands back the newest one not stamped after
    a given time — the sample of the tick another topic's message belongs to, where the next tick's may already have
    arrived (a plant in lockstep steps as soon as the command is out, before every node has handled the tick) — or,
    without one, the oldest kept; None when the newest is older than ``timeout`` (as :meth:`fresh`)."""

    __slots__ = ("samples",)

    def __init__(self, node, timeout, depth=8):
        super().__init__(node, timeout)
        self.samples = collections.deque(maxlen=depth)  # (stamp [s], value), oldest first

    def set_stamped(self, stamp, value):
        self.samples.append((stamp, value))
        self.set(value)

    def at(self, stamp):
        if self.fresh() is None:
            return None
        for sample_stamp, value in reversed(self.samples):
            if sample_stamp <= stamp:
                return value
        return self.samples[0][1]


class PairedInput:
    """The companion of a node's main input: published with it under the same stamp (odom with
    estimated_joint_states, from one state of the state estimator), and read with the main message of its stamp —
    not with whichever arrived last. The last few are kept by stamp (COMPANION_QOS); a main message whose companion
    has not arrived takes the newest one before it, and is counted (:attr:`unpaired`)."""

    __slots__ = ("values", "unpaired")

    def __init__(self, depth=4):
        self.values = collections.deque(maxlen=depth)  # (stamp (sec, nanosec), value), oldest first
        self.unpaired = 0  # main messages read with a companion of another stamp

    def set(self, stamp, value):
        self.values.append(((stamp.sec, stamp.nanosec), value))

    def of(self, stamp):
        """The value stamped ``stamp`` (a builtin_interfaces Time), else the newest not stamped after it (a companion
        stamped ahead is not the state of this one), else the oldest — these counted; None before one."""
        if not self.values:
            return None
        key = (stamp.sec, stamp.nanosec)
        for value_stamp, value in reversed(self.values):
            if value_stamp == key:
                return value
        self.unpaired += 1
        return next((value for value_stamp, value in reversed(self.values) if value_stamp < key), self.values[0][1])


def call_guarded(guard, where, callback, *message, counted=True):
    """Run ``callback``, turning RejectedMessage into a counted rejection and any other exception into a counted
    fault, so that nothing raises into the executor (rclpy's EventsExecutor drops its queue on an exception). A
    callback cut short by shutdown (its publisher's context gone) is no fault."""
    try:
        callback(*message)
        if counted:
            guard.accept(where)
    except RejectedMessage as error:
        guard.reject(error)
    except Exception as error:  # noqa: BLE001 — a defect must not stop the node; it is counted and logged
        if guard.node.context.ok():
            guard.fault(where, error)


def subscribe(node, message_type, topic, callback, qos):
    """A subscription whose callback is guarded by ``node.guard``; none in balance_stack for the topics its cycle
    hands the node (the node's ``hub``: :mod:`humanoid_balance.nodes.composition`)."""
    def guarded(message):
        call_guarded(node.guard, topic, callback, message)

    if node.hub is not None and node.hub.feeds(node, topic):
        return None
    return node.create_subscription(message_type, topic, guarded, qos)


def advertise(node, message_type, topic, qos):
    """A node's output (:class:`~humanoid_balance.nodes.output_topic.OutputTopic`): over DDS while something
    subscribes there; a lifecycle node's only while it is active."""
    create = node.create_lifecycle_publisher if isinstance(node, LifecycleNode) else node.create_publisher
    return OutputTopic(create(message_type, topic, qos))


def timer(node, period, callback, clock=None):
    """A timer whose callback is guarded by ``node.guard`` like a subscription's."""
    def guarded():
        call_guarded(node.guard, f"timer {callback.__name__}", callback, counted=False)
    return node.create_timer(period, guarded, clock=clock)
