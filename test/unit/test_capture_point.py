"""Capture point and the step planner (Pratt et al. 2006; Englsberger et al., DCM) against the linear inverted
pendulum integrated numerically (scipy), and the swing trajectory against its own finite differences."""
import math

import numpy as np
import pinocchio as pin
import pytest
from scipy.integrate import solve_ivp

from humanoid_balance.control.balance_controller import BalancerConfig, Foot
from humanoid_balance.control.capture_point import (StepRegion, SwingTrajectory, capturable_velocity, capture_point,
                                                    capture_point_after, plan_step, sole_corners)
from humanoid_balance.control.foot_damping import LEVEL_PER_TICK
from humanoid_balance.control.modes.kinematic import RETURN_TURN_RATE
from humanoid_balance.control.stepping import RETURN_SPEED, Stepping
from humanoid_balance.model.soles import SoleRectangle
from humanoid_balance.model.support_polygon import SupportPolygon

HEIGHT, GRAVITY = 0.9, 9.81
OMEGA = math.sqrt(GRAVITY / HEIGHT)
SOLE = SoleRectangle(-0.08, 0.14, -0.05, 0.06)     # kangaroo_like-sized, sole frame [m]
FEET = [pin.SE3(np.eye(3), np.array([0.0, 0.1, 0.0])), pin.SE3(np.eye(3), np.array([0.0, -0.1, 0.0]))]
REGION = StepRegion(forward=0.35, backward=0.3, outward=0.55, inward=0.16)


def pendulum(com, velocity, zmp, duration):
    """c, ċ (2,) each after ``duration`` [s] of c̈ = ω² (c − p), integrated by scipy."""
    solution = solve_ivp(lambda t, x: np.r_[x[2:], OMEGA ** 2 * (x[:2] - zmp)], (0.0, duration),
                         np.r_[com, velocity], rtol=1e-10, atol=1e-12)
    return solution.y[:2, -1], solution.y[2:, -1]


def test_the_capture_point_runs_away_from_the_zmp_as_the_pendulum_says():
    com, velocity, zmp = np.array([0.01, 0.02]), np.array([0.1, 0.4]), np.array([0.03, 0.05])
    c, v = pendulum(com, velocity, zmp, 0.35)
    np.testing.assert_allclose(capture_point_after(capture_point(com, velocity, OMEGA), zmp, OMEGA, 0.35),
                               capture_point(c, v, OMEGA), atol=1e-8)


@pytest.mark.parametrize("short", [0.0, 0.03])
def test_a_foot_on_the_capture_point_at_touchdown_stops_the_pendulum_and_one_short_of_it_does_not(short):
    """The CoM pushed at 0.4 m/s sideways from between the feet: the planned step's sole centre is where ξ is at
    touchdown; with the ZMP there the pendulum comes to rest over it, 3 cm short it runs away."""
    com, velocity = np.zeros(2), np.array([0.0, 0.4])
    step = plan_step(capture_point(com, velocity, OMEGA), FEET, [SOLE, SOLE], OMEGA, 0.3, REGION)
    assert (step.swing, step.stance) == (0, 1)  # the left foot steps, towards the push
    c, v = pendulum(com, velocity, step.zmp, step.duration)
    np.testing.assert_allclose(step.predicted, capture_point(c, v, OMEGA), atol=1e-8)
    centre = step.target.act(np.array([(SOLE.x_min + SOLE.x_max) / 2, (SOLE.y_min + SOLE.y_max) / 2, 0.0]))[:2]
    np.testing.assert_allclose(centre, step.predicted, atol=1e-9)
    assert step.captures
    c_end, v_end = pendulum(c, v, centre - [0.0, short], 3.0)
    if short:
        assert np.linalg.norm(v_end) > 1.0  # diverged
    else:
        assert np.linalg.norm(v_end) < 1e-3 and np.linalg.norm(c_end - centre) < 1e-3


def test_a_step_beyond_the_legs_reach_is_clamped_and_says_it_does_not_capture():
    capture = np.array([0.0, 1.2])
    step = plan_step(capture, FEET, [SOLE, SOLE], OMEGA, 0.3, REGION)
    offset = step.target.translation[:2] - FEET[1].translation[:2]
    assert offset[1] == pytest.approx(REGION.outward) and not step.captures


@pytest.mark.parametrize("capture, swing", [((0.0, -0.4), 1), ((0.5, 0.02), 0), ((-0.5, -0.02), 1)])
def test_the_foot_on_the_capture_points_side_steps_never_across_the_other(capture, swing):
    step = plan_step(np.array(capture), FEET, [SOLE, SOLE], OMEGA, 0.3, REGION)
    assert step.swing == swing
    lateral = (step.target.translation - FEET[step.stance].translation)[1] * (1 if swing == 0 else -1)
    assert REGION.inward - 1e-12 <= lateral <= REGION.outward + 1e-12


def test_a_step_forwards_keeps_the_stance_width_with_the_sole_on_the_capture_point_ahead():
    """Pushed straight ahead at 0.6 m/s, ξ 4 cm beyond the toes: the left foot steps with its sole's centre ahead on ξ
    at touchdown (the LIPM, integrated by scipy), as far from the right foot sideways as it stood — where ξ, running
    sideways away from the stance sole through the swing, lands inside the new support polygon — not drawn in
    towards ξ's line."""
    com, velocity = np.zeros(2), np.array([0.6, 0.0])
    step = plan_step(capture_point(com, velocity, OMEGA), FEET, [SOLE, SOLE], OMEGA, 0.3, REGION._replace(width=0.2))
    c, v = pendulum(com, velocity, step.zmp, step.duration)
    predicted = capture_point(c, v, OMEGA)
    assert step.swing == 0 and predicted[1] > 0.05  # ξ has run 5 cm towards the swing foot's side
    centre = step.target.act(np.array([*SOLE.centre()[:2], 0.0]))[:2]
    assert centre[0] == pytest.approx(predicted[0], abs=1e-9)
    assert step.target.translation[1] == pytest.approx(FEET[0].translation[1], abs=1e-12)
    landed = SupportPolygon.of_points(np.vstack([sole_corners(FEET[1], SOLE), sole_corners(step.target, SOLE)]))
    assert step.captures and landed.depth(predicted) >= 0.02


@pytest.mark.parametrize("direction, edge", [((1.0, 0.0), SOLE.x_max), ((-1.0, 0.0), -SOLE.x_min),
                                             ((0.0, 1.0), 0.1 + SOLE.y_max)])
def test_the_feet_alone_stop_the_velocity_that_puts_the_capture_point_on_the_edge(direction, edge):
    """Standing over the middle of the feet: ξ = Δv u/ω reaches the support polygon's edge at Δv = ω · distance."""
    feet, _ = capturable_velocity((0.0, 0.0), OMEGA, FEET, [SOLE, SOLE], REGION, 0.35, direction)
    assert feet == pytest.approx(OMEGA * edge, rel=1e-9)


def test_a_step_forward_catches_what_the_pendulum_carries_to_the_landed_soles_toe_and_no_more():
    """The one-step bound forwards, against the pendulum integrated by scipy: from rest over the feet with the
    bound's velocity, the ZMP on the stance toe for the swing, ξ at touchdown is on the toe of a sole landed as far
    forward as the region allows; 2 % faster, it is beyond. And it beats the feet alone."""
    duration = 0.35
    feet, step = capturable_velocity((0.0, 0.0), OMEGA, FEET, [SOLE, SOLE], REGION, duration, (1.0, 0.0))
    toe = np.array([SOLE.x_max, -0.1])  # the stance sole's farthest point forwards (either foot)
    landed_toe = REGION.forward + SOLE.x_max
    for scale, beyond in ((1.0, False), (1.02, True)):
        com, velocity = pendulum(np.zeros(2), np.array([scale * step, 0.0]), toe, duration)
        xi = capture_point(com, velocity, OMEGA)[0]
        assert (xi > landed_toe + 1e-3) if beyond else xi == pytest.approx(landed_toe, abs=1e-6)
    assert step > 1.5 * feet


@pytest.mark.parametrize("duration, beats_the_feet", [(0.35, False), (0.2, True)])
def test_a_step_sideways_beats_the_feet_only_if_it_is_quick(duration, beats_the_feet):
    """Pushed sideways the stance is the other foot, its inner edge the ZMP while ξ runs away from it: at 0.35 s
    even the region's widest step lands short of the feet's own edge, at 0.2 s beyond it (ξ(T) by hand)."""
    feet, step = capturable_velocity((0.0, 0.0), OMEGA, FEET, [SOLE, SOLE], REGION, duration, (0.0, 1.0))
    inner_edge, landed_edge = -0.1 + SOLE.y_max, -0.1 + REGION.outward + SOLE.y_max
    by_hand = OMEGA * (inner_edge + (landed_edge - inner_edge) * math.exp(-OMEGA * duration))
    assert step == pytest.approx(max(feet, by_hand), rel=1e-9)
    assert (by_hand > feet) == beats_the_feet


def test_the_swing_trajectory_is_smooth_lifts_and_lands_on_its_target():
    start = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, 0.1), np.array([0.0, 0.1, 0.0]))
    target = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, -0.2), np.array([0.15, 0.35, 0.01]))
    swing = SwingTrajectory(start, target, 0.4, 0.05)
    h = 1e-6
    for t in np.linspace(0.01, 0.39, 9):
        (before, _), (_, twist), (after, _) = swing.at(t - h), swing.at(t), swing.at(t + h)
        np.testing.assert_allclose(twist[:3], (after.translation - before.translation) / (2 * h), atol=1e-6)
        np.testing.assert_allclose(twist[3:], pin.log3(after.rotation @ before.rotation.T) / (2 * h), atol=1e-6)
    end, end_twist = swing.at(0.4)
    assert end.isApprox(target) and np.allclose(end_twist, 0.0) and np.allclose(swing.at(0.0)[1], 0.0)
    assert swing.at(0.2)[0].translation[2] == pytest.approx(0.005 + 0.05)


def recovery_stepping():
    """A Stepping on FEET that steps as soon as ξ leaves their support polygon, lifted by a sideways CoM velocity."""
    config = BalancerConfig(feet=(Foot("left", "l", ()), Foot("right", "r", ())), stepping=True)
    stepping = Stepping(config.feet, [SOLE, SOLE], config, REGION)
    polygon = SupportPolygon.of_points(np.vstack([sole_corners(foot, SOLE) for foot in FEET]))
    com = np.array([0.0, 0.0, HEIGHT])
    stepping.update(0.01, com, [0.0, 0.6, 0.0], OMEGA, FEET, (0, 1), polygon, com)  # ξ 0.19 m out: the left foot
    assert stepping.phase == "swing" and stepping.step.swing == 0
    return stepping, com


def test_a_recovery_step_follows_the_capture_point_where_the_pendulum_takes_it():
    """Step adjustment: ξ having moved since lift-off (a push goes on, the ankle acts), the swing sole's centre goes
    where the LIPM, integrated by scipy with the ZMP held at the stance sole's point nearest ξ, puts ξ at touchdown,
    on the floor the foot left."""
    stepping, com = recovery_stepping()
    velocity = np.array([0.05, 0.5])
    lifted = [stepping.swing.at(stepping.elapsed + 0.1)[0], FEET[1]]  # the sole on its way
    tick = stepping.update(0.1, com, np.r_[velocity, 0.0], OMEGA, lifted, (1,), None, com)
    remaining = stepping.step.duration - stepping.elapsed
    zmp = SupportPolygon.of_points(sole_corners(FEET[1], SOLE)).nearest(capture_point(com, velocity, OMEGA))
    c, v = pendulum(com[:2], velocity, zmp, remaining)
    centre = tick.target.act(np.array([*SOLE.centre()[:2], 0.0]))
    np.testing.assert_allclose(centre[:2], c + v / OMEGA, atol=1e-6)
    assert tick.target.translation[2] == pytest.approx(FEET[0].translation[2])
    assert stepping.swing.target == tick.target


def test_a_swing_sole_lands_on_the_floor_not_on_a_stance_sole_that_tilts():
    """The stance sole pitched 10° about its toe (its origin 2.4 cm up), the swing sole as high above the floor late in
    the swing: no touchdown; 1 mm above it: landed, both feet carrying the robot."""
    stepping, com = recovery_stepping()
    toe = np.array([SOLE.x_max, 0.0, 0.0])
    tilt = pin.SE3(pin.rpy.rpyToMatrix(0.0, np.radians(10.0), 0.0), np.zeros(3))
    stance = FEET[1] * pin.SE3(np.eye(3), toe) * tilt * pin.SE3(np.eye(3), -toe)
    assert stance.translation[2] > 0.02
    for height, phase in ((0.024, "swing"), (0.001, "standing")):
        sole = pin.SE3(np.eye(3), stepping.step.target.translation + [0.0, 0.0, height])
        stepping.update(0.1, com, np.zeros(3), OMEGA, [sole, stance], (1,), None, com)
        assert stepping.phase == phase, height
    assert stepping.taken == 1 and stepping.update(0.01, com, np.zeros(3), OMEGA, [sole, stance], (1,), None,
                                                   com).active == (0, 1)


def test_a_swing_sole_pressed_below_the_stance_sole_has_landed_and_the_feet_stand_level_there():
    """Late in the swing the sole, 5 mm above the floor it left, is below the stance sole, which it has lifted 20 mm
    off the floor: landed. Once both are read in contact, the stance foot, still up, carries nothing: the feet stood
    level at touchdown, not as they are now."""
    stepping, com = recovery_stepping()
    stance = pin.SE3(np.eye(3), FEET[1].translation + [0.0, 0.0, 0.02])
    sole = pin.SE3(np.eye(3), stepping.step.target.translation + [0.0, 0.0, 0.005])
    stepping.update(0.2, com, np.zeros(3), OMEGA, [sole, stance], (1,), None, com)
    assert stepping.phase == "standing" and stepping.taken == 1
    ticks = [stepping.update(0.01, com, np.zeros(3), OMEGA, [sole, stance], (0, 1), None, com) for _ in range(2)]
    assert ticks[-1].active == (0,) and stepping.lifted == (False, True)


def tipped_stepping(board, stepping, turn_rate=None):
    """A Stepping standing on FEET, the right sole on a board ``board`` [m] high; the feet, the CoM and its polygon."""
    config = BalancerConfig(feet=(Foot("left", "l", ()), Foot("right", "r", ())), stepping=stepping)
    steps = Stepping(config.feet, [SOLE, SOLE], config, REGION, turn_rate)
    feet = [FEET[0], pin.SE3(np.eye(3), FEET[1].translation + [0.0, 0.0, board])]
    polygon = SupportPolygon.of_points(np.vstack([sole_corners(foot, SOLE) for foot in feet]))
    com = np.array([0.0, 0.05, HEIGHT])
    assert steps.update(0.002, com, np.zeros(3), OMEGA, feet, (0, 1), polygon, com).active == (0, 1)
    return steps, feet, polygon, com


@pytest.mark.parametrize("board", [0.0, 0.05])
def test_a_foot_a_push_has_lifted_carries_nothing_and_goes_back_down_where_it_stood(board):
    """Standing (the right foot on a board or not), a push rolls the robot onto its left foot: the right sole 5 mm up
    changes nothing; 15 mm up beside the left (rolled 5°, drifted 3 cm inwards), it no longer carries the robot
    whatever its load reads, the contact estimator is told (lifted), the CoM reference stays where it was, over both
    feet (not restarted from the CoM over the left sole, which would carry the robot on outwards), and the sole's twist
    points back where it stood at RETURN_SPEED, turning it flat at the kinematic mode's RETURN_TURN_RATE (100 /s at
    500 Hz), at most LEVEL_PER_TICK of its tilt a tick (20 /s at 100 Hz); within 1 mm of it again, both feet carry."""
    steps, feet, polygon, com = tipped_stepping(board, stepping=False, turn_rate=RETURN_TURN_RATE)
    home = feet[1]
    nudged = [feet[0], pin.SE3(home.rotation, home.translation + [0.0, 0.0, 0.005])]
    assert steps.update(0.002, com, np.zeros(3), OMEGA, nudged, (0, 1), polygon, com).active == (0, 1)
    rolled = pin.SE3(pin.rpy.rpyToMatrix(np.radians(5.0), 0.0, 0.0), home.translation + [0.0, 0.03, 0.0])
    rolled.translation[2] += 0.015 - (SOLE.corners() @ rolled.rotation[2]).min()  # its lowest corner 15 mm up
    tick = steps.update(0.002, com, np.zeros(3), OMEGA, [feet[0], rolled], (0, 1), polygon, com)
    assert tick.active == (0,) and steps.lifted == (False, True)
    assert tick.over == (0, 1) and not tick.reset_reference
    twist = tick.twists["right"]
    back = np.r_[home.translation[:2] - rolled.translation[:2], -0.015]
    np.testing.assert_allclose(twist[:3], RETURN_SPEED * back / np.linalg.norm(back), atol=1e-12)
    np.testing.assert_allclose(twist[3:], [-100.0 * np.radians(5.0), 0.0, 0.0], atol=1e-12)
    assert RETURN_TURN_RATE == 100.0 and LEVEL_PER_TICK / 0.002 == pytest.approx(100.0)
    tick = steps.update(0.01, com, np.zeros(3), OMEGA, [feet[0], rolled], (0, 1), polygon, com)
    assert tick.over == (0, 1) and not tick.reset_reference  # ... for as long as the foot is up
    np.testing.assert_allclose(tick.twists["right"][3:], [-20.0 * np.radians(5.0), 0.0, 0.0], atol=1e-12)
    landed = [feet[0], pin.SE3(home.rotation, home.translation + [0.0, 0.0, 0.001])]
    tick = steps.update(0.002, com, np.zeros(3), OMEGA, landed, (0, 1), polygon, com)
    assert tick.active == (0, 1) and steps.lifted == (False, False) and not tick.twists


def test_a_foot_in_the_air_goes_back_beside_the_carrying_sole_where_it_stood_not_where_it_last_touched():
    """Its home is where it stood beside the other when both stood: a sole that skims the floor while the robot rocks,
    touching it 2 cm inwards for a tick (the contact estimator saying so, its height level with the other), is still
    sent back to where it stood, not to where it touched (else each touch moved its home on, and the stance narrowed
    by 3-4 cm after a sideways push); and if the carrying sole has slid 1 cm outwards and turned 5° since, the home
    moves and turns with it, as a rigid pair of feet (turned at swing_gain without a turn rate of its own)."""
    steps, feet, polygon, com = tipped_stepping(0.0, stepping=False)
    touched = [feet[0], pin.SE3(feet[1].rotation, feet[1].translation + [0.0, 0.02, 0.0])]
    steps.update(0.002, com, np.zeros(3), OMEGA, touched, (0, 1), polygon, com)
    aloft = pin.SE3(np.eye(3), touched[1].translation + [0.0, 0.0, 0.004])
    tick = steps.update(0.002, com, np.zeros(3), OMEGA, [feet[0], aloft], (0,), polygon, com)
    back = np.r_[feet[1].translation[:2] - aloft.translation[:2], -0.004]
    np.testing.assert_allclose(tick.twists["right"][:3], RETURN_SPEED * back / np.linalg.norm(back), atol=1e-12)
    turn = pin.rpy.rpyToMatrix(0.0, 0.0, np.radians(5.0))
    slid = pin.SE3(turn, feet[0].translation + [0.0, 0.01, 0.0])
    tick = steps.update(0.002, com, np.zeros(3), OMEGA, [slid, aloft], (0,), polygon, com)
    home = slid.translation[:2] + turn[:2, :2] @ (feet[1].translation[:2] - feet[0].translation[:2])
    back = np.r_[home - aloft.translation[:2], -0.004]
    np.testing.assert_allclose(tick.twists["right"][:3], RETURN_SPEED * back / np.linalg.norm(back), atol=1e-12)
    np.testing.assert_allclose(tick.twists["right"][3:], [0.0, 0.0, steps.config.swing_gain * np.radians(5.0)],
                               atol=1e-12)


def test_with_recovery_steps_a_foot_a_push_has_lifted_steps():
    """The same push with recovery steps on: the right foot takes a recovery step (where ξ goes) instead."""
    steps, feet, polygon, com = tipped_stepping(0.0, stepping=True)
    lifted = pin.SE3(np.eye(3), feet[1].translation + [0.0, 0.0, 0.015])
    steps.update(0.002, com, np.zeros(3), OMEGA, [feet[0], lifted], (0, 1), polygon, com)
    assert steps.phase == "swing" and steps.step.swing == 1 and steps.recovery and steps.lifted == (False, True)
