"""Steps asked for through the nodes (issue 40): balance/<foot>/step (geometry_msgs/PoseStamped) reaches the
balancer, and a step out of the legs' reach or across the other foot is refused with the reason in /diagnostics, the
robot standing. (The steps themselves are checked in the bench's closed loop, test_stepping.py: through the nodes
the contact estimator's phases do not yet follow a landed foot.)

TALOS (serial legs, from example-robot-data) in kinematic mode on its position drives, the chain of
test_balance_first (the plant in lockstep, each node its own process).
"""
import time

import numpy as np
import pinocchio as pin
import pytest
from geometry_msgs.msg import PoseStamped

from humanoid_balance.nodes.qos import RELIABLE_QOS
from standing_probe import BALANCER, StandingProbe, standing

pytestmark = pytest.mark.dds
ROBOT = "talos"


class Probe(StandingProbe):
    """The standing robot and its feet's step topics."""

    def __init__(self, chain, robot):
        super().__init__(chain, robot)
        self.steps = {foot: chain.node.create_publisher(PoseStamped, f"balance/{foot}/step", RELIABLE_QOS)
                      for foot in self.config.feet}

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
