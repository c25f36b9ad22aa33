"""Embedded motions on a torque-controlled robot, through the nodes (issue 39): in momentum mode on the plant's joint
impedance, both arms follow a 1 Hz swing sent on balance/<limb>/trajectory, on kangaroo_like (closed-chain legs) and
on TALOS (serial; its arms made busy limbs by parameters), and a C-busy hand reaches its target, with the CoM held.

The chain of test_balance_first: the plant in lockstep on its /clock at 100 Hz, each node its own process. The arms'
angles and the CoM come from the estimated state (estimated_joint_states and odom, through pinocchio); the base
height from the plant's ground truth (sim/odom).
"""
import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from trajectory_msgs.msg import JointTrajectory

from humanoid_balance.nodes.messages import trajectory_message
from humanoid_balance.nodes.qos import RELIABLE_QOS
from humanoid_balance.resources import DEFAULT_ROBOT
from support.standing_probe import RATE, StandingProbe, standing

pytestmark = pytest.mark.dds
STANDING_TOLERANCE = 0.05  # [m] the base stays this close to its standing height
SWING_REACHED = 0.9        # each arm joint swings through at least this fraction of the commanded swing
COM_HELD = 0.01            # [m] the CoM's horizontal deviation while the arms swing
FREQUENCY, PERIODS = 1.0, 3
TALOS_SWING = {"left_arm": [-0.6, 0.3, 0.0, -0.6], "right_arm": [-0.45, -0.3, 0.0, -0.6]}  # [rad], in their ranges
# (arm_right_1_joint stops at -0.52 rad)
TALOS_ARMS = {  # TALOS's configuration has no busy limbs: its shoulders and elbows
    "busy_limbs": ["left_arm", "right_arm"],
    "left_arm_joints": [f"arm_left_{k}_joint" for k in range(1, 5)], "left_arm_end_frame": "arm_left_4_link",
    "left_arm_swing": TALOS_SWING["left_arm"],
    "right_arm_joints": [f"arm_right_{k}_joint" for k in range(1, 5)], "right_arm_end_frame": "arm_right_4_link",
    "right_arm_swing": TALOS_SWING["right_arm"],
}
LIMBS = ("left_arm", "right_arm")


class Probe(StandingProbe):
    """The standing robot, and the limbs' topics."""

    def __init__(self, chain, robot):
        super().__init__(chain, robot)
        self.trajectories = {limb: chain.node.create_publisher(JointTrajectory, f"balance/{limb}/trajectory",
                                                               RELIABLE_QOS) for limb in LIMBS}
        self.pose = chain.node.create_publisher(PoseStamped, "balance/right_arm/pose", RELIABLE_QOS)


def assert_stands(probe, heights, what):
    probe.assert_stands(heights, what, STANDING_TOLERANCE)


@pytest.fixture(scope="module", params=[DEFAULT_ROBOT, "talos"])
def dancer(request):
    """The standing robot, and each busy limb's joints and swing [rad]: kangaroo_like's configured ones, TALOS's by
    parameters."""
    talos = request.param == "talos"
    for probe in standing(Probe, request.param, "momentum", TALOS_ARMS if talos else {}):
        config = probe.config
        probe.dance = {limb: (TALOS_ARMS[f"{limb}_joints"], TALOS_SWING[limb]) if talos else
                       (config.limb_joints[limb], config.limb_swing[limb])
                       for limb in (TALOS_ARMS["busy_limbs"] if talos else config.busy_limbs)}
        yield probe


def test_in_momentum_mode_the_arms_follow_their_trajectories_with_the_com_held(dancer):
    limbs = list(dancer.dance)
    joints = {limb: dancer.dance[limb][0] for limb in limbs}
    swing = {limb: dancer.dance[limb][1] for limb in limbs}
    times = np.linspace(0.0, PERIODS / FREQUENCY, int(PERIODS / FREQUENCY * RATE) + 1)
    w = 2 * np.pi * FREQUENCY
    arms = []
    for limb in limbs:
        amplitude = np.asarray(swing[limb], dtype=float)
        positions = dancer.positions(joints[limb]) + np.outer(0.5 * (1.0 - np.cos(w * times)), amplitude)
        velocities = np.outer(0.5 * w * np.sin(w * times), amplitude)
        dancer.trajectories[limb].publish(trajectory_message(joints[limb], times, positions, velocities, Time()))
    every_joint = [joint for limb in limbs for joint in joints[limb]]
    commanded = np.abs(np.concatenate([swing[limb] for limb in limbs]))
    coms = []

    def sample():
        arms.append(dancer.positions(every_joint))
        coms.append(dancer.com())

    assert_stands(dancer, dancer.run(PERIODS / FREQUENCY + 0.5, every=sample), "the dance in momentum mode")
    arms, coms = np.array(arms), np.array(coms)
    swinging = commanded > 0.0
    reached = (arms.max(axis=0) - arms.min(axis=0))[swinging] / commanded[swinging]
    assert reached.min() >= SWING_REACHED, dict(zip(np.array(every_joint)[swinging], reached.round(2)))
    deviation = float(np.linalg.norm(coms[:, :2] - dancer.standing_com[:2], axis=1).max())
    assert deviation <= COM_HELD, f"the CoM moved {deviation * 1e3:.1f} mm while the arms swung"


@pytest.fixture(scope="module")
def reacher():
    yield from standing(Probe, mode="momentum",
                        parameters={"busy_limbs": ["left_arm"], "cartesian_limbs": ["right_arm"]})


def test_in_momentum_mode_a_hand_target_in_reach_is_reached(reacher):
    shoulder = reacher.frames().oMi[reacher.robot.model.getJointId("right_shoulder_pitch")].translation
    target = shoulder + [0.25, 0.0, -0.1]
    message = PoseStamped()
    message.header.frame_id = "odom"
    message.pose.position.x, message.pose.position.y, message.pose.position.z = (float(v) for v in target)
    message.pose.orientation.w = 1.0
    reacher.pose.publish(message)
    assert_stands(reacher, reacher.run(5.0), "a hand target in reach, momentum mode")
    assert np.linalg.norm(reacher.frames().oMf[reacher.robot.frame_id("right_hand")].translation - target) < 0.01
