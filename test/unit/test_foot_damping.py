"""Each stance sole's wrench under control (issue 52): the DCM feedback's ZMP against the linear inverted pendulum
integrated by scipy, its wrench's ZMP against the ZMP's definition, the split of a known ZMP between two feet against
the lever rule, and foot damping, force difference control and levelling against their laws worked by hand (which
way a sole turns, at what rate)."""
import math

import numpy as np
import pinocchio as pin
import pytest
from scipy.integrate import solve_ivp

from humanoid_balance.control.dcm_feedback import DcmFeedback, zmp_wrench
from humanoid_balance.control.foot_damping import (DAMPING_PER_TICK, LEVEL_PER_TICK, FootDampingGains, levelling_rate,
                                                   levelling_twists, sole_twists)
from humanoid_balance.control.momentum_balance import WrenchDistribution, contact_wrench_map
from humanoid_balance.model.soles import VERTICAL, SoleRectangle, sole_tilt

MASS, HEIGHT, GRAVITY = 50.0, 0.9, 9.81
OMEGA = math.sqrt(GRAVITY / HEIGHT)
WEIGHT = MASS * GRAVITY
DT = 0.002  # [s] the control period: 500 Hz
SOLE = SoleRectangle(-0.1, 0.1, -0.05, 0.05)
FEET = [pin.SE3(np.eye(3), np.array([0.0, 0.1, 0.0])), pin.SE3(np.eye(3), np.array([0.0, -0.1, 0.0]))]
GAINS = FootDampingGains(cop_admittance=3.0, force_difference_admittance=0.03, height_damping=1.0,
                         max_tilt_rate=0.5, max_lift_rate=0.05, level_gain=40.0, tilt_deadband=0.01)


def wrench_zmp(wrench, com):
    """The ZMP on the floor z = 0 of a CoM wrench [f; τ] (world axes, at the CoM): where its moment has no
    horizontal part."""
    force, torque = wrench[:3], wrench[3:]
    moment_at_origin = torque + np.cross(com, force)
    return np.array([-moment_at_origin[1], moment_at_origin[0]]) / force[2]


def sole_cop(wrench):
    return np.array([-wrench[4], wrench[3]]) / wrench[2]


def test_the_dcm_feedback_makes_the_capture_point_error_decay_at_its_gain():
    """ξ̇ = ω (ξ − p_d) with p_d of the law, the reference at rest: ξ − ξ_ref = e₀ e^{−k t} (scipy)."""
    gain, reference = 1.5, np.array([0.02, -0.01])
    law = DcmFeedback(gain, 0.0, 15.0, 0.05)
    start = reference + np.array([0.03, 0.04])
    solution = solve_ivp(lambda t, xi: OMEGA * (xi - law.desired_zmp(xi, reference, reference, OMEGA, 0.0)),
                         (0.0, 1.0), start, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(solution.y[:, -1] - reference, (start - reference) * math.exp(-gain), rtol=1e-6)


def test_the_dcm_error_average_saturates_and_resets():
    law = DcmFeedback(1.0, 5.0, 0.1, 0.05)
    for _ in range(1000):
        zmp = law.desired_zmp(np.array([1.0, 0.0]), np.zeros(2), np.zeros(2), OMEGA, 0.01)
    np.testing.assert_allclose(law.average_error, [0.05, 0.0])
    np.testing.assert_allclose(zmp, [(1.0 + 1.0 / OMEGA) + 5.0 / OMEGA * 0.05, 0.0])
    law.reset()
    np.testing.assert_array_equal(law.average_error, 0.0)


def test_the_zmp_wrench_has_its_zmp_where_asked_and_carries_the_weight():
    com, zmp = np.array([0.01, 0.03, HEIGHT]), np.array([0.05, -0.02])
    wrench = zmp_wrench(MASS, com, zmp, OMEGA)
    np.testing.assert_allclose(wrench_zmp(wrench, com), zmp, atol=1e-12)
    assert wrench[2] == pytest.approx(WEIGHT)
    np.testing.assert_array_equal(wrench[3:], 0.0)


@pytest.mark.parametrize("zmp_y, left_share", [(0.05, 0.75), (0.0, 0.5), (-0.025, 0.375)])
def test_the_lever_rule_splits_a_known_zmp_between_two_feet(zmp_y, left_share):
    """Two soles at y = ±0.1 m, the ZMP between them: each carries its lever-rule share of the weight with its CoP
    near its centre (within a tenth of its half-width), and together their wrenches have the ZMP asked."""
    distribution = WrenchDistribution([SOLE, SOLE], f_min=10.0, torque_length=0.0125)
    com = np.array([0.0, zmp_y, HEIGHT])
    wrench = zmp_wrench(MASS, com, np.array([0.0, zmp_y]), OMEGA)
    G = [contact_wrench_map(sole, com) for sole in FEET]
    for _ in range(5):  # warm-started: the internal forces leave over a few solves
        result = distribution.solve(G, wrench, (0, 1), MASS)
    loads = result.wrenches[:, 2]
    np.testing.assert_allclose(loads / loads.sum(), [left_share, 1.0 - left_share], atol=0.01)
    for sole_wrench in result.wrenches:
        assert np.abs(sole_cop(sole_wrench)).max() < 0.005
    total = sum(G_i @ w for G_i, w in zip(G, result.wrenches))
    np.testing.assert_allclose(wrench_zmp(total, com), [0.0, zmp_y], atol=1e-4)


@pytest.mark.parametrize("torque_length", [0.0125, 0.05, None])
def test_a_zmp_off_the_middle_is_paid_in_load_and_ankle_torque_in_the_ratio_of_their_levers(torque_length):
    """Two soles at y = ±d, the ZMP at y_p between them: among the wrenches of the same sum, the least in the norm
    ‖f‖² + ‖τ/ℓ‖² (Lagrange, by hand) shift δ = W y_p d / 2(d² + ℓ²) of load onto the nearer foot and turn each
    ankle by τ_x = W y_p ℓ² / 2(d² + ℓ²): the kinematic mode's ℓ, an eighth of the sole's width, pays 1.5 % of the
    moment in ankle torque, ℓ half the width 20 %; the least wrenches (no ℓ: 1 m, the momentum mode's split) 99 %,
    both CoPs off their centres by nearly the ZMP's own offset, the reason the position-controlled mode takes the
    lever rule."""
    d, zmp_y = 0.1, 0.02
    distribution = WrenchDistribution([SOLE, SOLE], f_min=10.0, torque_length=torque_length)
    com = np.array([0.0, zmp_y, HEIGHT])
    G = [contact_wrench_map(sole, com) for sole in FEET]
    for _ in range(5):
        result = distribution.solve(G, zmp_wrench(MASS, com, np.array([0.0, zmp_y]), OMEGA), (0, 1), MASS)
    ell = 1.0 if torque_length is None else torque_length
    shift, torque = (WEIGHT * zmp_y * lever / (2.0 * (d * d + ell * ell)) for lever in (d, ell * ell))
    np.testing.assert_allclose(result.wrenches[:, 2], [WEIGHT / 2 + shift, WEIGHT / 2 - shift], atol=0.05)
    np.testing.assert_allclose(result.wrenches[:, 3], [torque, torque], atol=0.005)


def test_a_sole_pressed_harder_on_its_toes_than_asked_lifts_them_at_the_admittance_rate():
    """Measured CoP 3 cm ahead of the distributed one under 250 N: τ_y − τ_y,d = −0.03 · 250 N·m, so the sole turns
    about −y at a / (m g) · 7.5 rad/s, and its toe (+x) rises."""
    desired = [np.array([0.0, 0.0, 250.0, 0.0, 0.0, 0.0])] * 2
    measured = [np.array([0.0, 0.0, 250.0, 0.0, -0.03 * 250.0, 0.0]), desired[1]]
    twists = sole_twists(desired, measured, FEET, (0, 1), WEIGHT, GAINS._replace(level_gain=0.0), DT)
    rate = GAINS.cop_admittance / WEIGHT * 0.03 * 250.0
    np.testing.assert_allclose(twists[0], [0, 0, 0, 0, -rate, 0], atol=1e-12)
    np.testing.assert_allclose(twists[1], 0.0, atol=1e-12)
    toe = np.array([SOLE.x_max, 0.0, 0.0])
    assert np.cross(twists[0][3:], toe)[2] > 0.0


def test_the_lead_turns_a_sole_whose_toe_load_grows_ahead_of_its_error():
    """The toes' torque growing by 0.5 N·m a tick (250 N·m/s at 500 Hz) on a CoP already 3 cm ahead: with the lead
    T = 0.05 s the sole turns at a / (m g) · (7.5 + 0.05 · 250) rad/s, as if its error were T later; its load
    doubling under the same CoP is no move of its CoP, and a foot with no earlier reading (or one of 1 % of its load,
    whose CoP was not defined), or no lead, turns at its error's rate alone."""
    desired = [np.array([0.0, 0.0, 250.0, 0.0, 0.0, 0.0])]
    measured = [np.array([0.0, 0.0, 250.0, 0.0, -0.03 * 250.0, 0.0])]
    before = [measured[0] + np.array([0.0, 0.0, 0.0, 0.0, 0.5, 0.0])]
    gains = GAINS._replace(level_gain=0.0, torque_lead=0.05)
    admittance = gains.cop_admittance / WEIGHT
    twist = sole_twists(desired, measured, FEET[:1], (0,), WEIGHT, gains, DT, previous=before)[0]
    np.testing.assert_allclose(twist[3:], [0.0, -admittance * (7.5 + 0.05 * 0.5 / DT), 0.0], atol=1e-12)
    landing = [measured[0] * np.array([1.0, 1.0, 0.5, 1.0, 0.5, 1.0])]  # half the load, the same CoP: no move
    for previous, lead in ((None, 0.05), ([None], 0.05), (before, 0.0), (landing, 0.05), ([before[0] * 0.01], 0.05)):
        twist = sole_twists(desired, measured, FEET[:1], (0,), WEIGHT, gains._replace(torque_lead=lead), DT,
                            previous=previous)[0]
        np.testing.assert_allclose(twist[3:], [0.0, -admittance * 7.5, 0.0], atol=1e-12)


def test_a_slower_loop_turns_the_sole_at_the_admittance_its_period_allows():
    """The same toes at 100 Hz and at 1 kHz: a (3 rad/(s·m)) is more than DAMPING_PER_TICK / 0.01 s, so at 100 Hz the
    sole turns at DAMPING_PER_TICK / 0.01 / (m g) · 7.5 rad/s; at 1 kHz (6 rad/(s·m) allowed) at a's own rate."""
    desired = [np.array([0.0, 0.0, 250.0, 0.0, 0.0, 0.0])]
    measured = [np.array([0.0, 0.0, 250.0, 0.0, -0.03 * 250.0, 0.0])]
    gains = GAINS._replace(level_gain=0.0)
    assert gains.cop_admittance > DAMPING_PER_TICK / 0.01
    for period, admittance in ((0.01, DAMPING_PER_TICK / 0.01), (0.001, gains.cop_admittance)):
        twist = sole_twists(desired, measured, FEET[:1], (0,), WEIGHT, gains, period)[0]
        np.testing.assert_allclose(twist[3:], [0.0, -admittance / WEIGHT * 7.5, 0.0], atol=1e-12)


def test_foot_damping_turns_a_yawed_sole_about_its_own_axes_and_clips_the_rate():
    """A sole yawed by 90°: its roll axis is the world's y. A CoP too far to its left (+y of the sole) rolls it about
    its own −x, the world's −y; a large error saturates at max_tilt_rate."""
    yawed = [pin.SE3(pin.utils.rotate("z", math.pi / 2), np.zeros(3))]
    desired = [np.array([0.0, 0.0, 300.0, 0.0, 0.0, 0.0])]
    measured = [np.array([0.0, 0.0, 300.0, 0.02 * 300.0, 0.0, 0.0])]
    gains = GAINS._replace(level_gain=0.0)
    twist = sole_twists(desired, measured, yawed, (0,), WEIGHT, gains, DT)[0]
    np.testing.assert_allclose(twist[3:], [0.0, gains.cop_admittance / WEIGHT * 6.0, 0.0], atol=1e-12)
    measured = [np.array([0.0, 0.0, 300.0, 1e4, 0.0, 0.0])]
    twist = sole_twists(desired, measured, yawed, (0,), WEIGHT, gains, DT)[0]
    np.testing.assert_allclose(np.abs(twist[3:]).max(), gains.max_tilt_rate)


def test_force_difference_control_raises_the_overloaded_sole_and_lowers_the_other():
    """Distributed 300 / 300 N, measured 400 / 200 N: v_z = −A_f (e_i − ē) = ±a_f / (m g) · 100 m/s."""
    desired = [np.array([0.0, 0.0, 300.0, 0.0, 0.0, 0.0])] * 2
    measured = [np.array([0.0, 0.0, 400.0, 0.0, 0.0, 0.0]), np.array([0.0, 0.0, 200.0, 0.0, 0.0, 0.0])]
    twists = sole_twists(desired, measured, FEET, (0, 1), WEIGHT, GAINS, DT)
    speed = GAINS.force_difference_admittance / WEIGHT * 100.0
    assert twists[0][2] == pytest.approx(speed) and twists[1][2] == pytest.approx(-speed)
    raised = [FEET[0], pin.SE3(np.eye(3), np.array([0.0, -0.1, 0.01]))]  # the right sole 1 cm up: back together
    twists = sole_twists(desired, desired, raised, (0, 1), WEIGHT, GAINS, DT)
    assert twists[0][2] == pytest.approx(0.005 * GAINS.height_damping)
    assert twists[1][2] == pytest.approx(-0.005 * GAINS.height_damping)


def test_a_tilted_sole_levels_back_beyond_the_deadband_and_an_aerial_or_unknown_one_is_left_alone():
    """A sole rolled 3° about +x (its +y edge up) turns back about −x at k_l (θ − θ₀); within θ₀, not at all."""
    tilt = math.radians(3.0)
    normal = pin.utils.rotate("x", tilt)[:, 2]
    assert sole_tilt(normal) == pytest.approx(tilt)
    np.testing.assert_allclose(levelling_rate(normal, VERTICAL, GAINS, DT),
                               [-GAINS.level_gain * (tilt - GAINS.tilt_deadband), 0.0, 0.0], rtol=1e-9, atol=1e-15)
    np.testing.assert_array_equal(levelling_rate(pin.utils.rotate("y", 0.005)[:, 2], VERTICAL, GAINS, DT), 0.0)
    slow = levelling_rate(normal, VERTICAL, GAINS, 0.01)  # at 100 Hz: a quarter of the tilt beyond θ₀ per tick, not k_l
    np.testing.assert_allclose(slow, [-LEVEL_PER_TICK / 0.01 * (tilt - GAINS.tilt_deadband), 0.0, 0.0], rtol=1e-9,
                               atol=1e-15)
    desired = [np.array([0.0, 0.0, 300.0, 0.0, 0.0, 0.0])] * 2
    assert set(sole_twists(desired, [desired[0], None], FEET, (0, 1), WEIGHT, GAINS, DT)) == {0}
    assert set(sole_twists(desired, desired, FEET, (1,), WEIGHT, GAINS, DT)) == {1}


def test_while_the_robot_may_be_rolling_a_sole_levels_beyond_the_smaller_edge_deadband():
    """A sole rolled 1.5° about +y between θ₀ = 2° (the estimate's error) and the edge deadband 1°: left alone
    standing, turned back at k_l (θ − 1°) about −y (its toes down) while the robot may be rolling; without an edge
    deadband, θ₀ either way."""
    gains = GAINS._replace(tilt_deadband=math.radians(2.0), edge_deadband=math.radians(1.0), cop_admittance=0.0,
                           force_difference_admittance=0.0, height_damping=0.0)
    tilt = math.radians(1.5)
    rolled = [pin.SE3(pin.utils.rotate("y", tilt), FEET[0].translation), FEET[1]]
    wrenches = [np.array([0.0, 0.0, 300.0, 0.0, 0.0, 0.0])] * 2
    standing = sole_twists(wrenches, wrenches, rolled, (0, 1), WEIGHT, gains, DT)
    np.testing.assert_array_equal(standing[0], 0.0)
    rolling = sole_twists(wrenches, wrenches, rolled, (0, 1), WEIGHT, gains, DT, rolling=True)
    np.testing.assert_allclose(rolling[0][3:], [0.0, -gains.level_gain * (tilt - math.radians(1.0)), 0.0], rtol=1e-9,
                               atol=1e-15)
    np.testing.assert_array_equal(rolling[1], 0.0)  # the flat sole stays as it is
    without = sole_twists(wrenches, wrenches, rolled, (0, 1), WEIGHT, gains._replace(edge_deadband=None), DT,
                          rolling=True)
    np.testing.assert_array_equal(without[0], 0.0)


def test_the_levelling_alone_turns_only_the_tilted_soles_and_never_moves_them():
    """On torque drives (no foot damping) a sole rolled 1.5° about +y is left alone within θ₀ = 2°, and turned back
    at k_l (θ − 1°) about −y beyond the edge deadband (1°) while the robot may be rolling; the flat sole gets no twist,
    and no sole a linear velocity."""
    gains = GAINS._replace(tilt_deadband=math.radians(2.0), edge_deadband=math.radians(1.0))
    tilt = math.radians(1.5)
    rolled = [pin.SE3(pin.utils.rotate("y", tilt), FEET[0].translation), FEET[1]]
    assert levelling_twists(rolled, (0, 1), gains, DT) == {}
    rolling = levelling_twists(rolled, (0, 1), gains, DT, rolling=True)
    assert set(rolling) == {0}
    np.testing.assert_allclose(rolling[0], [0.0, 0.0, 0.0, 0.0, -gains.level_gain * (tilt - math.radians(1.0)), 0.0],
                               rtol=1e-9, atol=1e-15)
    assert levelling_twists(rolled, (1,), gains, DT, rolling=True) == {}
