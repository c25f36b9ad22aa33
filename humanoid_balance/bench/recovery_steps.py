"""Experiment 12: recovery steps (issue 40; Pratt et al.'s capture point, Englsberger et al.'s DCM).

The demo's closed loop (the plant in lockstep, the four nodes in one process) on the robot standing still; one push of
0.1 s on the pelvis, laterally, forwards or backwards, then WATCHED seconds. The largest impulse recovered is found by
bisection, with the balancer's recovery steps (``stepping: true``) and without them, in the same run. Recovered: no
fall, the CoM standing still (slower than the report's STILL_SPEED) within STILL_WITHIN of the push — wherever the
feet now are — and the soles lifted at most MAX_STEPS times (the plant's ground truth). Units: SI.
"""
import math

from humanoid_balance.bench import bisection
from humanoid_balance.bench.closed_loop import ClosedLoop, robot_config, robot_mass
from humanoid_balance.bench.push_through_nodes import push_through_nodes
from humanoid_balance.bench.results import Result
from humanoid_balance.control.balancer import STEPPING_MODES
from humanoid_balance.control.capture_point import capturable_velocity
from humanoid_balance.control.stepping import step_region
from humanoid_balance.control.zmp_com import GRAVITY

__all__ = ["NOTE", "ROBOT", "run", "pushed", "largest_recovered", "lipm_bounds"]

EXPERIMENT = "12 recovery steps"
ROBOT = "kangaroo_like"
MODES = STEPPING_MODES
SMOKE_MODE = "momentum"
DIRECTIONS = {"lateral": (0.0, 1.0, 0.0), "forward": (1.0, 0.0, 0.0), "backward": (-1.0, 0.0, 0.0)}
WATCHED = 3.0                  # [s] after the push
STILL_WITHIN = 3.0             # [s] after the push
MAX_STEPS = 2
SMOKE_IMPULSE, SMOKE_WATCHED = 12.0, 1.5  # [N·s, s]
LOW, HIGH, TOLERANCE = 4.0, 64.0, 2.0  # [N·s] the bisection's bounds and resolution
NOTE = ("12: the demo's closed loop (plant in lockstep, the four nodes in one process) standing still; one push of "
        "0.1 s at the pelvis, lateral, forward or backward, 3 s watched. The largest impulse recovered (no fall, the "
        "CoM standing still within 3 s wherever the feet are, at most two lift-offs of a sole) is found by bisection "
        "to 2 N·s, with the balancer's recovery steps and without them in the same run; beside each impulse the "
        "velocity change it gives the robot, impulse / mass; and the linear inverted pendulum's bounds for the robot "
        "as it stands (control.capture_point.capturable_velocity, Koolen et al. 2012): the impulse the feet alone "
        "can stop, and one step of the balancer's step_duration within its step region.")


def pushed(impulse, mode, direction, stepping, robot=ROBOT, session=None, watched=WATCHED):
    """One push of ``impulse`` [N·s] in ``direction`` (a DIRECTIONS key) through the nodes in ``mode``, with recovery
    steps or without, ``watched`` [s]; (fell, the push's figures: standing still after [s], feet lifted, ...)."""
    figures = push_through_nodes(impulse, mode, robot, session, DIRECTIONS[direction], watched,
                                 {"centroidal_balancer": {"stepping": stepping}},
                                 f"{direction}_{'stepping' if stepping else 'feet'}")
    return figures["fell"], figures["pushes"][0]


def lipm_bounds(robot=ROBOT):
    """Direction (a DIRECTIONS key) → (feet, one step): the largest impulses [N·s] the linear inverted pendulum of
    the robot standing in its reference posture can stop on its feet and with one recovery step (see the module)."""
    loop = ClosedLoop(robot_config(robot), stepping=True)
    loop.tick()
    balancer, mass = loop.balancer, robot_mass(robot)
    placements = balancer.support[1]
    com = balancer.kinematics.com
    omega = math.sqrt(GRAVITY / (com[2] - sum(placement.translation[2] for placement in placements) / len(placements)))
    region = step_region(balancer.config, balancer.leg_reach, placements)
    return {direction: tuple(mass * velocity for velocity in capturable_velocity(
        com, omega, placements, balancer.stepping.rectangles, region, balancer.config.step_duration, vector[:2]))
        for direction, vector in DIRECTIONS.items()}


def recovered(outcome):
    fell, push = outcome
    return not fell and push["standing still after [s]"] <= STILL_WITHIN and push["feet lifted"] <= MAX_STEPS


def largest_recovered(mode, direction, stepping, robot=ROBOT, session=None):
    """Bisection on the impulse [N·s] between LOW (taken as recovered) and HIGH; (the largest recovered, its push's
    figures)."""
    impulse, outcome = bisection.largest_recovered(
        lambda impulse: pushed(impulse, mode, direction, stepping, robot, session), recovered, LOW, HIGH, TOLERANCE)
    return impulse, None if outcome is None else outcome[1]


def run(smoke=False, robot=ROBOT, session=None):
    """The experiment's rows; ``smoke``: one 12 N·s lateral push in momentum mode with recovery steps, as in CI."""
    mass = robot_mass(robot)
    if smoke:
        fell, push = pushed(SMOKE_IMPULSE, SMOKE_MODE, "lateral", True, robot, session, SMOKE_WATCHED)
        return [Result(EXPERIMENT, f"{SMOKE_MODE} mode, {SMOKE_IMPULSE:g} N·s lateral, stepping", "—", "no fall",
                       f"{'fell' if fell else 'no fall'}, standing still after {push['standing still after [s]']:.2f}"
                       f" s, {push['feet lifted']} lift-offs", not fell)]
    rows, bounds = [], lipm_bounds(robot)
    for mode in MODES:
        for direction in DIRECTIONS:
            feet, _ = largest_recovered(mode, direction, False, robot, session)
            stepping, push = largest_recovered(mode, direction, True, robot, session)
            lifted = "—" if push is None else f"{push['feet lifted']}"
            rows += [Result(EXPERIMENT, f"{mode} mode: largest {direction} impulse recovered, stepping", "—",
                            f"≥ 2 × {feet:.0f} N·s (without stepping)",
                            f"{stepping:.0f} N·s ({stepping / mass:.2f} m/s); without stepping {feet:.0f} N·s "
                            f"({feet / mass:.2f} m/s); LIPM bounds: feet {bounds[direction][0]:.0f}, one step "
                            f"{bounds[direction][1]:.0f} N·s", stepping >= 2.0 * feet),
                     Result(EXPERIMENT, f"{mode} mode, {direction}: steps taken at the largest", "—",
                            f"≤ {MAX_STEPS}", lifted, None if push is None else push["feet lifted"] <= MAX_STEPS)]
    return rows

