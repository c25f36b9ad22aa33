"""Balance first, through the nodes (issue 35): references a user might send — a CoM ahead of the toes or beside the
feet, a hand target two metres away, values of 1e300, a dance too fast for the robot — leave kangaroo_like standing,
each clamp or refusal named in /diagnostics; what is reachable is reached. Joint trajectories as ROS means them
(issue 50): positions alone, with velocities, velocities alone, stamped ahead — each through its waypoints at their
times, or as the time scaling slowed it (and said so); what cannot be followed rejected with its reason.

The chain of test_faults: the plant in lockstep on its /clock at 100 Hz, each node its own process. What is
measured comes from the estimated state (estimated_joint_states and odom, through pinocchio: the CoM, the soles, the
hand, in the odom frame the references are given in) and from the plant's ground truth (sim/odom: the base height,
the simulated time). The best a blocked hand can do is found with scipy over its joints' ranges.
"""
import time

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PointStamped, PolygonStamped, PoseStamped
from scipy.optimize import minimize
from trajectory_msgs.msg import JointTrajectory

from humanoid_balance.model.soles import SoleRectangle
from humanoid_balance.model.support_polygon import SupportPolygon
from humanoid_balance.nodes.messages import trajectory_message
from humanoid_balance.nodes.qos import LATEST_QOS, RELIABLE_QOS
from support.standing_probe import BALANCER, RATE, StandingProbe, standing

pytestmark = pytest.mark.dds
STANDING_TOLERANCE = 0.10  # [m] the base stays this close to its standing height
MARGIN = 0.04            # [m] the balancer's support_margin (its default)
ARM = ("right_shoulder_pitch", "right_shoulder_roll", "right_elbow")
REACHED = 0.01           # [m] the CoM's steady-state error near the toes (the kinematic mode on position drives)
WAYPOINT_REACHED = 0.05  # [rad] an arm's joints at a trajectory's waypoint at its time
STILL_ZMP = 0.01         # [m] RMS of the standing robot's measured ZMP about its mean, once settled
SETTLING = 2.0           # [s] after the fixture's 2 s: the start's rocking still decays (at 0.2 rad/(s·m), 8-11 mm
                         # RMS over the 3 s right after the fixture, 4-6 mm over the 3 s after these)


class Probe(StandingProbe):
    """The test's view of the running chain (see the module)."""

    def __init__(self, chain, robot):
        super().__init__(chain, robot)
        node = chain.node
        self.com_reference = node.create_publisher(PointStamped, "balance/com_reference", RELIABLE_QOS)
        self.pose = node.create_publisher(PoseStamped, "balance/right_arm/pose", RELIABLE_QOS)
        self.trajectories = {limb: node.create_publisher(JointTrajectory, f"balance/{limb}/trajectory", RELIABLE_QOS)
                             for limb in ("left_arm", "right_arm")}
        self.zmps = []  # (simulated time [s], the contact estimator's ZMP x, y [m])
        node.create_subscription(PointStamped, "zmp", self._on_zmp, LATEST_QOS)
        self.polygon = None  # the contact estimator's last support_polygon
        node.create_subscription(PolygonStamped, "support_polygon", lambda message: setattr(self, "polygon", message),
                                 LATEST_QOS)

    def _on_zmp(self, message):
        if self.truth:  # on the plant's clock, once it ticks
            self.zmps.append((self.now, message.point.x, message.point.y))

    def hand(self, q=None):
        return self.frames(q).oMf[self.robot.frame_id("right_hand")].translation.copy()

    def shoulder(self):
        return self.frames().oMi[self.robot.model.getJointId("right_shoulder_pitch")].translation.copy()

    def front_edge(self):
        """x of the support polygon's front edge: the soles' toes, from the estimated state [m]."""
        data = self.frames()
        toes = []
        for sole, flat in zip(self.config.soles, self.config.sole_rectangles):
            placement = data.oMf[self.robot.frame_id(sole)]
            toes += [placement.act(corner)[0] for corner in SoleRectangle(*flat).corners()]
        return max(toes)

    def send_com_reference(self, xyz):
        message = PointStamped()
        message.header.frame_id = "odom"
        message.point.x, message.point.y, message.point.z = (float(v) for v in xyz)
        self.com_reference.publish(message)

    def send_hand_target(self, xyz):
        message = PoseStamped()
        message.header.frame_id = "odom"
        message.pose.position.x, message.pose.position.y, message.pose.position.z = (float(v) for v in xyz)
        message.pose.orientation.w = 1.0
        self.pose.publish(message)

    def balancer(self):
        return self.chain.status[BALANCER]

    def said(self, words, since):
        """Whether the balancer's /diagnostics said ``words`` since the wall time ``since``."""
        return any(node == BALANCER and status.arrival >= since and words in status.message
                   for node, status in self.chain.history)


@pytest.fixture(scope="module")
def limbs():
    """The issue's set-up: the left arm J-busy, the right arm C-busy."""
    yield from standing(Probe, parameters={"busy_limbs": ["left_arm"], "cartesian_limbs": ["right_arm"]})


def assert_stands(probe, heights, what):
    probe.assert_stands(heights, what, STANDING_TOLERANCE)


def test_standing_the_loop_closes_through_every_node_and_its_zmp_keeps_still(limbs):
    """Nothing asked, the whole suite closing the loop through the plant (mujoco_sim → state_estimator →
    contact_estimator, actuator forces → centroidal_balancer → loop_closure_mapper → mujoco_sim), each node its own
    process at 100 Hz: the base does not drop, the measured ZMP (contact estimator) stays under the CoM inside the
    support polygon the contact estimator publishes, within STILL_ZMP RMS of its mean, and every node reports OK.
    The foot damping's loop closes through the measured wrench's 5 Hz filter and a message's delay at each hop: at
    1 rad/(s·m) kangaroo_like rocked at 4.6 Hz, its ZMP 30-90 mm RMS, and at 100 Hz the balancer allows 0.6
    (control.foot_damping.DAMPING_PER_TICK)."""
    assert_stands(limbs, limbs.run(SETTLING), "settling")
    start = limbs.now
    assert_stands(limbs, limbs.run(3.0), "standing")
    zmp = np.array([(x, y) for t, x, y in limbs.zmps if t > start])
    assert len(zmp) > 200
    spread = float(np.sqrt(np.mean(np.sum((zmp - zmp.mean(axis=0)) ** 2, axis=1))))
    assert spread < STILL_ZMP, f"standing, the ZMP moved {spread * 1000:.1f} mm RMS"
    np.testing.assert_allclose(zmp.mean(axis=0), limbs.com()[:2], atol=STILL_ZMP)
    corners = [[p.x, p.y] for p in limbs.polygon.polygon.points]  # counter-clockwise, as published
    assert SupportPolygon(corners).depth(zmp[-1]) > 0.0, (zmp[-1], corners)
    assert {node: status.level for node, status in limbs.chain.status.items() if status.level != "OK"} == {}


@pytest.mark.parametrize("wish, words", [
    ((0.5, None, 0.8), "com_reference outside the support polygon"),     # ahead of the toes
    ((None, 0.3, None), "com_reference outside the support polygon"),    # beside the feet
    ((1e300, None, None), "com_reference outside the support polygon"),  # finite, so accepted
])
def test_a_com_reference_out_of_the_support_is_held_inside_it(limbs, wish, words):
    standing = limbs.standing_com
    asked = [standing[k] if value is None else value for k, value in enumerate(wish)]
    since = time.monotonic()
    limbs.send_com_reference(asked)
    heights = limbs.run(4.0)
    assert_stands(limbs, heights, f"balance/com_reference {wish}")
    assert limbs.said(words, since), limbs.balancer()  # with what was asked and what is granted:
    assert limbs.said(f"asked ({asked[0]:.3g}" if abs(asked[0]) >= 1e4 else f"asked ({asked[0]:.3f}", since)
    limbs.send_com_reference(standing)
    assert_stands(limbs, limbs.run(2.5), "the CoM reference back where it stood")


@pytest.mark.parametrize("target", [(2.0, -0.3, 1.0), (1e300, -0.3, 1.0), (0.0, 0.0, 0.0)])
def test_a_hand_target_beyond_any_reach_is_refused(limbs, target):
    before = int(limbs.balancer().values.get("rejected: out_of_reach", 0))
    limbs.send_hand_target(target)
    heights = limbs.run(2.0)
    assert_stands(limbs, heights, f"balance/right_arm/pose {target}")
    assert int(limbs.balancer().values.get("rejected: out_of_reach", 0)) > before, limbs.balancer().values


def test_a_com_reference_inside_the_margin_is_reached_and_one_beyond_the_edge_held_at_the_margin(limbs):
    """Forwards, towards the toes (sideways the balancer keeps a share of the weight on each foot,
    test_support_polygon): 1 cm inside the margin, 5 cm from the toes, then 5 cm beyond them."""
    standing, edge = limbs.standing_com, limbs.front_edge()
    inside = standing + [edge - MARGIN - 0.01 - standing[0], 0.0, 0.0]
    limbs.send_com_reference(inside)
    assert_stands(limbs, limbs.run(4.0), "a CoM reference 5 cm inside the edge")
    assert limbs.mean_com(0.5)[0] == pytest.approx(inside[0], abs=REACHED)
    since = time.monotonic()
    limbs.send_com_reference(standing + [edge + 0.05 - standing[0], 0.0, 0.0])
    assert_stands(limbs, limbs.run(4.0), "a CoM reference 5 cm beyond the edge")
    assert limbs.mean_com(0.5)[0] == pytest.approx(edge - MARGIN, abs=REACHED)
    assert limbs.said("com_reference outside the support polygon", since)
    limbs.send_com_reference(standing)
    assert_stands(limbs, limbs.run(3.0), "the CoM reference back where it stood")


def best_reach(probe, target):
    """The closest the right hand can come to ``target`` with its joints in their ranges, the rest of the robot where
    it is (scipy, from several starts) [m]."""
    q = probe.configuration()
    index = [probe.robot.joint_q_index(name) for name in ARM]
    lower, upper = probe.robot.position_limits(ARM)

    def distance(x):
        trial = q.copy()
        trial[index] = x
        return float(np.sum((probe.hand(trial) - target) ** 2))

    starts = [q[index], np.zeros(3), 0.5 * (lower + upper), lower, upper]
    return min(np.sqrt(minimize(distance, x0, bounds=list(zip(lower, upper))).fun) for x0 in starts)


def test_a_hand_target_in_reach_is_reached_and_one_out_of_reach_stops_at_the_workspace_edge(limbs):
    target = limbs.shoulder() + [0.25, 0.0, -0.1]
    limbs.send_hand_target(target)
    assert_stands(limbs, limbs.run(5.0), "a hand target in reach")
    assert np.linalg.norm(limbs.hand() - target) < 0.01
    since = time.monotonic()
    target = limbs.shoulder() + [0.1, 0.3, -0.1]  # across the chest: the shoulder's roll stops at 0.3 rad
    limbs.send_hand_target(target)
    assert_stands(limbs, limbs.run(8.0), "a hand target out of reach")
    reached = np.linalg.norm(limbs.hand() - target)
    assert reached > 0.2 and reached < best_reach(limbs, target) + 0.005
    assert limbs.said("right_arm/pose stopped at the edge of the limb's workspace", since), limbs.balancer()


@pytest.fixture(scope="module")
def arms():
    """Both arms J-busy, as the bundled configuration has them."""
    yield from standing(Probe)


def trajectory(joints, times, positions=None, velocities=None, stamp=0.0):
    """A trajectory_msgs/JointTrajectory of the points given (stamp [s]; 0: now)."""
    message = trajectory_message(joints, times, None if positions is None else np.asarray(positions, dtype=float),
                                 None if velocities is None else np.asarray(velocities, dtype=float), Time())
    message.header.stamp = Time(sec=int(stamp), nanosec=int(round((stamp % 1.0) * 1e9)))
    return message


def follow(probe, sent, seconds):
    """Send ``sent`` (limb → (message, its start [s of simulated time], its waypoints (times, positions))), run
    ``seconds``; the limbs' estimated joints at each waypoint's time (simulated) against the waypoint, within
    WAYPOINT_REACHED, or else the balancer's report that it slowed the trajectory down (time scaling) and the
    waypoint reached later — the path the same, only later."""
    since = time.monotonic()
    for limb, (message, _, _) in sent.items():
        probe.trajectories[limb].publish(message)
    samples = []  # (simulated time [s], {limb: its joints})
    probe.run(seconds, every=lambda: samples.append((probe.now, {limb: probe.positions(probe.config.limb_joints[limb])
                                                                 for limb in sent})))
    times = np.array([t for t, _ in samples])
    for limb, (_, start, (waypoint_times, waypoints)) in sent.items():
        measured = np.array([joints[limb] for _, joints in samples])
        for t, waypoint in zip(waypoint_times, np.asarray(waypoints, dtype=float)):
            due = int(np.searchsorted(times, start + t))
            assert due < len(times), f"{limb}: the run ended before {t} s"
            error = np.abs(measured[due] - waypoint).max()
            if error <= WAYPOINT_REACHED:
                continue
            later = np.abs(measured[due:] - waypoint).max(axis=1).min()
            assert probe.said(f"{limb}/trajectory slowed down (time scaling)", since) and \
                later <= WAYPOINT_REACHED, (f"{limb}: {measured[due].round(3)} at {t} s, not {waypoint} "
                                            f"(closest later {later:.3f}); {probe.balancer().values}")
    return times, samples


def test_positions_alone_and_with_velocities_are_followed_from_where_the_arms_are(arms):
    """The issue's message — positions alone, one point 2 s ahead, stamp zero (now) — on the left arm; on the right,
    positions with velocities whose first point is not where the arm is: each joined from where the arm is and
    through its points at their times (before issue 50 neither arm moved: positions were dropped)."""
    left, right = (arms.config.limb_joints[limb] for limb in ("left_arm", "right_arm"))
    now = arms.now
    right_times, right_points = [1.0, 2.5], [[-0.6, -0.4, -0.7], [-0.3, -0.2, -0.3]]
    right_velocities = [[0.2, 0.1, 0.2], [0.0, 0.0, 0.0]]
    follow(arms, {"left_arm": (trajectory(left, [2.0], [[0.8, 0.3, -0.6]]), now, ([2.0, 3.0], [[0.8, 0.3, -0.6]] * 2)),
                  "right_arm": (trajectory(right, right_times, right_points, right_velocities), now,
                                (right_times + [3.0], right_points + right_points[-1:]))}, 4.5)


def test_a_trajectory_stamped_ahead_starts_then(arms):
    """Stamped 1 s ahead, its first point (at 0 s) where the arm is: the arm waits for it, then goes through its
    points at their times (stamp + time_from_start)."""
    joints = arms.config.limb_joints["left_arm"]
    here = arms.positions(joints)
    start = arms.now + 1.0
    points = [here, here + [-0.4, 0.2, 0.3]]
    message = trajectory(joints, [0.0, 1.5], points, stamp=start)
    times, samples = follow(arms, {"left_arm": (message, start, ([-0.9, 0.0, 1.5], [here] + points))}, 3.0)
    before = np.array([arm["left_arm"] for t, arm in samples if t < start])
    assert np.abs(before - here).max() < 0.02, "the arm moved before the trajectory's start"


def test_velocities_alone_are_followed_from_where_the_arm_is_through_the_positions_they_give(arms):
    """joint_trajectory_controller's deduction: (1 s, v) then (2 s, 0) from rest gives v/2 at 1 s and v at 2 s
    (before issue 50, v held until the first point: 3 v/2)."""
    joints = arms.config.limb_joints["left_arm"]
    here = arms.positions(joints)
    v = np.array([-0.6, -0.2, -0.3])
    follow(arms, {"left_arm": (trajectory(joints, [1.0, 2.0], velocities=[v, 0.0 * v]), arms.now,
                               ([1.0, 2.0, 2.5], [here + 0.5 * v, here + v, here + v]))}, 3.0)


@pytest.mark.parametrize("reason, shape", [
    ("far_start", "a first point at 0 s 0.5 rad from the arm"),
    ("ends_in_past", "a trajectory over before it arrives"),
    ("outside_limits", "a position beyond the shoulder's range"),
])
def test_a_trajectory_that_cannot_be_followed_is_rejected_and_the_arm_stays(arms, reason, shape):
    joints = arms.config.limb_joints["left_arm"]
    here = arms.positions(joints)
    message = {"far_start": trajectory(joints, [0.0, 1.0], [here + [0.5, 0.0, 0.0], here]),
               "ends_in_past": trajectory(joints, [0.5, 1.0], [here, here + [0.3, 0.0, 0.0]], stamp=arms.now - 2.0),
               "outside_limits": trajectory(joints, [1.0], [here + [0.0, 5.0, 0.0]])}[reason]
    before = int(arms.balancer().values.get(f"rejected: {reason}", 0))
    arms.trajectories["left_arm"].publish(message)
    arms.run(1.5)
    assert np.abs(arms.positions(joints) - here).max() < 0.02, f"{shape}: the arm moved"
    assert int(arms.balancer().values.get(f"rejected: {reason}", 0)) > before, (shape, arms.balancer().values)


def test_a_dance_that_would_topple_the_robot_is_slowed_and_it_stays_up(arms):
    """Both arms in phase through their configured swing at 2 Hz for 6 s (the shoulders 0 → 1.6 rad, within every
    joint's range; one and a half times their speed limit): before the balance came first, this felled kangaroo_like
    through the nodes within 2.5 to 6.5 s (three runs; its own response peaks near 2 Hz, at 1.5 and 2.5 Hz it stood).
    Slowed down — by the joints' speed and by the ZMP the motion would make — the arms dance and the robot stays up."""
    frequency, periods = 2.0, 12
    times = np.linspace(0.0, periods / frequency, int(periods / frequency * RATE) + 1)
    w = 2 * np.pi * frequency
    swing = np.array(arms.config.limb_swing["left_arm"])
    since = time.monotonic()
    pitch = []
    for limb, mirror in (("left_arm", (1, 1, 1)), ("right_arm", (1, -1, 1))):
        joints = arms.config.limb_joints[limb]
        velocities = np.outer(0.5 * w * np.sin(w * times), swing * mirror)  # alone: the right shoulder's roll is
        # asked beyond its range (positions would be refused), which stops it there
        arms.trajectories[limb].publish(trajectory_message(joints, times, None, velocities, Time()))  # now
    start = arms.now
    while arms.now < start + 10.0:
        assert_stands(arms, arms.run(0.5), "the fast dance")
        pitch.append(arms.configuration()[arms.robot.joint_q_index("left_shoulder_pitch")])
    assert arms.said("left_arm/trajectory slowed down (time scaling)", since), arms.balancer()
    assert max(pitch) > 1.0, "the arms should have danced, slowly"
