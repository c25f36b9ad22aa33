"""Floating-base estimate vs a known trajectory of the model.

The reference is built from pinocchio kinematics: while a foot is the support, the base pose is the
one that keeps that foot's world pose fixed, T_base = T_foot,world · (T_foot in base)⁻¹; halfway, the
support switches to the other foot at the pose it has then. The IMU reads the true orientation and a
central-difference angular rate."""
import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

from humanoid_balance.estimation.floating_base import FloatingBaseEstimator
from humanoid_balance.model import load_robot
from model_fixtures import talos_urdf

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
    estimator = FloatingBaseEstimator(robot, FEET)
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
