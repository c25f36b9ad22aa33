"""What every humanoid_balance node shares: QoS, guarded callbacks that reject bad input (count, rate-limited log,
keep the last good state), /diagnostics and the console entry point with its executor."""
import collections
import gc
import math
import sys
import time
from collections import Counter

import rclpy
import rclpy.executors
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import NameValidationException, ParameterException
from rclpy.executors import ExternalShutdownException
from rclpy.experimental import EventsExecutor
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy

from humanoid_balance.model.errors import ModelError
from humanoid_balance.model.robot_config import config_from_parameters, load_robot_config, robot_config_parameters
from humanoid_balance.nodes import intra_process, shutdown_requested
from humanoid_balance.nodes.messages import RejectedMessage, stamp_seconds
from humanoid_balance.resources import robot_config_file

__all__ = ["SENSOR_QOS", "LATEST_QOS", "CHANGES_QOS", "RELIABLE_QOS", "LEVELS", "LEVEL_NAMES", "EXECUTORS",
           "ThrottledLog", "InputGuard", "LatestInput", "StampedInput", "Diagnostics", "describe", "declare_robot",
           "subscribe", "advertise", "timer", "autostarted", "run", "USER_MISTAKES"]

SENSOR_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
"""Sensor topics in: best effort (CONVENTIONS.md), and only the latest sample: a node that falls behind works on
the newest reading instead of a queue of stale ones."""
LATEST_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
"""The control chain's inputs that come every tick (estimates, odom, ZMP, commands): best effort, the latest sample
only. A lost sample is replaced by the next one a tick later, sooner than a resend; a reliable writer (every output
of the suite) serves a best-effort reader without acknowledgements, which spares each delivery over DDS the
writer's and the reader's bookkeeping of them (a fifth of a delivery's CPU time here)."""
CHANGES_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
"""Inputs published when they change (contact phases): reliable, the latest sample only — a lost change would stand
until the next one."""
RELIABLE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
"""The suite's own outputs, and inputs where every message counts (references, trajectories): reliable."""

LEVELS = {"OK": DiagnosticStatus.OK, "WARN": DiagnosticStatus.WARN, "ERROR": DiagnosticStatus.ERROR,
          "STALE": DiagnosticStatus.STALE}
LEVEL_NAMES = {value: name for name, value in LEVELS.items()}
"""A received DiagnosticStatus.level (bytes in this rclpy) → its name."""

EXECUTORS = {"events": EventsExecutor, "single_threaded": rclpy.executors.SingleThreadedExecutor}
"""The ``executor`` parameter: rclpy's EventsExecutor (its C++ event queue takes and dispatches a message for a
fraction of the SingleThreadedExecutor's cost, which rebuilds a wait set per message), or the classic one."""


def describe(text, read_only=False, **ranges):
    """A ParameterDescriptor with a description (and optional ranges given as descriptors' fields)."""
    return ParameterDescriptor(description=text, read_only=read_only, **ranges)


ROBOT_PARAMETERS = {  # name → what it is (model/robot_config.py); EMPTY_TYPES: their type when the default is empty
    "urdf_file": "URDF of the spanning tree", "loops_file": "loop-closure YAML ('' for a serial robot)",
    "feet": "foot names (topics contact/<foot>/...)", "soles": "sole frames, one per foot",
    "sole_rectangles": "[x_min, x_max, y_min, y_max] per foot in the sole frame [m] ([] = from collision boxes)",
    "busy_limbs": "J-busy limbs following balance/<limb>/trajectory",
    "stance_joints": "joints of the standing configuration", "stance_positions": "their values [rad, m]",
    "base_frame": "root link (REP-105 base_link; '' = the URDF's root)", "imu_frame": "IMU frame ('' = root link)",
    "drive_stiffness": "plant position drives [N/m, N·m/rad] (prismatic, revolute)",
    "drive_damping": "plant position drives [N·s/m, N·m·s/rad] (prismatic, revolute)",
    "impedance_stiffness": "joint impedance of the serial-equivalent outputs [N/m, N·m/rad] (prismatic, revolute); "
                           "loop_closure_mapper maps it onto the actuators",
    "impedance_damping": "joint impedance of the outputs [N·s/m, N·m·s/rad] (prismatic, revolute)",
}
EMPTY_TYPES = {"sole_rectangles": Parameter.Type.DOUBLE_ARRAY, "stance_positions": Parameter.Type.DOUBLE_ARRAY,
               "busy_limbs": Parameter.Type.STRING_ARRAY, "stance_joints": Parameter.Type.STRING_ARRAY}


def declare_robot(node, run_time=()):
    """Declare the robot configuration's parameters (:mod:`humanoid_balance.model.robot_config`; defaults: the
    bundled robot) and return the :class:`RobotConfig` they give. A ``--params-file`` written by ``humanoid-balance
    init`` sets them all; they are read-only but for the ``run_time`` ones, which the node validates and follows.
    Raises ModelFileError naming the parameter that is wrong."""
    defaults = robot_config_parameters(load_robot_config(robot_config_file()))

    def declare(name, text, kind=None):
        default = defaults.get(name)
        if default in (None, []):
            default = kind or EMPTY_TYPES.get(name, Parameter.Type.STRING_ARRAY)
        value = node.declare_parameter(name, default, describe(text, name not in run_time)).value
        return [] if value is None else value

    values = {name: declare(name, text) for name, text in ROBOT_PARAMETERS.items()}
    for foot in values["feet"]:
        values[f"{foot}_joints"] = declare(f"{foot}_joints", "serial-equivalent leg joints, hip to ankle")
    for limb in values["busy_limbs"]:
        values[f"{limb}_joints"] = declare(f"{limb}_joints", "joints of a J-busy limb")
        values[f"{limb}_end_frame"] = declare(f"{limb}_end_frame", "end frame of a J-busy limb", Parameter.Type.STRING)
        values[f"{limb}_swing"] = declare(f"{limb}_swing", "the demo's swing: offsets at mid-swing [rad]",
                                          Parameter.Type.DOUBLE_ARRAY)
    return config_from_parameters(values.get, f"{node.get_name()} parameters")


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


class _StampTrack:
    """One input topic's stamps: the last one accepted, and the run of out-of-line ones since."""

    __slots__ = ("last", "offset", "run", "run_kind", "run_last")

    def __init__(self):
        self.last = None        # last accepted stamp [s]
        self.offset = 0.0       # accepted lead of the source's clock over the node's [s] (a followed jump ahead)
        self.run, self.run_kind, self.run_last = 0, None, None

    def adopt(self, seconds, jump_offset=None):
        """The stamp of a message the node accepted; with ``jump_offset``, that of a followed jump."""
        self.last, self.run = seconds, 0
        if jump_offset is not None:
            self.offset = jump_offset


class InputGuard:
    """Counts rejected messages by reason, logs them at a limited rate, checks stamps, and tells the node's
    diagnostics what its inputs look like.

    Stamp policy (every node, per input topic):
    - only the stamp of a message the node accepted counts: a message rejected for its content never moves the
      topic's clock;
    - a stamp before the last accepted one is rejected (``stamp_backwards``);
    - a stamp more than ``max_stamp_lead`` [s] ahead of the node's clock is rejected (``stamp_future``) and not
      adopted, so one far-future stamp cannot make the valid messages after it look old (the check waits for
      the clock: a node on sim time before its first /clock);
    - ``clock_jump_messages`` out-of-line stamps in a row, of one kind and going forward among themselves, are a
      jump of the source's clock (a restarted driver or simulator, a clock step): reported once and followed.

    Diagnostics: :meth:`overrule` turns an OK into WARN when most recent input was rejected, and any status that
    does not already say its input is stale into ERROR when the last good ``main_topic`` message is older than the
    node's ``timeout_parameter``.
    """

    def __init__(self, node, main_topic=None, timeout_parameter="input_timeout", log_period=2.0):
        self.node = node
        self.clock = node.get_clock()  # the node's own (ROS time: simulated time under use_sim_time)
        self.log = ThrottledLog(node, log_period)
        self.rejected = Counter()
        self.max_stamp_lead = node.declare_parameter(
            "max_stamp_lead", 1.0, describe("input stamps further ahead of the node's clock are rejected [s]")).value
        self.clock_jump_messages = node.declare_parameter(
            "clock_jump_messages", 10, describe("out-of-line stamps in a row that are a jump of the source's "
                                                "clock, which the node then follows")).value
        if main_topic is not None and not node.has_parameter(timeout_parameter):
            node.declare_parameter(timeout_parameter, 0.5, describe(f"{main_topic} older than this is stale [s]"))
        self.main_topic, self.timeout_parameter = main_topic, timeout_parameter
        self.clock_jumps = 0
        self._stamps = {}
        self._pending = None                 # (track, stamp [s], followed jump or None, clock [ns]) until accepted
        self._last_good = None               # node clock [ns] of the last good main_topic message
        self._accepted = 0                   # messages accepted since the last diagnostics
        self._window_reasons = Counter()     # and those rejected, by reason
        self.rate, self.rate_reason, self.window_rejected = 0.0, "", 0  # of the last diagnostics period

    def _now(self):
        return self.clock.now().nanoseconds

    def check_stamp(self, topic, stamp):
        """The stamp in seconds, if it is in line (see the class); else RejectedMessage. It is adopted when the
        message is accepted (:meth:`accept`)."""
        seconds = stamp_seconds(stamp)
        track = self._stamps.get(topic)
        if track is None:
            track = self._stamps[topic] = _StampTrack()
        clock = self._now()
        now = clock * 1e-9
        if now > 0.0 and seconds - now - track.offset > self.max_stamp_lead:
            kind = "stamp_future"
        elif track.last is not None and seconds < track.last:
            kind = "stamp_backwards"
        else:
            self._pending = (track, seconds, None, clock)
            return seconds
        if track.run_kind == kind and track.run_last is not None and seconds > track.run_last:
            track.run += 1
        else:
            track.run, track.run_kind = 1, kind
        track.run_last = seconds
        if track.run >= self.clock_jump_messages:
            self._pending = (track, seconds, (topic, kind, now), clock)
            return seconds
        if kind == "stamp_future":
            raise RejectedMessage(kind, f"{topic}: stamp {seconds:.6f} s is {seconds - now:.3f} s ahead of the "
                                        f"node's clock (max_stamp_lead {self.max_stamp_lead} s)")
        raise RejectedMessage(kind, f"{topic}: stamp {seconds:.6f} s is before {track.last:.6f} s")

    def accept(self, topic):
        self._accepted += 1
        pending, self._pending = self._pending, None
        if pending is not None:
            self._adopt(*pending[:3])
        if topic == self.main_topic:  # the only topic whose age is reported: the clock its stamp was checked at
            self._last_good = self._now() if pending is None else pending[3]

    def _adopt(self, track, seconds, jump):
        if jump is None:
            track.adopt(seconds)
            return
        topic, kind, now = jump
        self.clock_jumps += 1
        self.node.get_logger().warning(
            f"{topic}: the source's clock jumped {'ahead' if kind == 'stamp_future' else 'back'} to {seconds:.6f} s "
            f"(from {track.last if track.last is not None else now:.6f} s; {track.run} stamps in a row); following "
            "it")
        track.adopt(seconds, seconds - now if kind == "stamp_future" else None)

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
            values[f"last good {self.main_topic} [s ago]"] = float("nan") if age is None else age
            # none: nothing publishes it (or a remap is wrong); some, yet no message: QoS, discovery, a stopped source
            values[f"publishers of {self.main_topic}"] = self.node.count_publishers(
                self.node.resolve_topic_name(self.main_topic))
        values.update({f"rejected: {reason}": count for reason, count in sorted(self.rejected.items())})
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


def _call_guarded(guard, where, callback, *message, counted=True):
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
    """A subscription whose callback is guarded by ``node.guard``; in balance_stack, in-process for the topics
    another node of the process publishes (:mod:`humanoid_balance.nodes.intra_process`)."""
    def guarded(message):
        _call_guarded(node.guard, topic, callback, message)

    hub = intra_process.current()
    if hub is None:
        return node.create_subscription(message_type, topic, guarded, qos)
    return hub.subscribe(node, message_type, topic, guarded, qos)


def advertise(node, message_type, topic, qos):
    """A node's output (:class:`~humanoid_balance.nodes.intra_process.OutputTopic`): over DDS while something
    subscribes there, and in balance_stack to the process's other nodes as the message itself; a lifecycle node's
    only while it is active."""
    create = node.create_lifecycle_publisher if isinstance(node, LifecycleNode) else node.create_publisher
    dds = create(message_type, topic, qos)
    hub = intra_process.current()
    return intra_process.OutputTopic(dds) if hub is None else hub.output(node, dds)


def timer(node, period, callback, clock=None):
    """A timer whose callback is guarded by ``node.guard`` like a subscription's."""
    def guarded():
        _call_guarded(node.guard, f"timer {callback.__name__}", callback, counted=False)
    return node.create_timer(period, guarded, clock=clock)


class Diagnostics:
    """Publishes one DiagnosticStatus per call on /diagnostics, named '<node>: <what>'."""

    def __init__(self, node, what):
        self.node = node
        self.name = f"{node.get_name()}: {what}"
        self.publisher = node.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)

    def publish(self, level, message, values):
        """Publish a status; the node's InputGuard (``node.guard``) overrules an OK its inputs belie."""
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


def run(node_factories, name, args=None):
    """Console entry point: build the node (or, given a list of factories, the nodes, composed in one process on one
    executor, their topics between them in-process: :mod:`humanoid_balance.nodes.intra_process`) and spin until
    Ctrl-C or shutdown; exit 0.

    The executor is the first node's ``executor`` parameter (:data:`EXECUTORS`). A robot model, file or parameter
    the node cannot use (:data:`USER_MISTAKES` while building it) ends it with a one-line error naming the problem
    and exit code 1, not a traceback. Shutdown at any point of start-up (a signal noted by the entry point before
    ``rclpy.init``; after it, rclpy's handler invalidates the context, so whatever the node was creating fails)
    ends it with exit code 0. A message that rclpy fails to take or convert (RuntimeError out of the executor) does
    not kill the node: it is logged at a limited rate and counted as ``undecodable`` in the rejected inputs.
    """
    factories = node_factories if isinstance(node_factories, (list, tuple)) else [node_factories]
    nodes, executor = [], None
    try:
        rclpy.init(args=args)
        if shutdown_requested():  # a signal arrived before rclpy's handler was installed
            return 0
        hub = intra_process.start() if len(factories) > 1 else None
        try:
            for factory in factories:
                nodes.append(factory())
            kind = nodes[0].declare_parameter(
                "executor", "events", describe(f"rclpy executor: {' | '.join(EXECUTORS)}", True)).value
            if kind not in EXECUTORS:
                raise ValueError(f"parameter 'executor': '{kind}' is not one of {', '.join(EXECUTORS)}")
        except USER_MISTAKES as error:
            if not rclpy.ok():
                return 0
            print(f"{name}: error: {error}", file=sys.stderr)
            return 1
        if not rclpy.ok():
            return 0
        gc.freeze()  # what start-up built (models, data, messages) stays out of every garbage collection
        executor = EXECUTORS[kind]()
        for node in nodes:
            executor.add_node(node)
        while rclpy.ok():
            try:
                executor.spin_once(timeout_sec=0.5)  # (the EventsExecutor's own spin() busy-waits in this rclpy)
                if hub is not None:
                    hub.drain()
            except RuntimeError as error:
                if not rclpy.ok():
                    break
                for node in nodes:
                    node.guard.rejected["undecodable"] += 1
                nodes[0].guard.log.error("undecodable", f"a message could not be taken or converted: {error}")
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok():
            raise  # a defect, not a shutdown: keep its traceback
    finally:
        if executor is not None:  # stopped (the EventsExecutor's timers thread too) before the nodes it holds
            executor.shutdown()   # go: entities destroyed under it can crash the process (rclpy#1644)
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
