"""The running chain as the fault tests see it (test_fuzz.py, test_faults.py): every output of the suite's nodes
checked as it arrives, and the chain brought up with every main output flowing and the robot standing."""
import array
import time

import numpy as np
from geometry_msgs.msg import PointStamped
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from humanoid_balance.bench.chain import Chain
from humanoid_balance.bench.closed_loop import FALL_DROP
from humanoid_balance.bench.dds_loop import PLANT, SUITE
from humanoid_balance.model import load_robot
from humanoid_balance.model.robot_config import load_robot_config
from humanoid_balance.recording.recorder import message_class
from humanoid_balance.resources import DEFAULT_ROBOT, robot_config_file

RATE = 100.0            # plant rate [Hz]: free-running, this 2-core machine sustains it (test_free_running)
SETTLE = 2.0            # after a fault, before judging recovery [s]
WINDOW = 0.5            # averaging window of the commands before and after a fault [s]
COMMAND_TOLERANCE = 5e-3  # actuator commands back to their values before the fault [m, rad] (a restarted
                          # state_estimator anchors its floating base anew: a few mm, mrad from where it was)
HEIGHT_TOLERANCE = 0.01   # base height back to its value before the fault [m]
MAIN_OUTPUT = {"mujoco_sim": "joint_states", "state_estimator": "estimated_joint_states", "contact_estimator": "zmp",
               "centroidal_balancer": "balance/joint_command", "loop_closure_mapper": "actuator_states"}
"""Each node's stamped output, one per tick it handles."""
INFRASTRUCTURE = ("/rosout", "/parameter_events", "/diagnostics", "/clock", "/tf", "/tf_static")
ALL_EVENTS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT)  # matches best-effort writers too


def non_finite_fields(message, path=""):
    """Paths of the float fields of ``message`` (nested, sequences included) that are NaN or Inf."""
    bad = []
    for field in message.get_fields_and_field_types():
        value = getattr(message, field)
        if hasattr(value, "get_fields_and_field_types"):
            bad += non_finite_fields(value, f"{path}{field}.")
        elif isinstance(value, float):
            if not np.isfinite(value):
                bad.append(path + field)
        elif isinstance(value, (list, tuple, array.array, np.ndarray)) and len(value):
            if hasattr(value[0], "get_fields_and_field_types"):
                for k, item in enumerate(value):
                    bad += non_finite_fields(item, f"{path}{field}[{k}].")
            elif isinstance(value[0], (float, np.floating)) and not np.isfinite(np.asarray(value, float)).all():
                bad.append(path + field)
    return bad


class Watch:
    """Every output of the suite's nodes, checked as it arrives, and the latest of each; the recent ones of the main
    outputs."""

    def __init__(self, chain, robot):
        self.chain = chain
        self.violations = []
        self.own = set()  # GIDs of the test's own publishers of bad messages (this node hears them too)
        self.arrivals = {topic: [] for topic in (*MAIN_OUTPUT.values(), "actuator_commands")}
        self.stamps = {topic: [] for topic in MAIN_OUTPUT.values()}  # topic → header stamps [s, the nodes' clock]
        self.latest = {}
        actuator_lower, actuator_upper = robot.position_limits(robot.actuated_names)
        output_lower, output_upper = robot.position_limits(robot.output_names)
        self.limits = {"/actuator_commands": (actuator_lower, actuator_upper),
                       "/balance/joint_command": (output_lower, output_upper)}
        topics = {}
        for name in (*SUITE, PLANT):
            for topic, types in chain.node.get_publisher_names_and_types_by_node(name, "/"):
                if topic not in INFRASTRUCTURE and not topic.startswith("/sim/"):
                    topics[topic] = types[0]
        self.topics = topics
        for topic, type_name in topics.items():
            chain.node.create_subscription(
                message_class(type_name), topic,
                lambda message, info, topic=topic: self.on_output(topic, message, info["publisher_gid"]), ALL_EVENTS)

    def ignore_own(self, topics):
        """From now on, drop what this process publishes on ``topics`` (found in the graph by node name)."""
        for topic in topics:
            publishers = self.chain.node.get_publishers_info_by_topic(f"/{topic.lstrip('/')}")
            self.own |= {bytes(info.endpoint_gid) for info in publishers
                         if info.node_name == self.chain.node.get_name()}

    def on_output(self, topic, message, publisher):
        if publisher is not None and bytes(publisher["data"]) in self.own:
            return
        bad = non_finite_fields(message)
        if bad:
            self.violations.append(f"{topic}: {bad} not finite")
        values = None
        if isinstance(message, JointState):
            values = np.array(message.position)
        elif isinstance(message, Float64MultiArray):
            values = np.array(message.data)
        elif isinstance(message, PointStamped):
            values = np.array([message.point.x, message.point.y])
        if topic in self.limits and values is not None:
            lower, upper = self.limits[topic]
            outside = (values < lower - 1e-9) | (values > upper + 1e-9)
            if outside.any():
                self.violations.append(f"{topic}: {values[outside]} outside [{lower[outside]}, {upper[outside]}]")
        name = topic.lstrip("/")
        self.latest[name] = message
        if name in self.arrivals and values is not None:
            self.arrivals[name].append((time.monotonic(), values))
            if name in self.stamps:
                self.stamps[name].append(message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec)

    def mean(self, topic, since):
        values = [v for arrival, v in self.arrivals[topic] if arrival >= since]
        assert values, f"no {topic} since {time.monotonic() - since:.1f} s"
        return np.mean(values, axis=0)

    def rate(self, topic, start, end):
        """Messages per second of ``topic`` between two wall times."""
        return sum(start <= arrival < end for arrival, _ in self.arrivals[topic]) / (end - start)

    def baseline(self):
        """(mean actuator commands [m, rad], base height [m]) over the last WINDOW seconds."""
        start = time.monotonic()
        self.chain.spin(WINDOW)
        return self.mean("actuator_commands", start), self.chain.base_height


def running_chain(lockstep, restartable=False):
    """The chain, with every main output flowing and the robot standing, watched; ``restartable``: see Chain."""
    config = load_robot_config(robot_config_file(DEFAULT_ROBOT))
    with Chain(RATE, lockstep=lockstep, restartable=restartable) as running:
        running.robot_model = load_robot(config.urdf_file, config.loops)
        running.watch = Watch(running, running.robot_model)
        running.wait(lambda: all(running.watch.latest.get(topic) for topic in MAIN_OUTPUT.values()),
                     "waiting for every main output")
        running.spin(SETTLE)
        assert running.base_height > running.heights[0][1] - FALL_DROP, (
            f"the chain let the robot fall before any fault: base at {running.base_height:.3f} m "
            f"({ {name: status for name, status in running.status.items()} })")
        yield running


def assert_standing_as_before(chain, before, what, commands_kept=True):
    """The chain and the robot as they were ``before`` (a Watch.baseline) after ``what`` — the commands too, unless
    not ``commands_kept``; the baseline now."""
    commands, height = chain.watch.baseline()
    assert abs(chain.base_height - before[1]) < HEIGHT_TOLERANCE, \
        f"base at {chain.base_height:.3f} m after {what}, {before[1]:.3f} m before"
    error = np.abs(commands - before[0]).max()
    assert error < COMMAND_TOLERANCE or not commands_kept, \
        f"actuator commands {error:.2e} from their values before {what}"
    assert not chain.watch.violations, chain.watch.violations[:5]
    assert not chain.exited(), {name: chain.processes[name].tail() for name in chain.exited()}
    return commands, height
