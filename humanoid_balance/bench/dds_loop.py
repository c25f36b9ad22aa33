"""Experiment 7 of issue 9: the closed loop over DDS, every node in its own process.

    mujoco_sim ─joint_states─> state_estimator ─estimated_joint_states, odom─> contact_estimator ─zmp, contacts─┐
         ^                                     └──────────────────────────> centroidal_balancer <─────────────┘
         └──actuator_commands── loop_closure_mapper <──balance/joint_command──┘

The plant runs free in real time at the commanded rate (no lockstep, no /clock). A probe in this process subscribes
to actuator_commands beside the plant, and to actuator_states, which the mapper publishes right after each command
with the same values and the stamp of the joint_states the command was computed from (the estimator, balancer and
mapper each copy their input's stamp). Pairing the two by value gives each command's end-to-end latency; the probe
also keeps the stamps of joint_states, to leave out commands that no plant tick led to (the balancer's hold when its
inputs go stale is stamped with its own clock).
"""
import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import NamedTuple

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from humanoid_balance.bench.closed_loop import FALL_DROP
from humanoid_balance.bench.results import Result
from humanoid_balance.nodes.common import RELIABLE_QOS, SENSOR_QOS
from humanoid_balance.resources import config_file, executable

__all__ = ["NOTE", "run", "measure", "rows", "LoopRun"]

NOTE = ("7 DDS closed loop: the plant (real time, free-running at the commanded rate) and the four nodes each run in "
        "their own process, and the benchmark's process subscribes beside the plant; a command counts when it carries "
        "the stamp of a plant joint_states, and its latency is its arrival at the benchmark's DDS reader (no "
        "executor's queueing counted) minus that stamp, both on the system clock. The balancer steps on each "
        "estimated_joint_states with the latest ZMP and contacts, so contact_estimator loads the machine but is off "
        "the timed path.")
EXPERIMENT = "7 DDS closed loop"
PAPER = "Kangaroo: estimator at 1 kHz, ≈ 0.38 ms/update (C++)"
RATES = (500, 1000)                                      # commanded plant rates [Hz]
SECONDS, WARM_UP = 10.0, 2.0                             # measurement and warm-up per rate [s]
SMOKE_RATE, SMOKE_SECONDS, SMOKE_WARM_UP = 500, 3.0, 1.0
START_TIMEOUT = 90.0                                     # for the nodes to come up, then for the first command [s]
DRAIN = 1.0                                              # spun after the window for the last commands to arrive [s]
MIN_RATE_FRACTION = 0.95                                 # achieved / commanded rate that counts as sustained
SUITE = ("state_estimator", "contact_estimator", "centroidal_balancer", "loop_closure_mapper")
PLANT = "mujoco_sim"


class LoopRun(NamedTuple):
    """What one run of the loop at one commanded rate measured."""

    rate: float              # commanded plant rate [Hz]
    seconds: float           # measurement window [s]
    commands: int            # actuator commands of the window that a plant tick led to
    other_commands: int      # the window's other actuator commands (holds, or not paired with a stamp)
    latencies: np.ndarray    # end-to-end latency of each of the ``commands`` [s]
    plant_ticks: int         # plant ticks between its first and last diagnostics in the window
    plant_seconds: float     # wall time those ticks spanned [s]
    answered_ticks: int      # those ticks whose joint_states led to a command
    start_height: float      # base height at the plant's first diagnostics [m]
    end_height: float        # base height at its last diagnostics in the window [m]


def ros_arguments(name, rate, directory):
    """--ros-args of one node: its parameter file of config/, then this experiment's overrides."""
    overrides = {
        PLANT: {"real_time": "true", "lockstep": "false", "publish_clock": "false", "publish_period": 1.0 / rate},
        "state_estimator": {"offsets_file": Path(directory) / "offsets.yaml"},  # no calibration from ~/.ros
        "contact_estimator": {"mode": "actuator_forces", "sample_rate": float(rate)},
        "centroidal_balancer": {"mode": "kinematic"},
        "loop_closure_mapper": {"command_interface": "position"},
    }[name]
    arguments = ["--params-file", str(config_file(f"{name}.yaml"))]
    for key, value in overrides.items():
        arguments += ["-p", f"{key}:={value}"]
    return arguments


class NodeProcess:
    """One node's console script in its own process, its stdout and stderr written to ``<directory>/<name>.log``."""

    def __init__(self, name, ros_args, environment, directory):
        self.name = name
        self.log = Path(directory) / f"{name}.log"
        with open(self.log, "w") as log:
            self.process = subprocess.Popen([str(executable(name)), "--ros-args", *ros_args], stdout=log,
                                            stderr=subprocess.STDOUT, env=environment)

    def tail(self, characters=1500):
        return self.log.read_text(errors="replace")[-characters:]

    def check(self, during):
        """Raise RuntimeError, naming the node and ending with its output, if it has exited."""
        if self.process.poll() is not None:
            raise RuntimeError(f"{self.name} exited with code {self.process.returncode} {during}; its output ends:\n"
                               f"{self.tail()}")


def stop(nodes, timeout=10.0):
    """SIGINT every node (as Ctrl-C), then SIGKILL those still running after ``timeout`` [s]."""
    for node in nodes:
        if node.process.poll() is None:
            node.process.send_signal(signal.SIGINT)
    deadline = time.monotonic() + timeout
    for node in nodes:
        try:
            node.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            node.process.kill()
            node.process.wait()


@contextlib.contextmanager
def environment_variables(variables):
    """``os.environ`` with ``variables`` set, restored on exit."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def stamp_nanoseconds(stamp):
    return stamp.sec * 1_000_000_000 + stamp.nanosec


class CommandProbe:
    """Records when each actuator command reaches this process's DDS reader and the stamp it was computed from."""

    def __init__(self, ros_environment):
        self.context = rclpy.Context()
        with environment_variables(ros_environment):  # rcl reads the domain and discovery range at init
            rclpy.init(context=self.context)
        self.node = Node("dds_loop_probe", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.arrivals = {}      # command values → arrival times still waiting for their stamp [ns]
        self.stamps = {}        # command values → stamps still waiting for their command [ns]
        self.received = []      # arrival time of every command [ns]
        self.matched = []       # (stamp, arrival time) of every paired command [ns]
        self.ticks = set()      # stamps of the plant's joint_states [ns]
        self.plant = []         # (stamp [ns], simulated time [s], base height [m]) of each plant diagnostics
        self.reporting = set()  # nodes that have published diagnostics
        reliable = QoSProfile(depth=1000, reliability=RELIABLE_QOS.reliability)  # the nodes' QoS, deep enough
        sensor = QoSProfile(depth=1000, reliability=SENSOR_QOS.reliability)      # never to drop a message here
        self.node.create_subscription(Float64MultiArray, "actuator_commands", self.on_command, reliable)
        self.node.create_subscription(JointState, "actuator_states", self.on_state, reliable)
        self.node.create_subscription(JointState, "joint_states",
                                      lambda message: self.ticks.add(stamp_nanoseconds(message.header.stamp)), sensor)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self.on_diagnostics, RELIABLE_QOS)

    def on_command(self, message, info):
        arrival = info["received_timestamp"]
        self.received.append(arrival)
        stamp = self.pair(tuple(message.data), self.arrivals, self.stamps, arrival)
        if stamp is not None:
            self.matched.append((stamp, arrival))

    def on_state(self, message):
        stamp = stamp_nanoseconds(message.header.stamp)
        arrival = self.pair(tuple(message.position), self.stamps, self.arrivals, stamp)
        if arrival is not None:
            self.matched.append((stamp, arrival))

    @staticmethod
    def pair(values, own, other, value):
        """The oldest partner waiting in ``other`` for these command values, or None after queueing ``value``."""
        partners = other.get(values)
        if not partners:
            own.setdefault(values, deque()).append(value)
            return None
        partner = partners.popleft()
        if not partners:
            del other[values]
        return partner

    def on_diagnostics(self, array):
        for status in array.status:
            node = status.name.split(":")[0]
            self.reporting.add(node)
            if node == PLANT:
                values = {pair.key: pair.value for pair in status.values}
                self.plant.append((stamp_nanoseconds(array.header.stamp), float(values["simulated time [s]"]),
                                   float(values["base height [m]"])))

    def spin(self, seconds, nodes, during, until=None):
        """Spin for ``seconds`` [s] or until ``until()`` holds; raise RuntimeError if a node exits meanwhile."""
        deadline = time.monotonic() + seconds
        next_check = 0.0
        while time.monotonic() < deadline and not (until and until()):
            self.executor.spin_once(timeout_sec=0.05)
            if time.monotonic() >= next_check:
                for node in nodes:
                    node.check(during)
                next_check = time.monotonic() + 0.2
        return bool(until and until())

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def wait_for(probe, nodes, condition, what):
    """Spin until ``condition()``; on timeout, raise RuntimeError naming ``what`` with the given nodes' output."""
    if not probe.spin(START_TIMEOUT, nodes, f"while {what}", condition):
        tails = "\n".join(f"--- {node.name}:\n{node.tail(500)}" for node in nodes)
        raise RuntimeError(f"timed out after {START_TIMEOUT:.0f} s {what}; the nodes' output ends:\n{tails}")


def measure(rate, seconds, warm_up):
    """Start the five nodes with the plant at ``rate`` [Hz], warm up, record ``seconds`` [s] and stop them."""
    ros_environment = {"ROS_DOMAIN_ID": str(1 + os.getpid() % 100),  # 1..100: 0 is the interactive default
                       "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    nodes = []
    with tempfile.TemporaryDirectory(prefix="dds_loop_") as directory:
        probe = CommandProbe(ros_environment)
        try:
            environment = {**os.environ, **ros_environment}
            nodes += [NodeProcess(name, ros_arguments(name, rate, directory), environment, directory)
                      for name in SUITE]
            wait_for(probe, nodes, lambda: set(SUITE) <= probe.reporting, "waiting for the suite's diagnostics")
            nodes.append(NodeProcess(PLANT, ros_arguments(PLANT, rate, directory), environment, directory))
            wait_for(probe, nodes, lambda: probe.matched, "waiting for the first actuator command")
            probe.spin(warm_up, nodes, "during the warm-up")
            start = time.time_ns()
            probe.spin(seconds, nodes, "during the measurement")
            end = time.time_ns()
            probe.spin(DRAIN, nodes, "after the measurement")
        finally:
            probe.close()
            stop(nodes)
    from_ticks = [(stamp, arrival) for stamp, arrival in probe.matched
                  if start <= arrival < end and stamp in probe.ticks]
    other_commands = sum(start <= arrival < end for arrival in probe.received) - len(from_ticks)
    latencies = np.array([arrival - stamp for stamp, arrival in from_ticks]) * 1e-9
    diagnostics = [sample for sample in probe.plant if start <= sample[0] < end]
    if len(diagnostics) < 2:
        raise RuntimeError(f"{PLANT} published {len(diagnostics)} diagnostics in {seconds} s instead of one per second")
    (first, simulated_first, _), (last, simulated_last, end_height) = diagnostics[0], diagnostics[-1]
    answered = {stamp for stamp, _ in probe.matched if first < stamp <= last and stamp in probe.ticks}
    return LoopRun(rate, seconds, len(from_ticks), other_commands, latencies,
                   round((simulated_last - simulated_first) * rate), (last - first) * 1e-9, len(answered),
                   probe.plant[0][2], end_height)


def rows(loop):
    """The table rows of one rate: achieved command rate, latency p50 and p99, plant ticks left unanswered and
    whether the robot still stands."""
    period_ms = 1e3 / loop.rate
    achieved = loop.commands / loop.seconds
    p50, p99 = np.percentile(loop.latencies, (50, 99)) * 1e3 if loop.latencies.size else (float("nan"),) * 2
    at = f"at {loop.rate:.0f} Hz"
    return [
        Result(EXPERIMENT, f"actuator command rate at the plant {at} [Hz]", PAPER,
               f"≥ {MIN_RATE_FRACTION * loop.rate:.0f} Hz ({MIN_RATE_FRACTION:.0%} of {loop.rate:.0f})",
               f"{achieved:.0f} Hz ({loop.commands} commands from plant ticks, {loop.other_commands} others, in "
               f"{loop.seconds:.0f} s)",
               achieved >= MIN_RATE_FRACTION * loop.rate),
        Result(EXPERIMENT, f"end-to-end latency p50 {at} [ms]", "—", "—", f"{p50:.2f} ms", None),
        Result(EXPERIMENT, f"end-to-end latency p99 {at} [ms]", "—", f"≤ {period_ms:g} ms (one period)",
               f"{p99:.2f} ms (n = {loop.latencies.size})", bool(p99 <= period_ms)),
        Result(EXPERIMENT, f"plant ticks that got no command {at} [%]", "—", "—",
               f"{100.0 * (1.0 - loop.answered_ticks / loop.plant_ticks):.1f} % of {loop.plant_ticks} (plant at "
               f"{loop.plant_ticks / loop.plant_seconds:.0f} Hz)", None),
        Result(EXPERIMENT, f"robot standing at the end of the measurement {at}", "—",
               f"base within {FALL_DROP} m of its start", f"base at {loop.end_height:.2f} m, started at "
               f"{loop.start_height:.2f} m", loop.start_height - loop.end_height <= FALL_DROP),
    ]


def run(smoke=False):
    """The experiment's rows; ``smoke``: one short run at 500 Hz (CI)."""
    if smoke:
        return rows(measure(SMOKE_RATE, SMOKE_SECONDS, SMOKE_WARM_UP))
    return [row for rate in RATES for row in rows(measure(rate, SECONDS, WARM_UP))]
