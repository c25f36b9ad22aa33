"""The node chain as on a robot, for the fault tests and the soak run.

The plant runs free against the wall clock and each of the four nodes runs in its own process (the layout and
parameters of experiment 7, :mod:`humanoid_balance.bench.dds_loop`), in a DDS domain of the chain's own. A probe
node in this process watches every node's /diagnostics and the plant's ground truth, publishes into the chain, and
kills, pauses and restarts processes.

A chain whose processes are to be killed (``restartable``) runs its DDS over UDP on this host, without Fast DDS's
shared-memory transport: a process killed with kill -9 in the middle of a shared-memory operation can leave its
segments so that the restarted process neither hears nor is heard (eProsima/Fast-DDS#5053, #1144; a CI run's
restarted contact_estimator published nothing for minutes).
"""
import os
import signal
import tempfile
import time
from pathlib import Path

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter

from humanoid_balance.bench.dds_loop import (PLANT, START_TIMEOUT, SUITE, environment_variables, ros_arguments,
                                             ros_environment)
from humanoid_balance.bench.processes import NodeProcess, stop
from humanoid_balance.nodes.diagnostics import LEVEL_NAMES, rejected_counts
from humanoid_balance.nodes.qos import RELIABLE_QOS
from humanoid_balance.resources import DEFAULT_ROBOT, config_file

__all__ = ["Chain", "NodeStatus", "resident_memory"]


def localhost_udp():
    """The environment that puts Fast DDS on this host over UDP, without shared memory
    (config/fastdds_localhost_udp.xml; rmw_fastrtps's own LOCALHOST range adds the shared-memory transport)."""
    return {"FASTDDS_DEFAULT_PROFILES_FILE": str(config_file("fastdds_localhost_udp.xml")),
            "ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT"}


def resident_memory(pid):
    """A process's resident set size [MiB] (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"no VmRSS for process {pid}")


class NodeStatus:
    """A node's last DiagnosticStatus: level name, message, values (strings by key), wall time it arrived [s]."""

    __slots__ = ("level", "message", "values", "arrival")

    def __init__(self, status):
        self.level = LEVEL_NAMES[status.level]
        self.message = status.message
        self.values = {pair.key: pair.value for pair in status.values}
        self.arrival = time.monotonic()

    def rejected(self):
        """The node's rejected input messages by reason."""
        return rejected_counts(self.values)

    def __repr__(self):
        return f"{self.level} '{self.message}'"


class Chain:
    """Start with ``with Chain(rate) as chain:``; the plant at ``rate`` [Hz] on ``robot`` in balance ``mode``,
    free-running, or with ``lockstep`` waiting for each tick's command (immune to the machine's load);
    ``parameters``: node → {name: value} on top of the experiment's
    (:func:`~humanoid_balance.bench.dds_loop.overrides`); ``restartable``: DDS over UDP (:func:`localhost_udp`), for
    processes killed and started again."""

    started = 0  # chains this process has started

    def __init__(self, rate=100.0, robot=DEFAULT_ROBOT, mode="kinematic", lockstep=False, parameters=None,
                 restartable=False):
        self.rate, self.robot, self.mode, self.lockstep = rate, robot, mode, lockstep
        self.parameters = parameters or {}
        Chain.started += 1  # each chain a domain of its own, even beside another chain
        self.environment = {**ros_environment(Chain.started), **(localhost_udp() if restartable else {})}
        self.process_environment = {**os.environ, **self.environment}
        self.folder = tempfile.TemporaryDirectory(prefix="chain_")
        self.directory = self.folder.name
        self.processes = {}
        self.status = {}          # node → its last NodeStatus
        self.history = []         # (node, NodeStatus) of every status received
        self.heights = []         # (wall time [s], simulated base height [m]) of the plant's ground truth
        self.context = rclpy.Context()
        with environment_variables(self.environment):  # read by rcl at init and by Fast DDS for the participant
            rclpy.init(context=self.context)
            self.node = Node("chain_probe", context=self.context,
                             parameter_overrides=[Parameter("use_sim_time", value=lockstep)])  # the nodes' clock
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, RELIABLE_QOS)
        self.node.create_subscription(Odometry, "sim/odom", self._on_ground_truth, RELIABLE_QOS)

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exception):
        self.close()

    def _on_diagnostics(self, array):
        for status in array.status:
            node = status.name.split(":")[0]
            self.status[node] = NodeStatus(status)
            self.history.append((node, self.status[node]))

    def _on_ground_truth(self, message):
        self.heights.append((time.monotonic(), message.pose.pose.position.z))

    @property
    def base_height(self):
        """The plant's last ground-truth base height [m] (nan before the first)."""
        return self.heights[-1][1] if self.heights else float("nan")

    def launch(self, name):
        """Start (or start again) the process ``name``; its output is appended to ``<directory>/<name>.log``."""
        arguments = ros_arguments(name, self.rate, self.directory, self.robot, self.mode, self.lockstep,
                                  self.parameters)
        self.processes[name] = NodeProcess(name, arguments, self.process_environment, self.directory,
                                           append=name in self.processes)
        return self.processes[name]

    def start(self):
        for name in SUITE:
            self.launch(name)
        if self.lockstep:  # on the plant's /clock, the nodes publish nothing before it starts
            self.wait(lambda: set(SUITE) <= set(self.node.get_node_names()), "waiting for the suite's nodes")
        else:
            self.wait(lambda: set(SUITE) <= set(self.status), "waiting for the suite's diagnostics")
        self.launch(PLANT)
        self.wait(lambda: len(self.heights) > 10, "waiting for the plant")

    def wait(self, condition, what, timeout=START_TIMEOUT):
        """Spin until ``condition()``; RuntimeError naming ``what`` with the processes' output on timeout."""
        if not self.spin(timeout, until=condition):
            tails = "\n".join(f"--- {p.name}:\n{p.tail(500)}" for p in self.processes.values())
            raise RuntimeError(f"timed out after {timeout:.0f} s {what}; the processes' output ends:\n{tails}")

    def spin(self, seconds, until=None, on_tick=None, period=0.01):
        """Spin for ``seconds`` [s] or until ``until()`` holds, calling ``on_tick`` every ``period`` [s] of wall
        time; whether ``until`` held."""
        deadline = time.monotonic() + seconds
        next_tick = time.monotonic()
        while time.monotonic() < deadline:
            if until is not None and until():
                return True
            if on_tick is not None and time.monotonic() >= next_tick:
                on_tick()
                next_tick += period
            wait = period if on_tick is None else max(0.0, min(period, next_tick - time.monotonic()))
            self.executor.spin_once(timeout_sec=wait)
        return bool(until is not None and until())

    def exited(self):
        """The processes that have exited, with their exit codes."""
        return {name: p.process.returncode for name, p in self.processes.items() if p.process.poll() is not None}

    def kill(self, name):
        """SIGKILL (kill -9) the process ``name`` and reap it."""
        process = self.processes[name].process
        process.send_signal(signal.SIGKILL)
        process.wait(10)

    def pause(self, name):
        self.processes[name].process.send_signal(signal.SIGSTOP)

    def resume(self, name):
        self.processes[name].process.send_signal(signal.SIGCONT)

    def memory(self):
        """Each running process's resident memory [MiB]."""
        return {name: resident_memory(p.pid) for name, p in self.processes.items() if p.process.poll() is None}

    def close(self):
        stop(list(self.processes.values()))
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self.folder.cleanup()
