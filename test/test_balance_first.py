"""Balance first, through the nodes (issue 35): references a user might send — a CoM ahead of the toes or beside the
feet, a hand target two metres away, values of 1e300, a dance too fast for the robot — leave kangaroo_like standing,
each clamp or refusal named in /diagnostics; what is reachable is reached.

The chain of test_faults: the plant in lockstep on its /clock at 100 Hz, each node its own process. What is
measured comes from the estimated state (estimated_joint_states and odom, through pinocchio: the CoM, the soles, the
hand, in the odom frame the references are given in) and from the plant's ground truth (sim/odom: the base height,
the simulated time). The best a blocked hand can do is found with scipy over its joints' ranges.
"""
import time

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PointStamped, PoseStamped
from scipy.optimize import minimize
from trajectory_msgs.msg import JointTrajectory

from humanoid_balance.model.soles import SoleRectangle
from humanoid_balance.nodes.messages import trajectory_message
from humanoid_balance.nodes.qos import RELIABLE_QOS
from standing_probe import BALANCER, RATE, StandingProbe, standing

pytestmark = pytest.mark.dds
STANDING_TOLERANCE = 0.10  # [m] the base stays this close to its standing height
MARGIN = 0.04            # [m] the balancer's support_margin (its default)
ARM = ("right_shoulder_pitch", "right_shoulder_roll", "right_elbow")
REACHED = 0.01           # [m] the CoM's steady-state error near the toes (the kinematic mode on position drives)


class Probe(StandingProbe):
    """The test's view of the running chain (see the module)."""

    def __init__(self, chain, robot):
        super().__init__(chain, robot)
        node = chain.node
        self.com_reference = node.create_publisher(PointStamped, "balance/com_reference", RELIABLE_QOS)
        self.pose = node.create_publisher(PoseStamped, "balance/right_arm/pose", RELIABLE_QOS)
        self.trajectories = {limb: node.create_publisher(JointTrajectory, f"balance/{limb}/trajectory", RELIABLE_QOS)
                             for limb in ("left_arm", "right_arm")}

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
    assert limbs.com()[0] == pytest.approx(inside[0], abs=REACHED)
    since = time.monotonic()
    limbs.send_com_reference(standing + [edge + 0.05 - standing[0], 0.0, 0.0])
    assert_stands(limbs, limbs.run(4.0), "a CoM reference 5 cm beyond the edge")
    assert limbs.com()[0] == pytest.approx(edge - MARGIN, abs=REACHED)
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
        positions = np.outer(0.5 * (1.0 - np.cos(w * times)), swing * mirror)
        velocities = np.outer(0.5 * w * np.sin(w * times), swing * mirror)
        arms.trajectories[limb].publish(trajectory_message(joints, times, positions, velocities, Time()))  # now
    start = arms.now
    while arms.now < start + 10.0:
        assert_stands(arms, arms.run(0.5), "the fast dance")
        pitch.append(arms.configuration()[arms.robot.joint_q_index("left_shoulder_pitch")])
    assert arms.said("left_arm/trajectory slowed down (time scaling)", since), arms.balancer()
    assert max(pitch) > 1.0, "the arms should have danced, slowly"
