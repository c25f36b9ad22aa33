"""Experiment 7: the closed loop over DDS with a free-running plant, as on a robot (issue 16).

    mujoco_sim ─joint_states, imu─> state_estimator ─estimated_joint_states, odom─> contact_estimator ─zmp, phases─┐
         ^                                          └───────────────────────────> centroidal_balancer <──────────┘
         └──actuator_commands── loop_closure_mapper <──balance/joint_command──┘

Two layouts: ``separate`` (each node its own process) and ``composed`` (the four nodes in one ``balance_stack``
process); the plant is always a process of its own, free-running against the wall clock at the commanded rate (no
lockstep, no /clock). A lateral push of 6 N·s lands in the middle of the measurement window. The benchmark's
process subscribes to actuator_states, which the mapper publishes with each command and the stamp of the
joint_states that command was computed from: each command's end-to-end latency is its arrival at the benchmark's
DDS reader minus that stamp, both on the system clock. Each process's CPU time over the window, per command, is
set beside rclpy's own floor measured in the same run: a JointState ping-pong with an echo process, and the ring — the
loop's topology with no computation: this process sends a JointState at the commanded rate through one echo process
per node of the suite and back, and times it the same way; and what waiting costs the work that follows it, on this
machine: the same JointState's serialization, timed back to back and right after a sleep of one 500 Hz tick.
"""
import contextlib
import os
import struct
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from humanoid_balance.bench.closed_loop import FALL_DROP, robot_config
from humanoid_balance.bench.processes import NodeProcess, cpu_seconds, die_with_parent, stop, stop_processes
from humanoid_balance.bench.results import Result
from humanoid_balance.deployment import BALANCE_NODES, PLANT, mode_parameters, suite_parameters, write_parameter_file
from humanoid_balance.nodes.diagnostics import LEVEL_NAMES
from humanoid_balance.nodes.mujoco_sim import PlantFigures
from humanoid_balance.nodes.qos import RELIABLE_QOS
from humanoid_balance.resources import DEFAULT_ROBOT, robot_config_file

__all__ = ["NOTE", "ROBOT", "run", "measure", "ping_pong", "ring", "rows", "ring_row", "LoopRun", "LAYOUTS"]

NOTE = ("7 DDS closed loop: the plant runs free against the wall clock at the commanded rate in its own process; the "
        "four nodes run in their own processes (separate) or together in balance_stack (composed). A 6 N·s lateral "
        "push lands mid-window. A command's latency is its actuator_states' arrival at the benchmark's DDS reader "
        "minus the stamp of the plant joint_states it was computed from; CPU per command is each process's CPU time "
        "over the window divided by the commands; the rclpy floor is a JointState round trip between two processes, "
        "measured in the same run, and the ring: a 30-joint JointState sent at the commanded rate from the benchmark's "
        "process through four echo processes (one per node) and back, no computation, timed as the commands are; and "
        "what a wait costs the work after it: the CPU time of serializing that JointState back to back and right "
        "after a 2 ms sleep, as each process of the separate layout sleeps between two messages.")
EXPERIMENT = "7 DDS closed loop"
ROBOT = DEFAULT_ROBOT
PAPER = "Kangaroo: estimator at 1 kHz, ≈ 0.38 ms/update (C++)"
SUITE = BALANCE_NODES
LAYOUTS = {"separate": SUITE, "composed": ("balance_stack",)}
RUNS = (("separate", 500), ("separate", 1000), ("composed", 500), ("composed", 1000))
SECONDS, WARM_UP = 8.0, 2.0                              # measurement and warm-up per run [s]
SMOKE_LAYOUT, SMOKE_RATE, SMOKE_SECONDS, SMOKE_WARM_UP = "separate", 500, 3.0, 1.0
PUSH_FORCE, PUSH_DURATION = 60.0, 0.1                    # lateral push at the pelvis: 6 N·s [N, s]
START_TIMEOUT = 90.0                                     # for the nodes to come up, then for the first command [s]
DRAIN = 1.0                                              # spun after the window for the last commands to arrive [s]
MIN_RATE_FRACTION = 0.95                                 # achieved / commanded rate that counts as sustained
LATENCY_TARGET = {500: 2.0, 1000: 1.0}                   # end-to-end p99 targets [ms]
PING_PONGS = 500
RING_RATES, RING_SECONDS, RING_WARM_UP = (500, 1000), 8.0, 2.0  # the ring's runs [Hz], window and warm-up [s]
RING_JOINTS = 30                                         # the JointState's size, about a humanoid's [joints]
WAKE_UP_SAMPLES, WAKE_UP_PAUSE = 500, 2e-3               # serializations timed each way; the wait before one [s]


class LoopRun(NamedTuple):
    """What one run of the loop at one commanded rate and layout measured."""

    layout: str              # "separate" | "composed"
    rate: float              # commanded plant rate [Hz]
    seconds: float           # measurement window [s]
    latencies: np.ndarray    # end-to-end latency of each command of the window [s]
    plant_rate: float        # the plant's tick rate over the window (median of its diagnostics) [Hz]
    real_time_factor: float  # simulated / wall time over the window
    start_height: float      # base height at the plant's first diagnostics of the window [m]
    end_height: float        # base height at its last diagnostics of the window [m]
    cpu: dict                # process → CPU time over the window [s]
    heights: list            # (simulated time [s], base height [m]) of every plant diagnostics, warm-up included
    warnings: dict           # node → the last non-OK diagnostics message of the window ('' if none)


def overrides(rate, directory, mode="kinematic", lockstep=False, parameters=None):
    """This experiment's parameters on top of config/, each scoped to its node (balance_stack reads them all);
    ``mode`` momentum runs the balancer on the plant's joint impedance (the mapper's per-actuator gains);
    ``lockstep``: the plant waits for each tick's command instead of running free, and the nodes run on its
    /clock; ``parameters``: node → {name: value} set on top of these."""
    profile = mode_parameters(mode)
    table = {PLANT: {"real_time": not lockstep, "lockstep": lockstep, "publish_clock": lockstep,
                     "lockstep_timeout": 5.0 / rate,  # a tick whose command was lost waits five ticks' time
                     "publish_period": 1.0 / rate, **profile[PLANT]},
             "state_estimator": {"offsets_file": str(Path(directory) / "offsets.yaml")},  # no calibration of ~/.ros
             "contact_estimator": {"mode": "actuator_forces", "sample_rate": float(rate)},
             "centroidal_balancer": profile["centroidal_balancer"],
             "loop_closure_mapper": profile["loop_closure_mapper"]}
    for node in SUITE:
        table[node]["use_sim_time"] = lockstep
    for node, values in (parameters or {}).items():
        table[node].update(values)
    return table


def ros_arguments(name, rate, directory, robot=ROBOT, mode="kinematic", lockstep=False, parameters=None):
    """--ros-args of one process: one parameter file in ``directory`` with a section per node it runs, each node's
    parameters merged as the launch files merge them (:func:`humanoid_balance.deployment.suite_parameters`: config/,
    the robot's configuration, then this experiment's overrides)."""
    table = overrides(rate, directory, mode, lockstep, parameters)
    robot_file = robot_config_file(robot)
    nodes = SUITE if name == "balance_stack" else (name,)
    path = write_parameter_file(suite_parameters(robot_file, {node: table[node] for node in nodes}),
                                Path(directory) / f"{name}.parameters.yaml")
    return ["--params-file", str(path)]


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


class LoopProbe:
    """This process's view of the loop: command arrivals with their stamps, the plant's and the nodes' diagnostics,
    sim/push, and the ping-pong with the echo process."""

    def __init__(self, ros_environment, push_body=""):
        self.context = rclpy.Context()
        with environment_variables(ros_environment):  # rcl reads the domain and discovery range at init
            rclpy.init(context=self.context)
        self.node = Node("dds_loop_probe", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.commands = []      # (stamp, arrival) of every actuator_states [ns]
        self.ring_returns = []  # (stamp, arrival) of every JointState back from the ring [ns]
        self.plant = []         # (arrival [ns], PlantFigures) of the plant's diagnostics
        self.reporting = set()  # processes' nodes that have published diagnostics
        self.warnings = {}      # node → (arrival [ns], its last non-OK diagnostics message)
        self.pongs = []         # (ping number, arrival [s, perf_counter]) of each pong
        deep = QoSProfile(depth=1000, reliability=RELIABLE_QOS.reliability)  # never drop a message here
        self.node.create_subscription(JointState, "actuator_states", partial(record_stamp, self.commands), deep,
                                      raw=True)
        self.node.create_subscription(JointState, f"ring_{len(SUITE)}", partial(record_stamp, self.ring_returns), deep,
                                      raw=True)
        self.ring_publisher = self.node.create_publisher(JointState, "ring_0", RELIABLE_QOS)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self.on_diagnostics, RELIABLE_QOS)
        self.node.create_subscription(JointState, "pong",
                                      lambda pong: self.pongs.append((pong.position[0], time.perf_counter())), deep)
        self.push_publisher = self.node.create_publisher(WrenchStamped, "sim/push", RELIABLE_QOS)
        self.push_body = push_body
        self.ping_publisher = self.node.create_publisher(JointState, "ping", RELIABLE_QOS)

    def on_diagnostics(self, array):
        for status in array.status:
            node = status.name.split(":")[0]
            self.reporting.add(node)
            if LEVEL_NAMES[status.level] != "OK":
                self.warnings[node] = (time.time_ns(), status.message)
            if node == PLANT:
                figures = PlantFigures.read({pair.key: pair.value for pair in status.values})
                self.plant.append((time.time_ns(), figures))

    def push(self):
        message = WrenchStamped()
        message.header.frame_id = self.push_body
        message.wrench.force.y = PUSH_FORCE
        self.push_publisher.publish(message)

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

    def ping_pong(self, count):
        """Round-trip times of ``count`` JointState pings through the echo process, one at a time [s]."""
        message = JointState(name=[f"joint_{k}" for k in range(30)], position=[0.0] * 30)
        deadline = time.monotonic() + START_TIMEOUT
        while not self.ping_publisher.get_subscription_count() or not self.node.count_publishers("pong"):
            if time.monotonic() > deadline:
                raise RuntimeError("the echo process did not come up")
            self.executor.spin_once(timeout_sec=0.05)
        times = []
        for number in range(count):  # numbered: a ping lost in discovery is sent again, a late pong not mistaken
            message.position[0] = float(number)
            first = time.perf_counter()
            while not (self.pongs and self.pongs[-1][0] == number):
                if time.perf_counter() - first > 5.0:
                    raise RuntimeError("the echo process stopped answering")
                sent = time.perf_counter()
                self.ping_publisher.publish(message)
                while not (self.pongs and self.pongs[-1][0] == number) and time.perf_counter() - sent < 0.5:
                    self.executor.spin_once(timeout_sec=0.1)
            times.append(self.pongs[-1][1] - sent)
        return np.array(times[count // 10:])

    def send_around_the_ring(self, rate):
        """Start publishing a stamped JointState on the ring at ``rate`` [Hz]; the timer."""
        message = ring_message()
        stamp = message.header.stamp

        def send():
            stamp.sec, stamp.nanosec = divmod(time.time_ns(), 1_000_000_000)
            self.ring_publisher.publish(message)
        return self.node.create_timer(1.0 / rate, send)

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def ring_message():
    """The JointState the floor measurements send: RING_JOINTS named joints, every field filled."""
    return JointState(name=[f"joint_{k}" for k in range(RING_JOINTS)], position=[0.0] * RING_JOINTS,
                      velocity=[0.0] * RING_JOINTS, effort=[0.0] * RING_JOINTS)


def wake_up_cost(samples=WAKE_UP_SAMPLES, pause=WAKE_UP_PAUSE):
    """What a wait costs the work right after it on this machine: the CPU time [s] of serializing the ring's
    JointState (rclpy's conversion and the rmw's CDR, no transport) ``samples`` times back to back, then ``samples``
    times each right after sleeping ``pause`` [s], as a process of the separate layout sleeps between two messages
    (caches left to other work, the CPU in an idle state); (back to back, after a wait)."""
    message = ring_message()
    serialize_message(message)
    back_to_back, after_a_wait = np.empty(samples), np.empty(samples)
    for times, wait in ((back_to_back, 0.0), (after_a_wait, pause)):
        for k in range(samples):
            if wait:
                time.sleep(wait)
            start = time.thread_time()
            serialize_message(message)
            times[k] = time.thread_time() - start
    return back_to_back, after_a_wait


def record_stamp(arrivals, serialized, info):
    """Append (stamp, arrival) [ns] of a serialized JointState, its stamp read straight from the bytes (CDR: a 4-byte
    encapsulation header whose second byte is 1 for little-endian, then header.stamp's sec and nanosec): the probe
    shares the machine with the loop it measures, and deserialising every message would take CPU from it."""
    sec, nanosec = struct.unpack_from("<iI" if serialized[1] == 1 else ">iI", serialized, 4)
    arrivals.append((sec * 1_000_000_000 + nanosec, info["received_timestamp"]))


def ros_environment(index=0):
    """A DDS domain of the run's own (1..100; 0 is the interactive default), away from the caller's: no other
    node of this process's session (a test session's, a user's) can publish into the loop; ``index`` tells apart
    the runs of one process that may overlap."""
    caller = int(os.environ.get("ROS_DOMAIN_ID", "0") or 0)
    domain = 1 + (os.getpid() + 50 + index) % 100
    if domain == caller:
        domain = 1 + domain % 100
    return {"ROS_DOMAIN_ID": str(domain), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}


def wait_for(probe, nodes, condition, what):
    """Spin until ``condition()``; on timeout, raise RuntimeError naming ``what`` with the given nodes' output."""
    if not probe.spin(START_TIMEOUT, nodes, f"while {what}", condition):
        tails = "\n".join(f"--- {node.name}:\n{node.tail(500)}" for node in nodes)
        raise RuntimeError(f"timed out after {START_TIMEOUT:.0f} s {what}; the nodes' output ends:\n{tails}")


def measure(rate, seconds, warm_up, layout="separate", robot=ROBOT, mode="kinematic"):
    """Start the nodes in ``layout`` on ``robot`` in balance ``mode`` and the plant at ``rate`` [Hz], warm up,
    record ``seconds`` [s] with a push in the middle, and stop them."""
    environment = ros_environment()
    nodes = []
    with tempfile.TemporaryDirectory(prefix="dds_loop_") as directory:
        probe = LoopProbe(environment, robot_config(robot).base_frame)  # '': the plant pushes its root body
        try:
            process_environment = {**os.environ, **environment}
            nodes += [NodeProcess(name, ros_arguments(name, rate, directory, robot, mode), process_environment,
                                  directory)
                      for name in LAYOUTS[layout]]
            wait_for(probe, nodes, lambda: set(SUITE) <= probe.reporting, "waiting for the suite's diagnostics")
            nodes.append(NodeProcess(PLANT, ros_arguments(PLANT, rate, directory, robot, mode), process_environment,
                                     directory))
            wait_for(probe, nodes, lambda: probe.commands, "waiting for the first actuator command")
            probe.spin(warm_up, nodes, "during the warm-up")
            cpu_start = {node.name: cpu_seconds(node.pid) for node in nodes}
            start = time.time_ns()
            probe.spin(seconds / 2, nodes, "during the measurement")
            probe.push()
            probe.spin(seconds / 2, nodes, "during the measurement")
            end = time.time_ns()
            cpu = {node.name: cpu_seconds(node.pid) - cpu_start[node.name] for node in nodes}
            probe.spin(DRAIN, nodes, "after the measurement")
        finally:
            probe.close()
            stop(nodes)
    latencies = np.array([arrival - stamp for stamp, arrival in probe.commands if start <= arrival < end]) * 1e-9
    diagnostics = [sample for sample in probe.plant if start <= sample[0] < end]
    if len(diagnostics) < 2:
        raise RuntimeError(f"{PLANT} published {len(diagnostics)} diagnostics in {seconds} s instead of one per second")
    (first, opening), (last, closing) = diagnostics[0], diagnostics[-1]  # (arrival [ns], PlantFigures)
    plant_rate = float(np.median([figures.tick_rate for _, figures in diagnostics]))
    real_time_factor = (closing.simulated_time - opening.simulated_time) / ((last - first) * 1e-9)
    heights = [(round(figures.simulated_time, 2), figures.base_height) for _, figures in probe.plant]
    warnings = {node: message for node, (arrival, message) in probe.warnings.items() if start <= arrival < end}
    return LoopRun(layout, rate, seconds, latencies, plant_rate, real_time_factor, opening.base_height,
                   closing.base_height, cpu, heights, warnings)


@contextlib.contextmanager
def probe_with_echoes(*remaps):
    """A LoopProbe in a DDS domain of its own, and one echo process (humanoid_balance.bench.echo) per entry of
    ``remaps``, that echo's remap arguments; all stopped on exit."""
    environment = ros_environment()
    echoes = [subprocess.Popen([sys.executable, "-m", "humanoid_balance.bench.echo", "--ros-args", *arguments],
                               env={**os.environ, **environment}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, preexec_fn=die_with_parent) for arguments in remaps]
    probe = LoopProbe(environment)
    try:
        yield probe
    finally:
        probe.close()
        stop_processes(echoes)


def ping_pong(count=PING_PONGS):
    """rclpy's floor on this machine: JointState round trips between this process and an echo process [s]."""
    with probe_with_echoes(()) as probe:
        return probe.ping_pong(count)


def ring(rates=RING_RATES, seconds=RING_SECONDS, warm_up=RING_WARM_UP):
    """rclpy's floor for the closed loop: for each rate [Hz], JointStates sent around the ring (see the module) for
    ``seconds`` after ``warm_up`` [s]; rate → (achieved rate [Hz], latencies [s])."""
    links = [("-r", f"__node:=dds_echo_{k}", "-r", f"ping:=ring_{k}", "-r", f"pong:=ring_{k + 1}")
             for k in range(len(SUITE))]
    results = {}
    with probe_with_echoes(*links) as probe:
        for rate in rates:
            timer = probe.send_around_the_ring(rate)
            if not probe.spin(START_TIMEOUT, [], "", lambda: probe.ring_returns):
                raise RuntimeError(f"nothing came back around the ring of {len(links)} echo processes")
            probe.spin(warm_up, [], "")
            start = time.time_ns()
            probe.spin(seconds, [], "")
            end = time.time_ns()
            probe.node.destroy_timer(timer)
            probe.spin(DRAIN, [], "")
            latencies = np.array([arrival - stamp for stamp, arrival in probe.ring_returns
                                  if start <= arrival < end]) * 1e-9
            results[rate] = (len(latencies) / ((end - start) * 1e-9), latencies)
            probe.ring_returns.clear()
    return results


def ring_row(rate, achieved, latencies):
    p50, p99 = np.percentile(latencies, (50, 99)) * 1e3 if latencies.size else (float("nan"),) * 2
    return Result(EXPERIMENT, f"rclpy floor: the loop's ring, {len(SUITE)} echo processes, no computation, at "
                  f"{rate:.0f} Hz", "—", "reported",
                  f"{achieved:.0f} Hz, latency p50 {p50:.2f} ms, p99 {p99:.2f} ms (n = {latencies.size})", None)


def rows(loop):
    """The table rows of one run: achieved command rate, latency p50 and p99, whether the robot still stands, and
    each process's CPU time per command."""
    achieved = len(loop.latencies) / loop.seconds
    p50, p99 = np.percentile(loop.latencies, (50, 99)) * 1e3 if loop.latencies.size else (float("nan"),) * 2
    target_ms = LATENCY_TARGET.get(int(loop.rate), 1e3 / loop.rate)
    at = f"at {loop.rate:.0f} Hz" + ("" if loop.layout == "separate" else f" ({loop.layout})")
    per_command = ", ".join(f"{name} {1e6 * seconds / max(len(loop.latencies), 1):.0f}"
                            for name, seconds in loop.cpu.items())
    cores = sum(loop.cpu.values()) / loop.seconds
    return [
        Result(EXPERIMENT, f"actuator command rate at the plant {at}", PAPER,
               f"≥ {MIN_RATE_FRACTION * loop.rate:.0f} Hz ({MIN_RATE_FRACTION:.0%} of {loop.rate:.0f})",
               f"{achieved:.0f} Hz (plant at {loop.plant_rate:.0f} Hz, real-time factor {loop.real_time_factor:.2f})",
               achieved >= MIN_RATE_FRACTION * loop.rate),
        Result(EXPERIMENT, f"end-to-end latency p50 {at}", "—", "—", f"{p50:.2f} ms", None),
        Result(EXPERIMENT, f"end-to-end latency p99 {at}", "—", f"≤ {target_ms:g} ms",
               f"{p99:.2f} ms (n = {loop.latencies.size})", bool(p99 <= target_ms)),
        Result(EXPERIMENT, f"robot standing at the end of the measurement {at}", "—",
               f"base within {FALL_DROP} m of its start, through a 6 N·s push",
               f"base at {loop.end_height:.2f} m, started at {loop.start_height:.2f} m",
               loop.start_height - loop.end_height <= FALL_DROP),
        Result(EXPERIMENT, f"CPU time per command by process {at} [µs]", "—", "reported",
               f"{per_command} ({cores:.2f} cores busy)", None),
    ]


def floor_row(round_trips):
    median, p99 = np.percentile(round_trips, (50, 99)) * 1e6
    return Result(EXPERIMENT, "rclpy floor: JointState round trip between two processes [µs]", "—", "reported",
                  f"median {median:.0f}, p99 {p99:.0f} (n = {len(round_trips)})", None)


def wake_up_row(back_to_back, after_a_wait):
    (fast, fast_p90), (slow, slow_p90) = (np.percentile(times, (50, 90)) * 1e6
                                          for times in (back_to_back, after_a_wait))
    return Result(EXPERIMENT, f"rclpy floor: serializing a {RING_JOINTS}-joint JointState, back to back / right after "
                  f"a {WAKE_UP_PAUSE * 1e3:g} ms sleep [µs]", "—", "reported",
                  f"median {fast:.1f} / {slow:.1f}, p90 {fast_p90:.1f} / {slow_p90:.1f} (n = {len(back_to_back)} "
                  f"each)", None)


def run(smoke=False, robot=ROBOT, session=None):
    """The experiment's rows; ``smoke``: one short run at 500 Hz in separate processes (CI)."""
    floor = [floor_row(ping_pong(100 if smoke else PING_PONGS)),
             wake_up_row(*wake_up_cost(100 if smoke else WAKE_UP_SAMPLES))]
    rings = ring((SMOKE_RATE,), 1.0, 0.5) if smoke else ring()
    floor += [ring_row(rate, achieved, latencies) for rate, (achieved, latencies) in rings.items()]
    if smoke:
        return floor + rows(measure(SMOKE_RATE, SMOKE_SECONDS, SMOKE_WARM_UP, SMOKE_LAYOUT, robot))
    return floor + [row for layout, rate in RUNS for row in rows(measure(rate, SECONDS, WARM_UP, layout, robot))]
