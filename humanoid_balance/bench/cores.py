"""Experiment 8: the four nodes' cores within their per-message budgets on kangaroo_like (issue 16).

Each core is the one call its node makes per message, on the inputs it sees while the robot stands and moves:
the state estimator's update (passive joints, eqs. 35–40, and the floating base), the contact estimate from
actuator forces (eqs. 45–47), the balancer's kinematic update (Choi–Kim with the embedded-motion CoM Jacobian) and
the mapper's update (eqs. 2, 22–23). Each median is divided by the median of one pinocchio ``crba`` on the same
model, timed interleaved with it in the same run, so that the ratio does not depend on how fast or busy the
machine is at that moment. Beside the budgets, each core is timed again with a sleep of one 500 Hz tick before
every call, as a node of the separate layout sleeps between two messages: what waiting costs the work after it on
this machine (caches left to other work, the processor idle).
"""
import copy
import time

import numpy as np
import pinocchio as pin

from humanoid_balance.bench.closed_loop import ClosedLoop, robot_config
from humanoid_balance.bench.results import Result

__all__ = ["NOTE", "ROBOT", "run", "crba_ratio", "BUDGETS"]

EXPERIMENT = "8 cores per message"
ROBOT = "kangaroo_like"  # the budgets are set on it
NOTE = ("8: kangaroo_like standing in the embedded plant with its arms dancing and a squat every second; each "
        "core's median wall time per call is divided by the median of one pinocchio crba on the same model, the two "
        "timed alternately in the same loop (docs/architecture.md, performance protocol).")
BUDGETS = {"state estimator update": 9.0, "contact estimate (actuator forces)": 10.0,
           "balancer update, kinematic mode": 20.0, "mapper update": 9.0}  # [crba]
SAMPLES, SMOKE_SAMPLES = 1500, 300   # timed calls per core
WAIT = 2e-3                          # the sleep before each call of the after-a-wait timing: one 500 Hz tick [s]
WARM_UP_TICKS = 250                  # closed-loop ticks before recording: the robot settles [0.002 s each]


def crba_ratio(function, inputs, model, q):
    """Median of ``function(*input)`` over ``inputs`` and that median over a crba on ``model`` at ``q``, timed
    alternately; (median [s], ratio)."""
    data = model.createData()
    calls, references = [], []
    for arguments in inputs:
        start = time.perf_counter()
        function(*arguments)
        calls.append(time.perf_counter() - start)
        start = time.perf_counter()
        pin.crba(model, data, q)
        references.append(time.perf_counter() - start)
    skip = len(calls) // 10  # warm-up
    median = float(np.median(calls[skip:]))
    return median, median / float(np.median(references[skip:]))


def after_a_wait(function, inputs, wait=WAIT):
    """Median wall time [s] of ``function(*input)`` over ``inputs``, each call right after sleeping ``wait`` [s]."""
    calls = []
    for arguments in inputs:
        time.sleep(wait)
        start = time.perf_counter()
        function(*arguments)
        calls.append(time.perf_counter() - start)
    return float(np.median(calls[len(calls) // 10:]))  # the first calls: warm-up, a replay's first gap


def recorded_inputs(samples, robot=ROBOT, session=None):
    """What each core receives, recorded while the four cores keep kangaroo_like up in the plant, swaying its CoM
    and dancing its arms, so that every core is timed on the inputs it really sees. Returns (loop, inputs)."""
    loop = ClosedLoop(robot_config(robot), mode="kinematic", arms=True, session=session)
    inputs = {name: [] for name in BUDGETS}
    owners = stage_cores(loop)
    trajectories = loop.loop.balance.trajectories
    for name, owner in owners.items():
        core = owner.update

        def recording(*arguments, core=core, calls=inputs[name], **keywords):
            kept = {id(trajectories): trajectories}  # the trajectories stay the same objects, as in a node:
            calls.append((copy.deepcopy(arguments, dict(kept)), copy.deepcopy(keywords, dict(kept))))  # not new ones
            return core(*arguments, **keywords)
        owner.update = recording
    times = np.arange(samples + WARM_UP_TICKS) * loop.period
    for name in loop.config.busy_limbs:
        loop.follow(name, times, np.outer(0.4 * np.cos(2 * np.pi * times), np.ones(len(loop.config.limb_joints[name]))))
    for t in times:
        loop.tick(com_offset=(0.0, 0.02 * np.sin(np.pi * t), 0.0))
    for owner in owners.values():
        del owner.update  # the recording wrappers were instance attributes
    return loop, {name: calls[-samples:] for name, calls in inputs.items()}


def stage_cores(loop):
    """Each timed core of a ClosedLoop's BalanceLoop by its row's name: the stages' computations."""
    stages = loop.loop
    return {"state estimator update": stages.estimator, "contact estimate (actuator forces)": stages.contact,
            "balancer update, kinematic mode": stages.balance.controller, "mapper update": stages.mapping.map}


def run(smoke=False, robot=ROBOT, session=None):
    samples = SMOKE_SAMPLES if smoke else SAMPLES
    loop, inputs = recorded_inputs(samples, robot, session)
    labels = dict(zip(BUDGETS, ("estimator", "contact", "balancer", "mapper")))
    rows, waited = [], []
    for name, owner in stage_cores(loop).items():
        label, core, robot = labels[name], owner.update, owner.robot
        def call(arguments, keywords, core=core):
            return core(*arguments, **keywords)
        median, ratio = crba_ratio(call, inputs[name], robot.model, robot.reference_q)
        rows.append(Result(EXPERIMENT, f"{name} [× crba]", "—", f"≤ {BUDGETS[name]:g}",
                           f"{ratio:.1f} ({median * 1e6:.0f} µs)", ratio <= BUDGETS[name]))
        waited.append(f"{label} {after_a_wait(call, inputs[name]) * 1e6:.0f} ({median * 1e6:.0f})")
    rows.append(Result(EXPERIMENT, f"each core right after a {WAIT * 1e3:g} ms sleep (back to back) [µs]", "—",
                       "reported", ", ".join(waited), None))
    return rows
