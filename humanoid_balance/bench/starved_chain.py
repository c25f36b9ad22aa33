"""Experiment 14: the free-running chain on a starved computer (issue 54) — how many CPU-bound jobs beside it it stands,
at the default scheduler and at SCHED_FIFO (the nodes' ``realtime_priority``, nodes/realtime.py).

The chain of experiment 7 (the plant at 100 Hz against the wall clock, every node its own process) stands alone for
3 s — the most cores it keeps busy in a second then is the run's floor: what the chain needs of this machine — then
with 0, 2, 4, … jobs (``python -c "while True: pass"``) running beside it for 2 s more, is asked for a CoM 0.5 m ahead
of the toes (the balancer grants it at the support's margin) and watched for 5 s. The plant stands for the robot's
hardware, which no job on the computer slows: it runs at SCHED_FIFO 60 in every run. Stood: the base never lower than
FALL_DROP below where it stood. Each count is tried in turn until the robot falls. A balancer that
is starved when the reference comes refuses it (loop.balance_stage): the row says whether it was granted.
"""
import os
import subprocess
import sys
import time
from collections import Counter
from typing import NamedTuple

from geometry_msgs.msg import PointStamped

from humanoid_balance.bench.chain import Chain
from humanoid_balance.bench.closed_loop import FALL_DROP
from humanoid_balance.bench.dds_loop import PLANT, SUITE
from humanoid_balance.bench.processes import cpu_seconds
from humanoid_balance.bench.results import Result
from humanoid_balance.errors import HumanoidBalanceError
from humanoid_balance.nodes.diagnostics import rejected_counts
from humanoid_balance.nodes.qos import RELIABLE_QOS
from humanoid_balance.resources import DEFAULT_ROBOT

__all__ = ["NOTE", "ROBOT", "run", "starved", "StarvedRun", "Overloaded"]

EXPERIMENT = "14 starved computer"
ROBOT = DEFAULT_ROBOT
RATE = 100.0                    # [Hz] the plant's
NODE_PRIORITY, PLANT_PRIORITY = 50, 60
JOBS, SMOKE_JOBS = (0, 2, 4, 6, 8), (2,)
QUIET, STANDING, WATCHED = 3.0, 2.0, 5.0  # [s] the chain alone, then beside the jobs before the CoM reference,
                                         # after it
AHEAD = 0.5                     # [m] the CoM reference's x in odom: ahead of the toes
SLOW_COMMANDS = 0.7 * RATE      # [Hz] a chain whose commands reach the plant slower fell behind: some node must say so
REPORT_SLACK = 2.0              # [s] ... within this of the plant's report (both measure over 1-2 s windows)
NOTE = ("14: the free-running chain (plant at 100 Hz, every node its own process) alone for 3 s (the most cores it "
        "keeps busy in a second: the floor), then beside N CPU-bound jobs, asked for a CoM 0.5 m ahead of the toes "
        "after 2 s and watched 5 s; the plant (the robot's hardware) at SCHED_FIFO 60 in every run, the nodes at the "
        "default scheduler or at SCHED_FIFO 50 (realtime_priority); N = 0, 2, 4, … until the robot falls.")


class Overloaded(HumanoidBalanceError):
    """The chain alone kept more of this machine's cores busy than the run was to allow (``starved``'s
    ``most_cores``): no job was started."""

    def __init__(self, cores, most):
        super().__init__(f"the chain alone keeps {cores:.2f} of this machine's {os.cpu_count()} cores busy (at most "
                         f"{most:g} allowed): its nodes need more of it than the run supposes")


class StarvedRun(NamedTuple):
    stood: bool
    lowest: float      # the base's lowest height after the CoM reference [m]
    standing: float    # its height before [m]
    rates: dict        # node → its update rate at the end [Hz]
    scheduling: dict   # process → what it got (nodes/realtime.py), as its /diagnostics say
    behind: dict       # node → how many of its reports said it fell behind its input (nodes.input_guard: ticks
                       # skipped) or, the balancer, that it was starved (loop.balance_stage); only those that did
    refused: int       # CoM references the balancer refused as starved (the one sent, or none)
    slowest_commands: float  # [Hz] the slowest the chain's commands reached the plant after the reference (its
                             # diagnostics: a 2-s window each second)
    unreported: tuple  # (s after the reference, the plant's command rate [Hz]) of each report slower than
                       # SLOW_COMMANDS with no node saying it fell behind or was starved within REPORT_SLACK
    quiet_cores: float  # the cores the chain (nodes and plant) kept busy alone, before the jobs started


def starved(jobs, priority, robot=ROBOT, watched=WATCHED, most_cores=None):
    """One run beside ``jobs`` CPU-bound jobs, the nodes at SCHED_FIFO ``priority`` (0: the default scheduler),
    watched for ``watched`` [s] after the CoM reference; Overloaded, before any job starts, when the chain alone keeps
    more than ``most_cores`` cores busy (None: any)."""
    parameters = {node: {"realtime_priority": priority} for node in SUITE}
    parameters[PLANT] = {"realtime_priority": PLANT_PRIORITY}
    burners = []
    try:
        with Chain(RATE, robot=robot, parameters=parameters) as chain:
            com_reference = chain.node.create_publisher(PointStamped, "balance/com_reference", RELIABLE_QOS)
            quiet_cores = _busy_cores(chain, QUIET)  # (meanwhile the balancer's subscription matches the publisher)
            if most_cores is not None and quiet_cores > most_cores:
                raise Overloaded(quiet_cores, most_cores)
            burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(jobs)]
            chain.spin(STANDING)
            standing = chain.base_height
            reference = PointStamped()
            reference.header.frame_id = "odom"
            reference.point.x, reference.point.z = AHEAD, 0.8
            com_reference.publish(reference)
            since, sent = len(chain.heights), time.monotonic()
            chain.spin(watched)
            lowest = min((height for _, height in chain.heights[since:]), default=float("nan"))
            rates = {node: float(status.values["update rate [Hz]"]) for node, status in chain.status.items()
                     if node in SUITE}
            scheduling = {node: status.values.get("scheduling", "?") for node, status in chain.status.items()}
            said_behind = [(node, status.arrival) for node, status in chain.history if _says_behind(status)]
            behind = dict(sorted(Counter(node for node, _ in said_behind).items()))
            command_rates = [(status.arrival, float(status.values["actuator_commands rate [Hz]"]))
                             for node, status in chain.history if node == PLANT and status.arrival > sent]
            unreported = tuple((arrival - sent, rate) for arrival, rate in command_rates if rate < SLOW_COMMANDS
                               and not any(abs(arrival - said) <= REPORT_SLACK for _, said in said_behind))
            balancer = chain.status.get("centroidal_balancer")
            refused = 0 if balancer is None else rejected_counts(balancer.values).get("starved", 0)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait(10)
    slowest = min((rate for _, rate in command_rates), default=float("nan"))
    return StarvedRun(bool(lowest > standing - FALL_DROP), lowest, standing, rates, scheduling, behind, refused,
                      slowest, unreported, quiet_cores)


def _busy_cores(chain, seconds):
    """The cores the chain's processes keep busy while it spins for ``seconds``: the most over each second after the
    first (its nodes settling after their start)."""
    pids = [process.pid for process in chain.processes.values()]
    chain.spin(1.0)
    busiest = 0.0
    for _ in range(max(1, round(seconds - 1.0))):
        used, start = sum(cpu_seconds(pid) for pid in pids), time.monotonic()
        chain.spin(1.0)
        busiest = max(busiest, (sum(cpu_seconds(pid) for pid in pids) - used) / (time.monotonic() - start))
    return busiest


def _says_behind(status):
    """Whether a node's status says it fell behind its input (nodes.input_guard: ticks skipped) or, the balancer,
    that it is starved (loop.balance_stage)."""
    return "falling behind" in status.message or status.message.startswith("starved")


def _largest(priority, counts, robot):
    """(the largest count of jobs the robot stood beside, the run that fell or None, the last run)."""
    largest, run = None, None
    for jobs in counts:
        run = starved(jobs, priority, robot)
        if not run.stood:
            return largest, (jobs, run), run
        largest = jobs
    return largest, None, run


def run(smoke=False, robot=ROBOT, session=None):
    counts = SMOKE_JOBS if smoke else JOBS
    rows = []
    for priority, scheduler in ((0, "the default scheduler"), (NODE_PRIORITY, f"SCHED_FIFO {NODE_PRIORITY}")):
        largest, fell, last = _largest(priority, counts, robot)
        refused = [report for report in last.scheduling.values() if "refused" in report]
        if refused:
            measured = f"not measured: {refused[0]}"
        else:
            held = f"< {fell[0]}" if largest is None else (f"≥ {largest} (every count tried)" if fell is None
                                                          else str(largest))
            slowest = min(last.rates.values(), default=float("nan"))
            measured = held + ("" if fell is None else f"; fell beside {fell[0]} (base {fell[1].lowest:.2f} m)") + \
                f"; slowest node at {slowest:.0f} Hz in the last run (its commands reaching the plant at " \
                f"{last.slowest_commands:.0f} Hz and more), falling behind by its own report: " + \
                (", ".join(last.behind) or "none") + f"; the CoM reference {'refused' if last.refused else 'granted'}" \
                f"; floor: the chain alone kept {last.quiet_cores:.2f} cores busy"
        rows.append(Result(EXPERIMENT, f"CPU-bound jobs beside the chain it stands with, nodes at {scheduler}",
                           "—", "reported", measured, None))
    return rows
