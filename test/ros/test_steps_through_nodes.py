"""Steps asked for through the nodes (issue 40): balance/<foot>/step (geometry_msgs/PoseStamped) reaches the
balancer; a step out of the legs' reach or across the other foot is refused with the reason in /diagnostics, the
robot standing; a step in reach lands where it was asked, the contact estimator's phase of the foot following its
lift-off and touchdown (balance/<foot>/lifted) and the estimated base the plant's through the step.

TALOS (serial legs, from example-robot-data) in kinematic mode on its position drives, the chain of
test_balance_first (the plant in lockstep, each node its own process).
"""
import time

import numpy as np
import pinocchio as pin
import pytest
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from std_msgs.msg import Int8

from humanoid_balance.estimation.contact_wrench import AERIAL, CONTACT
from humanoid_balance.nodes.qos import CHANGES_QOS, RELIABLE_QOS
from support.standing_probe import BALANCER, StandingProbe, standing

pytestmark = pytest.mark.dds
ROBOT = "talos"


class Probe(StandingProbe):
    """The standing robot and its feet's step topics."""

    def __init__(self, chain, robot):
        super().__init__(chain, robot)
        self.steps = {foot: chain.node.create_publisher(PoseStamped, f"balance/{foot}/step", RELIABLE_QOS)
                      for foot in self.config.feet}
        self.phases = {foot: [] for foot in self.config.feet}  # contact/<foot>/state as it changed
        for foot in self.config.feet:
            chain.node.create_subscription(Int8, f"contact/{foot}/state",
                                           lambda message, foot=foot: self.phases[foot].append(message.data),
                                           CHANGES_QOS)
        self.true_base = None
        chain.node.create_subscription(Odometry, "sim/odom", lambda message: setattr(self, "true_base", message),
                                       RELIABLE_QOS)

    def sole(self, foot):
        return self.frames().oMf[self.robot.frame_id(self.config.soles[self.config.feet.index(foot)])]

    def ask_step(self, foot, placement):
        message = PoseStamped()
        message.header.frame_id = "odom"
        message.pose.position.x, message.pose.position.y, message.pose.position.z = map(float, placement.translation)
        x, y, z, w = pin.Quaternion(placement.rotation).coeffs()
        message.pose.orientation.x, message.pose.orientation.y = float(x), float(y)
        message.pose.orientation.z, message.pose.orientation.w = float(z), float(w)
        self.steps[foot].publish(message)

    def said(self, words, since):
        return any(node == BALANCER and status.arrival >= since and words in status.message
                   for node, status in self.chain.history)


@pytest.fixture(scope="module")
def talos():
    yield from standing(Probe, ROBOT)


@pytest.mark.parametrize("offset, words", [((1.0, 0.0, 0.0), "outside the step region"),
                                           ((0.0, -0.3, 0.0), "outside the step region")])  # across the other foot
def test_a_step_out_of_reach_is_refused_with_the_reason(talos, offset, words):
    foot = talos.config.feet[0]
    since = time.monotonic()
    talos.ask_step(foot, pin.SE3(np.eye(3), talos.sole(foot).translation + offset))
    talos.assert_stands(talos.run(1.5), f"a step to {offset}", 0.05)
    assert talos.said(words, since), talos.chain.status[BALANCER]
    assert talos.chain.status[BALANCER].values["steps taken"] == "0"
    assert talos.chain.status[BALANCER].values["step phase"] == "standing"


def test_a_step_in_reach_lands_there_with_the_contact_and_the_base_estimate_following(talos):
    """15 cm forward with the left foot: the sole lands within 1 cm of the target, the contact estimator reads it
    aerial while it swings and in contact once down, the estimated base stays within 1 cm of the plant's throughout
    (it would follow the swing foot if the lifted foot still anchored it), the robot standing on both feet after."""
    foot = talos.config.feet[0]
    start = talos.sole(foot)
    target = pin.SE3(start.rotation, start.translation + [0.15, 0.0, 0.0])
    talos.phases[foot].clear()
    base_error = []

    def follow():
        if talos.true_base is not None:
            truth, estimate = talos.true_base.pose.pose.position, talos.odom.pose.pose.position
            base_error.append(np.linalg.norm([truth.x - estimate.x, truth.y - estimate.y, truth.z - estimate.z]))

    talos.ask_step(foot, target)
    heights = talos.run(4.0, every=follow)
    talos.assert_stands(heights, "a 15 cm step", 0.05)
    landed = talos.sole(foot).translation
    assert np.linalg.norm(landed[:2] - target.translation[:2]) < 0.01, landed
    phases = talos.phases[foot]
    assert AERIAL in phases and phases[-1] == CONTACT, phases
    assert phases.index(AERIAL) < len(phases) - 1 - phases[::-1].index(CONTACT)
    assert max(base_error) < 0.01, max(base_error)
    status = talos.chain.status[BALANCER].values
    assert status["steps taken"] == "1" and status["step phase"] == "standing"
