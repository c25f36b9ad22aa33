"""A JointTrajectory as ROS means it (issue 50): its path between points against the standard definitions — linear
between positions (numpy's interp), cubic Hermite with velocities and quintic with accelerations (scipy's
CubicHermiteSpline and BPoly.from_derivatives) — and joint_trajectory_controller's deduction of positions from
velocities alone (each point's the last one's plus the mean velocity over the time between them); a trajectory
joined from where the limb is; its positions reached by the position command through the time scaling; and each
reason a trajectory is rejected for."""
import math

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from scipy.interpolate import BPoly, CubicHermiteSpline
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from humanoid_balance.control.joint_trajectory import (RANGE_TOLERANCE, START_TOLERANCE, JointPath, LimbTrajectory,
                                                       Unfollowable, check, segment_coefficients)
from humanoid_balance.control.limb_motion import TrajectoryClock
from humanoid_balance.nodes.messages import RejectedMessage, read_limb_trajectory

TIMES = np.array([0.5, 1.0, 2.5, 3.0])
POSITIONS = np.array([[0.2, -0.1], [0.6, 0.3], [-0.4, 0.8], [0.1, 0.0]])
VELOCITIES = np.array([[0.0, 1.0], [1.5, -0.5], [-2.0, 0.4], [0.0, 0.0]])
ACCELERATIONS = np.array([[3.0, 0.0], [-1.0, 2.0], [0.5, -4.0], [0.0, 0.0]])
JOINTS = ("shoulder", "elbow")
LOWER, UPPER = np.array([-2.0, -1.0]), np.array([2.0, 1.0])


def polynomial(coefficients, h, derivative=0):
    """Σ c_j h^j (or its derivative) of one segment's (6, n) coefficients, by numpy's polynomial class."""
    return np.array([np.polynomial.Polynomial(coefficients[:, k]).deriv(derivative)(h)
                     for k in range(coefficients.shape[1])])


@pytest.mark.parametrize("order", ["linear", "cubic", "quintic"])
def test_a_segment_matches_what_its_ends_give(order):
    """Each segment's polynomial has the positions at both ends, with velocities their velocities, with
    accelerations their accelerations; linear: constant velocity."""
    p0, p1, T = POSITIONS[:1], POSITIONS[1:2], np.array([0.7])
    v0, v1 = (None, None) if order == "linear" else (VELOCITIES[:1], VELOCITIES[1:2])
    a0, a1 = (ACCELERATIONS[:1], ACCELERATIONS[1:2]) if order == "quintic" else (None, None)
    c = segment_coefficients(T, (p0, v0, a0), (p1, v1, a1))[:, 0]
    np.testing.assert_allclose(polynomial(c, 0.0), p0[0], atol=1e-12)
    np.testing.assert_allclose(polynomial(c, 0.7), p1[0], atol=1e-12)
    if order == "linear":
        np.testing.assert_allclose(polynomial(c, 0.3, 1), (p1[0] - p0[0]) / 0.7, atol=1e-12)
        assert np.abs(c[2:]).max() == 0.0
        return
    np.testing.assert_allclose(polynomial(c, 0.0, 1), v0[0], atol=1e-12)
    np.testing.assert_allclose(polynomial(c, 0.7, 1), v1[0], atol=1e-12)
    if order == "quintic":
        np.testing.assert_allclose(polynomial(c, 0.0, 2), a0[0], atol=1e-12)
        np.testing.assert_allclose(polynomial(c, 0.7, 2), a1[0], atol=1e-12)
    else:
        assert np.abs(c[4:]).max() == 0.0


def reference(order, times, positions, velocities, accelerations):
    """scipy's (or numpy's) interpolation of the same points: (position at t, velocity at t)."""
    if order == "linear":
        slopes = np.diff(positions, axis=0) / np.diff(times)[:, None]
        return (lambda t: np.array([np.interp(t, times, column) for column in positions.T]),
                lambda t: slopes[min(int(np.searchsorted(times, t, side="right")) - 1, len(slopes) - 1)])
    if order == "cubic":
        spline = CubicHermiteSpline(times, positions, velocities)
        return spline, spline.derivative()
    spline = BPoly.from_derivatives(times, np.stack([positions, velocities, accelerations], axis=1))
    return spline, spline.derivative()


@pytest.mark.parametrize("order", ["linear", "cubic", "quintic"])
def test_a_trajectory_ahead_is_joined_from_where_the_limb_is_and_then_follows_its_points(order):
    """Taken up at τ = 0.1 s with the limb at q moving at v (accelerating at a): the path starts there and passes
    through every point, between them as the standard interpolation of its order does (the join too, from the limb's
    state); before its start it holds it, after its end the last point."""
    velocities = None if order == "linear" else VELOCITIES
    accelerations = ACCELERATIONS if order == "quintic" else None
    trajectory = LimbTrajectory(10.0, TIMES, POSITIONS, velocities, accelerations)
    q, v, a = np.array([-0.3, 0.2]), np.array([0.4, -0.2]), np.array([1.0, 0.5])
    path = JointPath(trajectory, 0.1, q, v, a)
    times = np.r_[0.1, TIMES]
    position, velocity = reference(order, times, np.vstack([q, POSITIONS]),
                                   None if velocities is None else np.vstack([v, velocities]),
                                   None if accelerations is None else np.vstack([a, accelerations]))
    for tau in np.r_[np.linspace(0.1, 3.0, 59)[1:-1], TIMES[:-1] + 1e-9]:
        sample = path.sample(tau)
        np.testing.assert_allclose(sample[0], position(tau), atol=1e-9, err_msg=f"τ = {tau}")
        np.testing.assert_allclose(sample[1], velocity(tau), atol=1e-7, err_msg=f"τ = {tau}")
        np.testing.assert_allclose(path.velocities(np.array([tau]))[0], sample[1], atol=1e-9)
    for tau, k in zip(TIMES, range(len(TIMES))):
        np.testing.assert_allclose(path.sample(tau)[0], POSITIONS[k], atol=1e-12)
    np.testing.assert_allclose(path.sample(0.0)[0], q, atol=1e-12)  # before its start: held there
    for tau in (3.0 + 1e-6, 50.0):
        held = path.sample(tau)
        np.testing.assert_allclose(held[0], POSITIONS[-1], atol=1e-9)
        assert np.abs(held[1]).max() == 0.0 and not path.active(tau)


def test_velocities_alone_give_positions_from_where_the_limb_is():
    """joint_trajectory_controller's deduction: each point's position the last one's plus the mean of both velocities
    over the time between them, the first from where the limb is at the moment the trajectory is taken up (at rest
    here). Points (1 s, 0.5 rad/s) and (2 s, 0): 0.25 rad at 1 s, 0.5 rad at 2 s (rates integrated before issue 50 —
    0.5 rad/s held until the first point — gave 0.75)."""
    trajectory = LimbTrajectory(0.0, np.array([1.0, 2.0]), velocities=np.array([[0.5], [0.0]]))
    path = JointPath(trajectory, 0.0, np.array([0.3]))
    np.testing.assert_allclose(path.sample(1.0)[0], [0.55], atol=1e-12)
    np.testing.assert_allclose(path.sample(2.0)[0], [0.8], atol=1e-12)
    np.testing.assert_allclose(path.sample(0.5)[1], [0.25], atol=1e-12)  # the velocity linear in time
    under_way = JointPath(trajectory, 1.5, np.array([0.3]))  # taken up between its points: from where the limb is
    np.testing.assert_allclose(under_way.sample(1.5)[0], [0.3], atol=1e-12)
    np.testing.assert_allclose(under_way.sample(2.0)[0], [0.3 + 0.5 * 0.25 * 0.5], atol=1e-12)


def command_through(clock, limb, position, seconds, dt=0.01, disturb=None):
    """The position command the balancer integrates from the clock's rates (no ZMP bound): (times, positions)."""
    samples = []
    for k in range(int(round(seconds / dt))):
        if disturb is not None:
            disturb(k * dt, position)
        rates, _ = clock.advance(clock.bound(np.zeros((6, 6 + len(position))), 50.0, 0.8, np.zeros(2), None), dt,
                                 position)
        position[clock.columns[limb]] += dt * rates[limb]
        samples.append(position.copy())
    return dt * np.arange(1, len(samples) + 1), np.array(samples)


def test_positions_are_reached_by_the_command_even_where_it_is_knocked_off_its_path():
    """Positions alone, the first 2 s ahead (the issue's message): the command moves from where it is along the
    line to the first point and holds it; knocked 0.2 rad off its path (a restart from the measured posture, a joint
    limit) it comes back to it — not so when rates alone are integrated."""
    trajectory = LimbTrajectory(0.0, np.array([2.0, 3.0]), np.array([[0.8, 0.3, -0.6], [0.4, 0.3, -0.6]]))
    clock = TrajectoryClock({"arm": [0, 1, 2]}, {"arm": np.full(3, 6.0)},
                            {"arm": (np.full(3, -2.0), np.full(3, 2.0))})
    clock.follow("arm", trajectory, 0.0, np.zeros(3))

    def knock(time, position):
        if abs(time - 1.0) < 1e-9:
            position[0] -= 0.2

    times, positions = command_through(clock, "arm", np.zeros(3), 4.0, disturb=knock)
    np.testing.assert_allclose(positions[np.argmin(np.abs(times - 0.5))], [0.2, 0.075, -0.15], atol=1e-9)
    np.testing.assert_allclose(positions[np.argmin(np.abs(times - 2.0))], [0.8, 0.3, -0.6], atol=0.01)
    np.testing.assert_allclose(positions[-1], [0.4, 0.3, -0.6], atol=1e-3)
    pace = np.abs(np.diff(positions[:, 1:], axis=0)).max(axis=0)  # per tick: the line's, never faster
    np.testing.assert_allclose(pace, [0.3 / 200, 0.6 / 200])


def test_a_trajectory_replacing_one_under_way_starts_from_its_position_and_velocity():
    clock = TrajectoryClock({"arm": [0]}, {"arm": np.array([6.0])}, {"arm": (np.array([-2.0]), np.array([2.0]))})
    first = LimbTrajectory(0.0, np.array([0.0, 2.0]), np.array([[0.0], [1.0]]), np.array([[0.0], [1.0]]))
    clock.follow("arm", first, 0.0, np.zeros(1))
    _, positions = command_through(clock, "arm", np.zeros(1), 1.0)
    _, velocity, _ = clock.paths["arm"].sample(clock.tau["arm"])
    second = LimbTrajectory(1.0, np.array([1.0]), np.array([[0.0]]), np.array([[0.0]]))
    clock.follow("arm", second, 1.0, positions[-1])
    path = clock.paths["arm"]
    np.testing.assert_allclose(path.sample(0.0)[:2], [positions[-1], velocity], atol=1e-12)


def message(points, stamp=0.0, names=JOINTS):
    result = JointTrajectory(joint_names=list(names))
    result.header.stamp.sec = int(stamp)
    for t, fields in points:
        result.points.append(JointTrajectoryPoint(time_from_start=Duration(sec=math.floor(t),
                                                                           nanosec=int(round((t % 1) * 1e9))),
                                                  **{name: list(values) for name, values in fields.items()}))
    return result


@pytest.mark.parametrize("reason, points", [
    ("mixed_points", [(1.0, {"positions": [0.1, 0.2]}), (2.0, {"velocities": [0.0, 0.0]})]),
    ("mixed_points", [(1.0, {"positions": [0.1, 0.2], "velocities": [0.0, 0.0]}), (2.0, {"positions": [0.1, 0.2]})]),
    ("mixed_points", [(1.0, {"positions": [0.1, 0.2], "accelerations": [0.0, 0.0]})]),
    ("mixed_points", [(1.0, {}), (2.0, {})]),
    ("length_mismatch", [(1.0, {"positions": [0.1]})]),
    ("length_mismatch", [(1.0, {"positions": [0.1, 0.2], "velocities": [0.0, 0.0], "accelerations": [0.0]})]),
    ("not_finite", [(1.0, {"positions": [0.1, math.inf]})]),
    ("not_finite", [(1.0, {"positions": [0.1, 0.2], "velocities": [0.0, math.nan]})]),
    ("bad_times", [(1.0, {"positions": [0.1, 0.2]}), (1.0, {"positions": [0.1, 0.2]})]),
])
def test_a_message_that_cannot_be_read_as_a_trajectory_is_rejected_with_its_reason(reason, points):
    with pytest.raises(RejectedMessage) as error:
        read_limb_trajectory(message(points), "balance/arm/trajectory", JOINTS, 5.0)
    assert error.value.reason == reason
    assert error.value.detail.startswith("balance/arm/trajectory: ")


def test_a_message_is_read_in_the_limbs_joint_order_from_its_stamp():
    read = read_limb_trajectory(message([(0.5, {"positions": [0.1, 0.2], "velocities": [1.0, 2.0]})], stamp=7.0,
                                        names=JOINTS[::-1]), "balance/arm/trajectory", JOINTS, 5.0)
    assert read.start == 7.0 and read.accelerations is None
    np.testing.assert_allclose(read.positions, [[0.2, 0.1]])
    np.testing.assert_allclose(read.velocities, [[2.0, 1.0]])
    assert read_limb_trajectory(message([(0.5, {"positions": [0.1, 0.2]})]), "t", JOINTS, 5.0).start == 5.0  # now


@pytest.mark.parametrize("reason, trajectory, tau, words", [
    ("outside_limits", LimbTrajectory(0.0, np.array([1.0, 2.0]), np.array([[0.0, 0.0], [0.0, 1.2]])), 0.0,
     "points[1] puts elbow at 1.2, outside its range [-1, 1]"),
    ("ends_in_past", LimbTrajectory(0.0, np.array([1.0, 2.0]), np.array([[0.0, 0.0], [0.0, 0.5]])), 2.5,
     "due 0.500 s ago"),
    ("far_start", LimbTrajectory(0.0, np.array([0.0, 2.0]), np.array([[0.0, 0.8], [0.0, 0.5]])), 0.0,
     "0.800 from where elbow is"),
    ("far_start", LimbTrajectory(0.0, np.array([0.0, 2.0]), np.array([[0.0, 0.0], [0.0, 0.6]])), 1.0,
     "0.300 from where elbow is"),  # stamped a second ago: under way, 0.3 rad from where the limb is
])
def test_a_trajectory_that_cannot_be_followed_is_refused_with_its_reason(reason, trajectory, tau, words):
    with pytest.raises(Unfollowable) as error:
        check(trajectory, JOINTS, LOWER, UPPER, tau, np.zeros(2))
    assert error.value.reason == reason and words in str(error.value), str(error.value)


def test_a_first_point_ahead_or_close_is_followed():
    far = np.array([[0.0, 0.8], [0.0, 0.5]])
    check(LimbTrajectory(0.0, np.array([0.5, 2.0]), far), JOINTS, LOWER, UPPER, 0.0, np.zeros(2))  # joined in 0.5 s
    close = np.array([[0.0, 0.9 * START_TOLERANCE], [0.0, 0.5]])
    check(LimbTrajectory(0.0, np.array([0.0, 2.0]), close), JOINTS, LOWER, UPPER, 0.0, np.zeros(2))
    check(LimbTrajectory(0.0, np.array([1.0]), velocities=np.array([[5.0, 5.0]])), JOINTS, LOWER, UPPER, 0.0,
          np.zeros(2))  # velocities alone: from where the limb is, the joints' ranges keep it
    check(LimbTrajectory(0.0, np.array([0.0, 2.0]), far), JOINTS, LOWER, UPPER, 0.0)  # before the first update
    at_limit = np.array([[0.0, UPPER[1] + 0.5 * RANGE_TOLERANCE]])  # a measured position a hair past the limit
    check(LimbTrajectory(0.0, np.array([1.0]), at_limit), JOINTS, LOWER, UPPER, 0.0, np.zeros(2))
