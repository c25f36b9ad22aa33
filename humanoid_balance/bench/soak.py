"""Experiment 10: the soak run (issue 20) — minutes of random pushes and arm motions through the node chain.

The plant runs free against the wall clock and each node in its own process (:class:`~humanoid_balance.bench.chain
.Chain`). Every few seconds a push in a random horizontal direction lands on the base, and the busy limbs dance
with a random amplitude. The run reports falls, processes that died, each process's resident memory growth from
the end of the warm-up to the end of the run, and every node's rejected messages: all the input here is valid, so
any rejection is a defect.
"""
import time

import numpy as np
import pinocchio as pin
from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
from trajectory_msgs.msg import JointTrajectory

from humanoid_balance.bench.chain import Chain
from humanoid_balance.bench.closed_loop import FALL_DROP, robot_config
from humanoid_balance.bench.dds_loop import PLANT, SUITE
from humanoid_balance.bench.results import Result
from humanoid_balance.demo.scenario import ArmDance
from humanoid_balance.model import load_robot
from humanoid_balance.nodes.qos import RELIABLE_QOS
from humanoid_balance.nodes.messages import trajectory_message
from humanoid_balance.resources import DEFAULT_ROBOT

__all__ = ["NOTE", "ROBOT", "EXPERIMENT", "run", "soak", "SoakRun"]

EXPERIMENT = "10 soak"
ROBOT = DEFAULT_ROBOT
NOTE = ("10 Soak: the plant free-running at 100 Hz and the four nodes in their own processes, for minutes of random "
        "horizontal pushes on the base (every 2.5–4 s, 1–3 N·s per 50 kg) and dances of the busy limbs (every 6 s, "
        "0.4–1 times their configured swing, 0.5 Hz). Memory growth is each process's resident set size from the end "
        "of a warm-up to the end of the run. All input is valid, so the target for rejected messages is none.")
RATE = 100.0                         # plant rate [Hz], sustained by this 2-core machine (tests: test_free_running)
SECONDS, SMOKE_SECONDS = 180.0, 20.0  # the run after the warm-up [s]
WARM_UP = 3.0                        # [s]
PUSH_EVERY = (2.5, 4.0)              # [s] between pushes
PUSH_VELOCITY = (0.02, 0.06)         # impulse / robot mass [m/s]
PUSH_DURATION = 0.1                  # the plant's push_duration [s]
DANCE_EVERY = 6.0                    # [s]
DANCE = ArmDance(start=0.0, duration=2.0, frequency=0.5, scale=1.0)
MEMORY_GROWTH_TARGET = 2.0           # [MiB per minute] per process


class SoakRun:
    """What one soak run saw."""

    def __init__(self):
        self.seconds = 0.0
        self.pushes = 0
        self.dances = 0
        self.fell_at = None            # run time of the first fall [s]
        self.lowest = float("inf")     # lowest base height [m]
        self.start_height = float("nan")
        self.exited = {}               # process → exit code
        self.memory_start, self.memory_end = {}, {}  # process → resident memory [MiB]
        self.rejected = {}             # node → {reason: count}
        self.rejections = {}           # node → the first rejections it logged, as written


def soak(seconds, robot=ROBOT, seed=10, progress=None, lockstep=False):
    """Run the chain on ``robot`` for ``seconds`` [s] after the warm-up with random pushes and dances; ``lockstep``:
    the plant waits for each command and ``seconds`` are simulated (a test's run, immune to the machine's load)."""
    config = robot_config(robot)
    mass = pin.computeTotalMass(load_robot(config.urdf_file, config.loops).model)
    rng = np.random.default_rng(seed)
    result = SoakRun()
    with Chain(RATE, robot, lockstep=lockstep) as chain:
        push_publisher = chain.node.create_publisher(WrenchStamped, "sim/push", RELIABLE_QOS)
        limb_publishers = {limb: chain.node.create_publisher(JointTrajectory, f"balance/{limb}/trajectory",
                                                             RELIABLE_QOS)
                           for limb in config.busy_limbs if limb in config.limb_swing}
        chain.spin(WARM_UP)
        result.start_height = chain.base_height
        result.memory_start = chain.memory()
        clock = chain.node.get_clock()
        start = clock.now().nanoseconds * 1e-9
        next_push, next_dance, next_report = rng.uniform(*PUSH_EVERY), 1.0, 10.0

        def elapsed():
            return clock.now().nanoseconds * 1e-9 - start

        while elapsed() < seconds and not chain.exited():
            chain.spin(0.05)
            now = elapsed()
            result.lowest = min(result.lowest, chain.base_height)
            if result.fell_at is None and result.start_height - chain.base_height > FALL_DROP:
                result.fell_at = now
            if now >= next_push:
                angle, speed = rng.uniform(0.0, 2 * np.pi), rng.uniform(*PUSH_VELOCITY)
                message = WrenchStamped()
                message.header.frame_id = config.base_frame
                message.wrench.force.x = float(mass * speed * np.cos(angle) / PUSH_DURATION)
                message.wrench.force.y = float(mass * speed * np.sin(angle) / PUSH_DURATION)
                push_publisher.publish(message)
                result.pushes += 1
                next_push = now + rng.uniform(*PUSH_EVERY)
            if now >= next_dance and limb_publishers:
                dance = DANCE._replace(scale=rng.uniform(0.4, 1.0))
                for limb, publisher in limb_publishers.items():
                    times, _, velocities = dance.trajectory(config.limb_swing[limb])  # from where the arm is
                    publisher.publish(trajectory_message(config.limb_joints[limb], times, None, velocities,
                                                         Time()))  # stamp 0: start on arrival
                result.dances += 1
                next_dance = now + DANCE_EVERY
            if progress is not None and now >= next_report:
                progress(f"[soak] {now:.0f} of {seconds:.0f} s: {result.pushes} pushes, {result.dances} dances, base "
                         f"{chain.base_height:.3f} m")
                next_report += 10.0
        result.seconds = elapsed()
        result.exited = chain.exited()
        result.memory_end = chain.memory()
        ended = time.monotonic()  # the rejections counted up to the end: each node's next status
        chain.spin(2.0, until=lambda: all(status.arrival > ended for status in chain.status.values()))
        result.rejected = {name: chain.status[name].rejected() for name in (*SUITE, PLANT) if name in chain.status}
        result.rejections = {name: process.rejections() for name, process in chain.processes.items()}
    return result


def rows(run):
    minutes = run.seconds / 60.0
    growth = {name: (run.memory_end[name] - start) for name, start in run.memory_start.items()
              if name in run.memory_end}
    worst = max(growth.values(), default=float("nan")) / minutes if minutes else float("nan")
    rejected = {name: sum(reasons.values()) for name, reasons in run.rejected.items()}
    reasons = "; ".join(f"{name}: {reasons}, first: {' | '.join(run.rejections.get(name, ()))}"
                        for name, reasons in run.rejected.items() if reasons)
    at = f"over {run.seconds:.0f} s"
    return [
        Result(EXPERIMENT, f"falls {at}", "—", "none",
               "none" if run.fell_at is None else f"fell at {run.fell_at:.1f} s",
               run.fell_at is None),
        Result(EXPERIMENT, f"pushes and limb dances {at}", "—", "reported",
               f"{run.pushes} pushes, {run.dances} dances; base {run.start_height:.3f} m at the start, lowest "
               f"{run.lowest:.3f} m", None),
        Result(EXPERIMENT, f"processes that died {at}", "—", "none",
               ", ".join(f"{name} (exit {code})" for name, code in run.exited.items()) or "none", not run.exited),
        Result(EXPERIMENT, f"resident memory growth by process {at} [MiB]", "—",
               f"≤ {MEMORY_GROWTH_TARGET:g} MiB per minute each",
               ", ".join(f"{name} {value:+.1f} (of {run.memory_end[name]:.0f})" for name, value in growth.items())
               + f"; worst {worst:+.2f} MiB/min", bool(worst <= MEMORY_GROWTH_TARGET)),
        Result(EXPERIMENT, f"rejected messages by node {at}", "—", "none (all input is valid)",
               ", ".join(f"{name} {count}" for name, count in rejected.items()) + (f" ({reasons})" if reasons else ""),
               not any(rejected.values())),
    ]


def run(smoke=False, robot=ROBOT, session=None):
    """The experiment's rows; ``smoke``: a short run, as in CI (it reports on stderr itself, not in a session)."""
    return rows(soak(SMOKE_SECONDS if smoke else SECONDS, robot))
