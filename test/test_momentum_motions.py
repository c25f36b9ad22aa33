"""Embedded motions on a torque-controlled robot, through the nodes (issue 39): in momentum mode on the plant's joint
impedance, both arms follow a 1 Hz swing sent on balance/<limb>/trajectory, on kangaroo_like (closed-chain legs) and
on TALOS (serial; its arms made busy limbs by parameters), and a C-busy hand reaches its target, with the CoM held.

The chain of test_balance_first: the plant in lockstep on its /clock at 100 Hz, each node its own process. The arms'
angles and the CoM come from the estimated state (estimated_joint_states and odom, through pinocchio); the base
height from the plant's ground truth (sim/odom).
"""
import numpy as np
import pinocchio as pin
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from humanoid_balance.bench.chain import Chain
from humanoid_balance.model import load_robot
from humanoid_balance.model.robot_config import load_robot_config
from humanoid_balance.nodes.messages import trajectory_message
from humanoid_balance.nodes.qos import LATEST_QOS, RELIABLE_QOS
from humanoid_balance.resources import DEFAULT_ROBOT, robot_config_file

pytestmark = pytest.mark.dds
RATE = 100.0               # [Hz] of the plant, in lockstep
STANDING_TOLERANCE = 0.05  # [m] the base stays this close to its standing height
SWING_REACHED = 0.9        # each arm joint swings through at least this fraction of the commanded swing
COM_HELD = 0.01            # [m] the CoM's horizontal deviation while the arms swing
FREQUENCY, PERIODS = 1.0, 3
TALOS_SWING = {"left_arm": [-0.6, 0.3, 0.0, -0.6], "right_arm": [-0.6, -0.3, 0.0, -0.6]}  # [rad], in their ranges
TALOS_ARMS = {  # TALOS's configuration has no busy limbs: its shoulders and elbows
    "busy_limbs": ["left_arm", "right_arm"],
    "left_arm_joints": [f"arm_left_{k}_joint" for k in range(1, 5)], "left_arm_end_frame": "arm_left_4_link",
    "left_arm_swing": TALOS_SWING["left_arm"],
    "right_arm_joints": [f"arm_right_{k}_joint" for k in range(1, 5)], "right_arm_end_frame": "arm_right_4_link",
    "right_arm_swing": TALOS_SWING["right_arm"],
}


class Probe:
    """The estimated state, the plant's base height, and the limbs' topics of a running chain."""

    def __init__(self, chain, robot, limbs):
        self.chain, node = chain, chain.node
        self.config = load_robot_config(robot_config_file(robot))
        self.robot = load_robot(self.config.urdf_file, self.config.loops, floating_base=True)
        self.data = self.robot.model.createData()
        self.joints = self.odom = None
        self.truth = []  # (simulated time [s], base height [m])
        node.create_subscription(JointState, "estimated_joint_states", lambda m: setattr(self, "joints", m),
                                 LATEST_QOS)
        node.create_subscription(Odometry, "odom", lambda message: setattr(self, "odom", message), LATEST_QOS)
        node.create_subscription(Odometry, "sim/odom", self._on_truth, RELIABLE_QOS)
        self.trajectories = {limb: node.create_publisher(JointTrajectory, f"balance/{limb}/trajectory",
                                                         RELIABLE_QOS) for limb in limbs}
        self.pose = node.create_publisher(PoseStamped, "balance/right_arm/pose", RELIABLE_QOS)
        chain.wait(lambda: self.joints is not None and self.odom is not None and len(self.truth) > 10,
                   "waiting for the estimated state and the plant")

    def _on_truth(self, message):
        stamp = message.header.stamp
        self.truth.append((stamp.sec + 1e-9 * stamp.nanosec, message.pose.pose.position.z))

    @property
    def now(self):
        return self.truth[-1][0]

    def run(self, seconds, every=None):
        """Spin for ``seconds`` of simulated time, calling ``every()`` at each new estimate; the base heights [m]."""
        start, seen = self.now, [None]

        def done():
            if every is not None and self.joints is not seen[0]:
                seen[0] = self.joints
                every()
            return self.now >= start + seconds

        assert self.chain.spin(60.0 + 10.0 * seconds, until=done), f"the plant's clock stood at {self.now:.2f} s"
        return np.array([height for time, height in self.truth if time >= start])

    def configuration(self):
        pose = self.odom.pose.pose
        q = self.robot.reference_q.copy()
        q[:7] = [pose.position.x, pose.position.y, pose.position.z, pose.orientation.x, pose.orientation.y,
                 pose.orientation.z, pose.orientation.w]
        for name, value in zip(self.joints.name, self.joints.position):
            q[self.robot.joint_q_index(name)] = value
        return q

    def com(self):
        return pin.centerOfMass(self.robot.model, self.data, self.configuration()).copy()

    def positions(self, joints):
        q = self.configuration()
        return np.array([q[self.robot.joint_q_index(name)] for name in joints])

    def frame(self, name, joint=False):
        pin.framesForwardKinematics(self.robot.model, self.data, self.configuration())
        if joint:
            return self.data.oMi[self.robot.model.getJointId(name)].translation.copy()
        return self.data.oMf[self.robot.frame_id(name)].translation.copy()


def standing(robot, parameters):
    with Chain(RATE, robot=robot, mode="momentum", lockstep=True,
               parameters={"centroidal_balancer": parameters}) as chain:
        limbs = parameters.get("busy_limbs", []) + parameters.get("cartesian_limbs", [])
        probe = Probe(chain, robot, limbs or load_robot_config(robot_config_file(robot)).busy_limbs)
        heights = probe.run(2.0)
        probe.standing = float(np.median(heights[-50:]))
        yield probe


def assert_stands(probe, heights, what):
    worst = float(np.max(np.abs(heights - probe.standing)))
    assert worst < STANDING_TOLERANCE, f"{what}: the base went {worst:.3f} m from its standing height"


@pytest.fixture(scope="module", params=[DEFAULT_ROBOT, "talos"])
def dancer(request):
    """The standing robot, and each busy limb's joints and swing [rad]: kangaroo_like's configured ones, TALOS's by
    parameters."""
    talos = request.param == "talos"
    for probe in standing(request.param, TALOS_ARMS if talos else {}):
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
    com_before, arms = dancer.com(), []
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
    deviation = float(np.linalg.norm(coms[:, :2] - com_before[:2], axis=1).max())
    assert deviation <= COM_HELD, f"the CoM moved {deviation * 1e3:.1f} mm while the arms swung"


@pytest.fixture(scope="module")
def reacher():
    yield from standing(DEFAULT_ROBOT, {"busy_limbs": ["left_arm"], "cartesian_limbs": ["right_arm"]})


def test_in_momentum_mode_a_hand_target_in_reach_is_reached(reacher):
    target = reacher.frame("right_shoulder_pitch", joint=True) + [0.25, 0.0, -0.1]
    message = PoseStamped()
    message.header.frame_id = "odom"
    message.pose.position.x, message.pose.position.y, message.pose.position.z = (float(v) for v in target)
    message.pose.orientation.w = 1.0
    reacher.pose.publish(message)
    assert_stands(reacher, reacher.run(5.0), "a hand target in reach, momentum mode")
    assert np.linalg.norm(reacher.frame("right_hand") - target) < 0.01
