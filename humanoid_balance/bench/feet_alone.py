"""Experiment 13: the feet alone at the physical limit (issue 52; Kajita et al. 2010, the LIPM stabilizer of mc_rtc).

The demo's closed loop (the plant in lockstep, the four nodes in one process) on each robot standing, recovery steps
off; one push of 0.1 s on the pelvis, laterally, forwards or backwards, then 3 s watched. The largest impulse held
(experiment 12's judgement: no fall, the CoM standing still within 3 s, at most two lift-offs of a sole) is found
by bisection and given as N·s, as m/s (impulse / mass) and as a fraction of the linear inverted pendulum's bound for
the feet alone (the capture point reaching the support polygon's edge, control.capture_point.capturable_velocity);
beside it, at the largest push held, the largest tilt of a loaded sole from the floor and each foot's CoP tracking
error against the CoP the balancer distributed to it (RMS in double support), both from the plant's ground truth.
Then the short demo's dance (arms at 0.5 Hz, pushes of 6 N·s) gives the CoP tracking error while the arms move.
Units: SI, tilts in degrees.
"""
import math
import tempfile

from humanoid_balance.bench import bisection
from humanoid_balance.bench.closed_loop import robot_mass
from humanoid_balance.bench.push_through_nodes import MAX_COP_ERROR, MAX_TILT, flat_soles, millimetres
from humanoid_balance.bench.recovery_steps import DIRECTIONS, lipm_bounds, pushed, recovered
from humanoid_balance.bench.results import Result
from humanoid_balance.control.balancer import STEPPING_MODES
from humanoid_balance.demo.runner import run_demo
from humanoid_balance.demo.scenario import SCENARIOS

__all__ = ["NOTE", "ROBOT", "run", "TARGETS"]

EXPERIMENT = "13 feet alone at the physical limit"
ROBOT = ("kangaroo_like", "talos")   # both, unless bench --robot names one
MODES = STEPPING_MODES
TARGETS = {"kinematic": 0.90, "momentum": 0.93}  # the fraction of the LIPM feet bound each mode is to hold
LOW, HIGH, RESOLUTION = 0.3, 1.1, 0.025  # the bisection's bounds and resolution, fractions of the LIPM feet bound
SMOKE_FRACTION, SMOKE_WATCHED = 0.5, 1.5
NOTE = ("13: the demo's closed loop (plant in lockstep, the four nodes in one process) on kangaroo_like and TALOS "
        "standing, recovery steps off; one push of 0.1 s at the pelvis, lateral, forward or backward, 3 s watched. "
        "The largest impulse held (no fall, standing still within 3 s, at most two lift-offs) by bisection to 2.5 % "
        "of the linear inverted pendulum's bound for the feet alone (control.capture_point.capturable_velocity), as "
        "N·s, m/s and that fraction; at it, the largest tilt of a loaded sole and each foot's CoP tracking error "
        "against the distributed CoP (RMS, double support) from the plant's ground truth; then the same error in the "
        "short demo's dance.")


def held(fraction, bound, mode, direction, robot, session, watched=3.0):
    """One push of ``fraction`` of the LIPM ``bound`` [N·s] on the feet alone; (fell, the push's figures)."""
    return pushed(fraction * bound, mode, direction, False, robot, session, watched)


def largest_held(bound, mode, direction, robot, session):
    """(the largest fraction of ``bound`` held, its push's figures or None)."""
    return bisection.largest_recovered(lambda fraction: held(fraction, bound, mode, direction, robot, session),
                                       recovered, LOW, HIGH, RESOLUTION)


def dance_cop_error(robot, mode, session):
    """The largest foot's CoP tracking RMS [m] in the short demo's dance (None: the robot has no dancing limb)."""
    with tempfile.TemporaryDirectory(prefix="feet_alone_dance_") as folder:
        _, figures, _ = run_demo(SCENARIOS["short"], folder, progress=session.progress, robot=robot, mode=mode,
                                 record=session.recording_path(f"{mode}_dance"))
    dance = figures["dancing arms"]
    return None if dance is None else dance["CoP tracking RMS, double support [m]"]


def run(smoke=False, robot=ROBOT, session=None):
    """The experiment's rows; ``smoke``: a push of half the forward bound on kangaroo_like in kinematic mode."""
    robots = robot if isinstance(robot, tuple) else (robot,)
    if smoke:
        bound = lipm_bounds(robots[0])["forward"][0]
        fell, push = held(SMOKE_FRACTION, bound, "kinematic", "forward", robots[0], session, SMOKE_WATCHED)
        tilt = math.degrees(push["largest sole tilt [rad]"])
        return [Result(EXPERIMENT, f"{robots[0]}, kinematic mode, {SMOKE_FRACTION:.0%} of the forward bound", "—",
                       "no fall, soles flat", f"{'fell' if fell else 'no fall'}, largest sole tilt {tilt:.1f}°",
                       not fell and push["largest sole tilt [rad]"] <= MAX_TILT)]
    rows = []
    for name in robots:
        mass, bounds = robot_mass(name), lipm_bounds(name)
        for mode in MODES:
            target = TARGETS[mode]
            for direction in DIRECTIONS:
                bound = bounds[direction][0]
                fraction, outcome = largest_held(bound, mode, direction, name, session)
                push = None if outcome is None else outcome[1]
                impulse = fraction * bound
                rows.append(Result(EXPERIMENT, f"{name}, {mode} mode: largest {direction} impulse held, feet alone",
                                   "mc_rtc, Kajita 2010: near the bound", f"≥ {target:.0%} of the LIPM feet bound",
                                   f"{impulse:.1f} N·s ({impulse / mass:.2f} m/s), {fraction:.0%} of "
                                   f"{bound:.1f} N·s", fraction >= target))
                rows.append(flat_soles(EXPERIMENT, f"{name}, {mode} mode, {direction}: at the largest held, "
                                       "largest sole tilt; CoP tracking RMS", push))
            error = dance_cop_error(name, mode, session)
            rows.append(Result(EXPERIMENT, f"{name}, {mode} mode: CoP tracking RMS in the short demo's dance", "—",
                               f"≤ {millimetres(MAX_COP_ERROR)}",
                               "no dancing limb" if error is None else millimetres(error),
                               None if error is None else error <= MAX_COP_ERROR))
    return rows
