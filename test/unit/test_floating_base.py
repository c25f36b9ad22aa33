"""Floating-base estimate vs a known trajectory of the model.

The reference is built from pinocchio kinematics: while a foot is the support, the base pose is the
one that keeps that foot's world pose fixed, T_base = T_foot,world · (T_foot in base)⁻¹; halfway, the
support switches to the other foot at the pose it has then. The IMU reads the true orientation and a
central-difference angular rate."""
import math

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

from humanoid_balance.estimation.floating_base import ROLL_MEMORY, FloatingBaseEstimator
from humanoid_balance.model import load_robot
from support.model_fixtures import talos_urdf

FEET = ("left_sole_link", "right_sole_link")


def joint_trajectory(robot, t):
    q = pin.neutral(robot.model)
    phases = np.arange(robot.nq)
    return q + 0.15 * np.sin(2 * np.pi * 0.7 * t + phases), 0.15 * 2 * np.pi * 0.7 * np.cos(2 * np.pi * 0.7 * t + phases)


@pytest.fixture(scope="module")
def reference():
    robot = load_robot(talos_urdf())
    model, data = robot.model, robot.model.createData()
    ids = [model.getFrameId(f) for f in FEET]
    dt, steps = 1e-3, 400
    switch = steps // 2

    def foot_in_base(q, foot):
        pin.framesForwardKinematics(model, data, q)
        return data.oMf[ids[foot]].copy()

    support_world = pin.SE3.Identity()

    def base_pose(t, step):
        q, _ = joint_trajectory(robot, t)
        foot = 0 if step < switch else 1
        return support_world[foot] * foot_in_base(q, foot).inverse()

    support_world = {0: pin.SE3.Identity()}
    t_switch = switch * dt
    q_switch, _ = joint_trajectory(robot, t_switch)
    support_world[1] = base_pose(t_switch, 0) * foot_in_base(q_switch, 1)
    poses = [base_pose(k * dt, k) for k in range(steps)]
    return robot, dt, switch, poses, base_pose


def test_base_follows_known_trajectory_across_a_support_switch(reference):
    robot, dt, switch, poses, base_pose = reference
    estimator = FloatingBaseEstimator(robot, FEET, tipping_tilt=math.pi)  # the reference's soles turn as they
    # will on their anchored origins (point feet): none is ever tipping off a flat floor
    estimates = []
    for k, pose in enumerate(poses):
        t = k * dt
        q, v = joint_trajectory(robot, t)
        h = 1e-6
        R_plus, R_minus = base_pose(t + h, k).rotation, base_pose(t - h, k).rotation
        gyro = pin.log3(R_minus.T @ R_plus) / (2 * h)  # base-frame angular rate
        contacts = [k <= switch, k >= switch]  # one step of double support
        estimates.append(estimator.update(q, v, Rotation.from_matrix(pose.rotation).as_quat(), gyro, dt,
                                          contacts=contacts))
    truth = np.array([p.translation for p in poses])
    estimated = np.array([e.position for e in estimates])
    np.testing.assert_allclose(estimated - estimated[0], truth - truth[0], atol=1e-9)
    true_velocity = np.gradient(truth, dt, axis=0)  # central differences, O(dt²)
    smooth = np.r_[1:switch - 1, switch + 2:len(poses) - 1]  # the base velocity jumps at the switch
    np.testing.assert_allclose(np.array([e.linear_velocity for e in estimates])[smooth], true_velocity[smooth],
                               atol=1e-4)
    assert estimates[switch - 1].feet_in_contact == ("left_sole_link",)
    assert estimates[switch].feet_in_contact == FEET
    assert estimates[switch + 1].feet_in_contact == ("right_sole_link",)


def test_both_feet_weighted_average_and_lowest_sole_heuristic(reference):
    robot = reference[0]
    estimator = FloatingBaseEstimator(robot, FEET)
    q = pin.neutral(robot.model)  # both soles level: both in contact by the heuristic
    estimate = estimator.update(q, np.zeros(robot.nv), [0, 0, 0, 1], np.zeros(3), 1e-3)
    assert estimate.feet_in_contact == FEET
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    sole_height = data.oMf[robot.frame_id(FEET[0])].translation[2]
    np.testing.assert_allclose(estimate.position, [0.0, 0.0, -sole_height], atol=1e-12)


def test_aerial_phase_is_ballistic(reference):
    robot = reference[0]
    estimator = FloatingBaseEstimator(robot, FEET)
    q = pin.neutral(robot.model)
    estimator.update(q, np.zeros(robot.nv), [0, 0, 0, 1], np.zeros(3), 1e-3)
    start = estimator.position.copy()
    for _ in range(100):
        estimate = estimator.update(q, np.zeros(robot.nv), [0, 0, 0, 1], np.zeros(3), 1e-3,
                                    contacts=[False, False])
    assert estimate.feet_in_contact == ()
    np.testing.assert_allclose(estimate.linear_velocity, [0, 0, -9.81 * 0.1], atol=1e-12)
    assert estimate.position[2] == pytest.approx(start[2] - 9.81 * 1e-6 * 100 * 101 / 2)


def lift_off(robot, specific_force, lag=20, flight=150, v0=1.0, dt=1e-3):
    """Stand 0.1 s, then the base is thrown up at v0 [m/s] within one sample and flies, the legs still; the contact
    phases report the lift-off ``lag`` samples late. Returns (estimated, true) base heights [m] from the throw on.
    ``specific_force``: False to give the estimator no accelerometer."""
    estimator = FloatingBaseEstimator(robot, FEET)
    q, v = pin.neutral(robot.model), np.zeros(robot.nv)
    standing = np.array([0.0, 0.0, 9.81])  # the level base's accelerometer at rest [m/s²]
    for _ in range(100):
        start = estimator.update(q, v, [0, 0, 0, 1], np.zeros(3), dt, contacts=[True, True],
                                 specific_force=standing if specific_force else None).position[2]
    estimated, true = [], []
    for k in range(lag + flight):
        throw = standing + [0.0, 0.0, v0 / dt] if k == 0 else np.zeros(3)  # then free fall: f = 0
        contacts = [k < lag] * 2
        estimate = estimator.update(q, v, [0, 0, 0, 1], np.zeros(3), dt, contacts=contacts,
                                    specific_force=throw if specific_force else None)
        t = (k + 1) * dt  # the throw's sample: constant acceleration v0/dt, so ½ v0 dt; then a parabola
        true.append(start + 0.5 * v0 * dt + v0 * (t - dt) - 0.5 * 9.81 * (t - dt) ** 2)
        estimated.append(estimate.position[2])
    return np.array(estimated), np.array(true)


def test_the_accelerometer_carries_the_base_through_a_lift_off_seen_late(reference):
    """Kinematic-inertial estimate (module docstring) against the analytic flight: while the contact phases still
    say 'on the floor', the legs' kinematics hold the base still and the accelerometer says it flies; the
    kinematic velocity, far from the prediction, is not taken, and the estimate is the parabola (the trapezoidal
    prediction is exact for piecewise-constant accelerations). Without an accelerometer the base stays on the
    feet through the lag and then falls from rest: centimetres off."""
    robot = reference[0]
    estimated, true = lift_off(robot, specific_force=True)
    np.testing.assert_allclose(estimated, true, atol=1e-9)
    kinematic_only, _ = lift_off(robot, specific_force=False)
    assert np.abs(kinematic_only - true).max() > 0.015


def test_standing_the_estimate_stays_on_the_feet_despite_an_accelerometer_bias(reference):
    """A constant accelerometer bias b against feet that hold the base still: the complementary correction
    settles at its steady state, sampled every dt (α = dt / τ), v* = b τ_v (1 − α_v) and
    p* = (v* + b dt / 2) τ_p (1 − α_p), 1 mm here, not the drift ½ b t² of integration alone."""
    robot = reference[0]
    tau_p, tau_v, bias, dt = 0.1, 0.2, 0.05, 1e-3
    estimator = FloatingBaseEstimator(robot, FEET, position_time_constant=tau_p, velocity_time_constant=tau_v)
    q, v = pin.neutral(robot.model), np.zeros(robot.nv)
    for _ in range(3000):
        estimate = estimator.update(q, v, [0, 0, 0, 1], np.zeros(3), dt, contacts=[True, True],
                                    specific_force=np.array([bias, 0.0, 9.81]))
    start = FloatingBaseEstimator(robot, FEET).update(q, v, [0, 0, 0, 1], np.zeros(3), dt).position
    velocity = bias * tau_v * (1.0 - dt / tau_v)
    assert estimate.linear_velocity[0] == pytest.approx(velocity, rel=1e-6)
    assert estimate.position[0] - start[0] == pytest.approx((velocity + bias * dt / 2) * tau_p * (1.0 - dt / tau_p),
                                                            rel=1e-6)
    np.testing.assert_allclose(estimate.position[1:], start[1:], atol=1e-9)


def test_inertial_time_constants_and_gate_must_be_positive(reference):
    with pytest.raises(ValueError, match="kinematic_gate must be > 0"):
        FloatingBaseEstimator(reference[0], FEET, kinematic_gate=0.0)


def test_feet_that_disagree_for_the_gate_timeout_are_taken_anyway(reference):
    """A flight whose landing impact the accelerometer misses (beyond its range): after touchdown it reads +g,
    so its prediction goes on falling at the landing speed while the still feet say the base stopped. Out of the
    gate the feet are not taken, but only for gate_timeout: then the velocity starts over from theirs and the
    base stays where it is, having overshot by at most the landing speed times the timeout."""
    robot = reference[0]
    dt, timeout = 1e-3, 0.1
    estimator = FloatingBaseEstimator(robot, FEET, gate_timeout=timeout)
    q, v, level = pin.neutral(robot.model), np.zeros(robot.nv), [0, 0, 0, 1]
    standing = np.array([0.0, 0.0, 9.81])
    for _ in range(50):
        estimator.update(q, v, level, np.zeros(3), dt, contacts=[True, True], specific_force=standing)
    for _ in range(100):  # 0.1 s of free fall: 0.98 m/s down at touchdown
        estimator.update(q, v, level, np.zeros(3), dt, contacts=[False, False], specific_force=np.zeros(3))
    landing_speed, touchdown = -estimator.velocity[2], estimator.position[2]
    heights = [estimator.update(q, v, level, np.zeros(3), dt, contacts=[True, True],
                                specific_force=standing).position[2] for _ in range(1000)]
    assert landing_speed == pytest.approx(0.981, rel=1e-3)
    assert touchdown - min(heights) <= landing_speed * (timeout + 2 * dt)
    assert abs(estimator.velocity[2]) < 1e-3 and np.ptp(heights[-100:]) < 1e-4


def test_a_tipping_sole_does_not_carry_the_base_while_a_flat_one_does(reference):
    """Both feet in contact; the right leg rolls its sole 5° off the floor (its ankle), the left one stays flat and
    still: the base stays where the flat foot puts it (a tipping sole's origin moves with its roll), and the estimate
    names the tipping foot. Within 2° both carry it."""
    robot = reference[0]
    estimator = FloatingBaseEstimator(robot, FEET)
    q, v = pin.neutral(robot.model), np.zeros(robot.nv)
    start = estimator.update(q, v, [0, 0, 0, 1], np.zeros(3), 1e-3, contacts=[True, True])
    ankle = robot.joint_q_index("leg_right_6_joint")  # the ankle's roll
    for roll in np.linspace(0.0, math.radians(5.0), 50)[1:]:
        q[ankle] = roll
        estimate = estimator.update(q, v, [0, 0, 0, 1], np.zeros(3), 1e-3, contacts=[True, True])
        if roll < math.radians(1.9):
            assert estimate.tipping == ()
    assert estimate.tipping == ("right_sole_link",) and estimate.feet_in_contact == ("left_sole_link",)
    np.testing.assert_allclose(estimate.position, start.position, atol=1e-9)


def test_a_sole_that_rolled_back_flat_carries_the_base_from_its_old_anchor(reference):
    """The right sole rolls 5° off the floor and back, five times, while the left leg's knee reads 0.01 rad off
    (an encoder's noise) until a tick after the sole is flat again: the base estimate comes back to where it stood
    each time, since the rolled sole never left the floor and its origin is back where it was anchored. Re-laying its
    anchor where the estimate stood at that moment (on the flat foot's wrong reading) would leave the base half of
    that error away, a time more each time: a random walk."""
    robot = reference[0]
    estimator = FloatingBaseEstimator(robot, FEET)
    q, v = pin.neutral(robot.model), np.zeros(robot.nv)
    start = estimator.update(q, v, [0, 0, 0, 1], np.zeros(3), 1e-3, contacts=[True, True])
    ankle, knee = robot.joint_q_index("leg_right_6_joint"), robot.joint_q_index("leg_left_4_joint")
    for _ in range(5):
        q[ankle], q[knee] = math.radians(5.0), 0.01
        rolled = estimator.update(q, v, [0, 0, 0, 1], np.zeros(3), 1e-3, contacts=[True, True])
        assert rolled.feet_in_contact == ("left_sole_link",)
        assert np.linalg.norm(rolled.position - start.position) > 1e-3  # the knee's error moves the estimate
        q[ankle] = 0.0  # flat again, the knee's error a tick longer
        assert estimator.update(q, v, [0, 0, 0, 1], np.zeros(3), 1e-3, contacts=[True, True]).feet_in_contact == FEET
        q[knee] = 0.0
        flat = estimator.update(q, v, [0, 0, 0, 1], np.zeros(3), 1e-3, contacts=[True, True])
        np.testing.assert_allclose(flat.position, start.position, atol=1e-9)


def test_a_sole_rolled_longer_than_the_roll_memory_is_anchored_again_where_the_estimate_stands(reference):
    """Rolled 5° for longer than ROLL_MEMORY, with the left knee reading 0.01 rad off, the right sole may have slid or
    turned on its edge: back flat, it is anchored where the estimate then stands, so the estimate does not jump."""
    robot = reference[0]
    estimator = FloatingBaseEstimator(robot, FEET)
    q, v, dt = pin.neutral(robot.model), np.zeros(robot.nv), 1e-3
    estimator.update(q, v, [0, 0, 0, 1], np.zeros(3), dt, contacts=[True, True])
    ankle, knee = robot.joint_q_index("leg_right_6_joint"), robot.joint_q_index("leg_left_4_joint")
    q[ankle], q[knee] = math.radians(5.0), 0.01
    for _ in range(round(ROLL_MEMORY / dt) + 2):
        rolled = estimator.update(q, v, [0, 0, 0, 1], np.zeros(3), dt, contacts=[True, True])
    q[ankle] = 0.0
    flat = estimator.update(q, v, [0, 0, 0, 1], np.zeros(3), dt, contacts=[True, True])
    assert flat.feet_in_contact == FEET
    np.testing.assert_allclose(flat.position, rolled.position, atol=1e-9)
