"""The CoM height stage (control.com_height) on an analytic two-link leg: thigh and shin of 0.4 m, each at φ from the
vertical, so the hip stands 0.8 cos φ above the sole; the CoM 0.1 m above the hips. Straight legs put the CoM at
0.9 m above the sole, the lowest hips (half the legs' length) at 0.5 m; the cap where the limits stop a rise."""
import math

import pytest

from humanoid_balance.control.com_height import HEIGHT_CAP_RELAXATION, ComHeightRange

THIGH = SHIN = 0.4          # [m]
ABOVE_HIPS = 0.1            # [m] the CoM above the hips
GROUND = 0.05               # [m] the floor's height, world frame
PHI = math.acos(0.875)      # each link's angle from the vertical at the first update: the hips 0.7 m above the sole
LEGS = {"left_knee_actuator", "left_knee"}


def first_update(stage, ground=GROUND):
    hips = ground + (THIGH + SHIN) * math.cos(PHI)
    return stage.range(hips + ABOVE_HIPS, ground, lambda: hips)


def test_the_range_is_the_legs_from_half_their_length_to_straight():
    stage = ComHeightRange(THIGH + SHIN, LEGS)
    low, high = first_update(stage)
    assert low == pytest.approx(GROUND + 0.5 * (THIGH + SHIN) + ABOVE_HIPS)
    assert high == pytest.approx(GROUND + THIGH + SHIN + ABOVE_HIPS)


def test_the_range_is_measured_once_and_moves_with_the_ground():
    stage = ComHeightRange(THIGH + SHIN, LEGS)
    first_update(stage)

    def unused():
        raise AssertionError("the hips are measured at the first update only")
    low, high = stage.range(0.3, 0.25, unused)  # the robot has crouched on a floor 0.2 m higher
    assert (low, high) == pytest.approx((0.25 + 0.5 * (THIGH + SHIN) + ABOVE_HIPS, 0.25 + THIGH + SHIN + ABOVE_HIPS))


def test_legs_bent_beyond_half_their_length_and_a_robot_on_tiptoe():
    """Measured from a posture with the hips 0.3 m above the soles (beyond the lowest), and one with them 0.9 m (above
    straight legs: the range's top is where they stand)."""
    for hips, low, high in ((0.3, 0.5, 0.9), (0.9, 0.5, 1.0)):
        stage = ComHeightRange(THIGH + SHIN, LEGS)
        assert stage.range(hips + ABOVE_HIPS, 0.0, lambda: hips) == pytest.approx((low, high))


def test_a_rise_a_leg_limit_stops_caps_the_range_until_the_limits_let_go():
    stage = ComHeightRange(THIGH + SHIN, LEGS)
    first_update(stage)
    dt, com, reference = 0.01, 0.86, 0.95
    stage.update_cap(("left_knee_actuator",), lambda: (0.05, 0.0), com, reference, dt)
    assert stage.cap == com
    assert stage.range(com, GROUND, None)[1] == com
    stage.update_cap(("left_knee_actuator",), lambda: (0.05, 0.01), com + 0.01, reference, dt)
    assert stage.cap == com  # the lowest height a rise was stopped at
    for _ in range(100):  # the limits let go: the cap rises at HEIGHT_CAP_RELAXATION
        stage.update_cap((), None, com, reference, dt)
    assert stage.cap == pytest.approx(com + 100 * dt * HEIGHT_CAP_RELAXATION)
    for _ in range(351):  # 0.86 + 4.5 s × 0.02 m/s = 0.95, one more tick for the rounding
        stage.update_cap((), None, com, reference, dt)
    assert stage.cap is None  # at the reference: gone
    assert stage.range(com, GROUND, None)[1] == pytest.approx(GROUND + THIGH + SHIN + ABOVE_HIPS)


def test_what_is_not_a_stopped_rise_does_not_cap():
    stage = ComHeightRange(THIGH + SHIN, LEGS)
    first_update(stage)
    stage.update_cap(("left_elbow",), None, 0.86, 0.95, 0.01)               # a limit outside the legs
    stage.update_cap(("left_knee",), lambda: (-0.05, 0.0), 0.86, 0.95, 0.01)  # a descent held
    stage.update_cap(("left_knee",), lambda: (0.05, 0.05 - 0.5e-4), 0.86, 0.95, 0.01)  # within RISE_TOLERANCE
    assert stage.cap is None
    low, high = stage.range(0.86, GROUND, None)
    assert low == pytest.approx(GROUND + 0.5 * (THIGH + SHIN) + ABOVE_HIPS)
    assert high == pytest.approx(GROUND + THIGH + SHIN + ABOVE_HIPS)
