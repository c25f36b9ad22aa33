"""Limb motions granted as far as balance allows: J-busy trajectories slowed in time (never in path) to keep the joints
within their speed and the ZMP the motion makes — recomputed here from the executed rates by finite differences — in
the support polygon; C-busy targets checked against the limb's reach (pinocchio's straight arm) and approached at
bounded speed and acceleration."""
import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.control.joint_trajectory import JointPath, LimbTrajectory
from humanoid_balance.control.limb_motion import SLOWED, OutOfReach, PoseTargets, TrajectoryClock, limb_reach
from humanoid_balance.model.kinematics import WholeBodyKinematics
from humanoid_balance.model.support_polygon import SupportPolygon
from support.model_fixtures import load

DT = 0.002
MASS = 50.0
RANGE = (-10.0, 10.0)  # [rad] of the joints: no limit here
SUPPORT = SupportPolygon.of_points([[-0.08, -0.145], [0.14, -0.145], [0.14, 0.145], [-0.08, 0.145]])


def dance(frequency, amplitude, periods, rate=500.0):
    """Joint velocities of A (1 − cos 2π f t) / 2 for each joint amplitude A, sampled at ``rate``."""
    times = np.linspace(0.0, periods / frequency, int(round(periods / frequency * rate)) + 1)  # ends at rest
    w = 2 * np.pi * frequency
    return LimbTrajectory(0.0, times, velocities=np.outer(0.5 * w * np.sin(w * times), amplitude))


def test_velocities_alone_are_interpolated_linearly_between_points():
    """A trajectory of velocities alone (joint_trajectory_controller's deduce_from_derivatives): its rates are
    linearly interpolated between points; from its start on, the limb holds still after its end."""
    trajectory = LimbTrajectory(0.0, np.array([0.0, 1.0, 3.0]),
                                velocities=np.array([[0.0, 1.0], [2.0, 1.0], [0.0, -1.0]]))
    path = JointPath(trajectory, 0.0, np.zeros(2))
    taus = np.array([0.0, 0.25, 1.0, 2.0, 2.9, 3.0])
    expected = np.column_stack([np.interp(taus, trajectory.times, trajectory.velocities[:, k]) for k in range(2)])
    np.testing.assert_allclose(path.velocities(taus), expected, atol=1e-12)
    np.testing.assert_allclose([path.sample(tau)[1] for tau in taus], expected, atol=1e-12)
    np.testing.assert_allclose(path.velocities(np.array([3.5])), [[0.0, 0.0]])
    assert path.active(3.0) and not path.active(3.01)  # over: the limb holds still


def run_clock(clock, momentum_map=None, seconds=6.0, joints=2):
    """The clock's rates, integrated into the position command as the balancer does."""
    executed = []
    position = np.zeros(joints)
    for _ in range(int(seconds / DT)):
        bound = clock.bound(momentum_map, MASS, 0.8, np.zeros(2), SUPPORT.shrunk(0.01)) if momentum_map is not None \
            else clock.bound(np.zeros((6, 6 + joints)), MASS, 0.8, np.zeros(2), None)
        rates, limitations = clock.advance(bound, DT, position)
        position[clock.columns["arm"]] += DT * rates["arm"]
        executed.append((rates["arm"], limitations, clock.scale))
    return executed


def test_a_trajectory_too_fast_for_its_joints_is_slowed_and_keeps_its_path():
    """1.5 Hz swings of 1.6 rad peak to peak: 7.5 rad/s against a 6 rad/s limit. The rates sent stay within it, and
    their integral — the path — is the trajectory's, only later."""
    trajectory = dance(1.5, np.array([1.6, 0.7]), periods=2)
    clock = TrajectoryClock({"arm": [0, 1]}, {"arm": np.array([6.0, 6.0])}, {"arm": RANGE})
    clock.follow("arm", trajectory, 0.0, np.zeros(2))
    executed = run_clock(clock)
    rates = np.array([r for r, _, _ in executed])
    assert np.abs(rates).max() <= 6.0 + 1e-9
    displacement = rates.sum(axis=0) * DT
    planned = np.trapezoid(trajectory.velocities, trajectory.times, axis=0)
    np.testing.assert_allclose(displacement, planned, atol=0.02)
    scales = [s for _, _, s in executed]
    assert min(scales) == pytest.approx(6.0 / 7.54, abs=0.02)
    assert any(limitation.reason == SLOWED for _, limitations, _ in executed for limitation in limitations)
    assert executed[-1][1] == ()  # over: nothing slowed any more


def test_a_motion_whose_angular_momentum_would_push_the_zmp_out_is_slowed_until_it_stays_in():
    """A 2 kg·m² limb swinging 1 rad at 2 Hz about the y axis: at full speed its L̇ moves the ZMP 16 cm, beyond the
    support polygon's edge 8 cm away. The ZMP of the rates actually sent (L̇ by finite differences) stays within the
    polygon shrunk by the 1 cm asked (up to the sampling of the preview), and the path is kept."""
    momentum_map = np.zeros((6, 7))
    momentum_map[4, 6] = 2.0  # L_y = 2 kg m² × q̇
    trajectory = dance(2.0, np.array([1.0]), periods=3)
    clock = TrajectoryClock({"arm": [0]}, {"arm": np.array([100.0])}, {"arm": RANGE})
    clock.follow("arm", trajectory, 0.0, np.zeros(1))
    unscaled = 2.0 * np.gradient(trajectory.velocities[:, 0], trajectory.times)
    assert np.abs(unscaled).max() / (MASS * 9.81) > 0.15
    executed = run_clock(clock, momentum_map, seconds=10.0, joints=1)
    rates = np.array([r[0] for r, _, _ in executed])
    zmp_x = -2.0 * np.gradient(rates, DT) / (MASS * 9.81)  # Δp_x = −L̇_y / (m g)
    shrunk = SUPPORT.shrunk(0.01)
    assert all(shrunk.depth([x, 0.0]) > -0.005 for x in zmp_x), (zmp_x.min(), zmp_x.max())  # (with room to spare:
    # the prediction has a safety factor)
    np.testing.assert_allclose(rates.sum() * DT, np.trapezoid(trajectory.velocities[:, 0], trajectory.times), atol=0.02)


def test_the_reach_is_the_length_of_the_straight_arm_and_targets_beyond_it_are_out_of_reach():
    robot, chain = load("kangaroo_like", floating_base=True)
    joints = ("right_shoulder_pitch", "right_shoulder_roll", "right_elbow")
    root, reach = limb_reach(robot, joints, "right_hand")
    q = robot.reference_q.copy()
    q[robot.joint_q_index("right_elbow")] = 0.0  # straight
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    shoulder = data.oMi[robot.model.getJointId("right_shoulder_pitch")].translation
    straight = np.linalg.norm(data.oMf[robot.frame_id("right_hand")].translation - shoulder)
    assert reach == pytest.approx(straight, abs=1e-9)
    kinematics = WholeBodyKinematics(chain).update(q)
    targets = PoseTargets(robot, {"right_arm": (joints, "right_hand")})
    targets.check("right_arm", shoulder + [0.0, 0.0, -0.99 * reach], kinematics)
    with pytest.raises(OutOfReach, match="beyond its reach of 0.440 m"):
        targets.check("right_arm", shoulder + [1.01 * reach, 0.0, 0.0], kinematics)
    with pytest.raises(OutOfReach):
        targets.check("right_arm", [1e300, 0.0, 0.0], kinematics)


def test_a_target_is_approached_at_bounded_speed_and_acceleration():
    robot, chain = load("kangaroo_like", floating_base=True)
    joints = ("right_shoulder_pitch", "right_shoulder_roll", "right_elbow")
    kinematics = WholeBodyKinematics(chain).update(robot.reference_q)
    hand = kinematics.placement(robot.frame_id("right_hand"))
    target = pin.SE3(hand.rotation, hand.translation + [0.15, 0.0, 0.1])  # within reach of the shoulder
    targets = PoseTargets(robot, {"right_arm": (joints, "right_hand")}, max_speed=0.3, max_acceleration=1.0)
    previous = np.zeros(3)
    for _ in range(100):  # the hand does not move here: the command runs up to its bounds and stays there
        twists, _ = targets.twists({"right_arm": target}, kinematics, DT)
        linear = twists["right_arm"][:3]
        assert np.linalg.norm(linear) <= 0.3 + 1e-12
        assert np.linalg.norm(linear - previous) <= 1.0 * DT + 1e-12
        previous = linear
    assert np.linalg.norm(previous) == pytest.approx(0.2, abs=1e-9)  # 1 m/s² × 0.2 s
    np.testing.assert_allclose(previous / np.linalg.norm(previous), np.array([0.15, 0.0, 0.1]) / np.hypot(0.15, 0.1))
