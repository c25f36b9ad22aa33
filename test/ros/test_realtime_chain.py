"""What real-time scheduling buys (nodes.realtime, the ``realtime_priority`` parameter), as experiment 14 measures it
(bench/starved_chain.py): the free-running chain (every node its own process, the plant at 100 Hz against the wall
clock and at SCHED_FIFO 60, as a robot's hardware that no job on its computer slows) beside CPU-bound jobs — what a
robot's computer meets when perception or logging spikes — asked for a CoM 0.5 m ahead of the toes. At the default
scheduler the nodes fall behind (commands at 37–71 Hz) and they say so; the balancer, starved, refuses new references
and holds the granted CoM (loop.balance_stage), and the robot stands — before it did, the robot fell beside 4, 6 and 8
jobs here in most runs (docs/real-time.md). At SCHED_FIFO 50 the nodes keep the plant's rate and the reference is
granted.

Both suppose a computer with room for the chain beside the jobs: the chain alone, before the jobs start, keeps at most
MOST_CORES of the machine's two cores busy. On a host that runs it three times slower than the one the figures above
come from (one crba 40-60 µs against 13), the chain alone kept 1.5 cores busy, two jobs left its nodes 35-50 % of
their rate at the default scheduler (the robot fell in 4 runs of 5 with k_p slowed, 3 of 3 before), and at SCHED_FIFO
its commands reached the plant at 63-100 Hz beside four: each test then skips, saying so; what the chain does on
such a computer is `bench starved`'s to report.
"""
import pytest

from humanoid_balance.bench.dds_loop import PLANT
from humanoid_balance.bench.starved_chain import (NODE_PRIORITY, PLANT_PRIORITY, RATE, STANDING, Overloaded,
                                                  starved)

pytestmark = pytest.mark.dds
JOBS = 4            # CPU-bound jobs beside the chain, on a 2-core machine
BURNERS = 2         # ... in the minute-long run
MINUTE = 60.0       # [s]
KEPT_RATE = 0.95    # of the plant's, each node's update rate at least (61-97 Hz at the default scheduler)
MOST_CORES = 1.0    # the chain alone keeps busy at most (the tests' premise)


def starved_with_room(jobs, priority, **keywords):
    """starved(), skipped when the chain alone keeps more than MOST_CORES busy (see the module)."""
    try:
        return starved(jobs, priority, most_cores=MOST_CORES, **keywords)
    except Overloaded as overloaded:
        pytest.skip(f"{overloaded}: too slow a machine for the test's premise")


def skip_unless_granted(run):
    if any("refused" in report for report in run.scheduling.values()):
        pytest.skip(f"this machine does not grant SCHED_FIFO: {run.scheduling}")


def test_at_sched_fifo_the_chain_keeps_its_rate_and_the_robot_up_beside_cpu_bound_jobs():
    run = starved_with_room(JOBS, NODE_PRIORITY)
    skip_unless_granted(run)
    assert all(report.startswith(f"SCHED_FIFO {PLANT_PRIORITY if node == PLANT else NODE_PRIORITY}")
               for node, report in run.scheduling.items()), run.scheduling
    assert run.stood, f"fell: base at {run.lowest:.3f} m from {run.standing:.3f}; rates {run.rates}"
    assert min(run.rates.values()) >= KEPT_RATE * RATE, run.rates
    assert run.slowest_commands >= KEPT_RATE * RATE, f"commands reached the plant at {run.slowest_commands:.0f} Hz"
    # (a node may say so of one second, as in 1 run of 18 here with the commands at 99.98 Hz; not of two)
    assert max(run.behind.values(), default=0) <= 1, f"reports of falling behind {run.behind} at {run.rates}"
    assert run.refused == 0  # granted, at the support's edge


def test_a_minute_beside_two_cpu_burners_at_the_default_scheduler_the_robot_stands_and_every_slowdown_is_reported():
    """Issue 54: the free-running chain at the default scheduler beside two CPU-bound jobs for a minute, asked after
    2 s for a CoM 0.5 m ahead of the toes (beyond the feet): the robot stays up, and whenever the chain's commands
    reach the plant (the robot's hardware, its own measure) slower than 70 % of its rate, a node says it fell behind or
    is starved within 2 s (before the balance degraded on a starved computer, the robot fell in 1 run of 3 beside 2
    jobs, 2 of 3 beside 4). How far two jobs slow the chain depends on the machine: 85-100 Hz here, the nodes saying
    so below 90; in CI they kept 96-100 Hz, with nothing to report."""
    run = starved_with_room(BURNERS, 0, watched=MINUTE - STANDING)
    skip_unless_granted(run)  # (the plant's SCHED_FIFO: without it the plant starves too)
    assert run.stood, f"fell: base at {run.lowest:.3f} m from {run.standing:.3f}; rates {run.rates}"
    assert not run.unreported, ("the chain's commands reached the plant slowly with no node saying so (s after the "
                                f"reference, Hz): {run.unreported}; nodes that said so: {run.behind or 'none'}")
