"""A standing robot's chain as the balance tests see it (test_balance_first.py, test_momentum_motions.py): the plant
in lockstep on its /clock, each node its own process; the estimated state (estimated_joint_states and odom, through
pinocchio) and the plant's ground-truth base height (sim/odom)."""
import numpy as np
import pinocchio as pin
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState

from humanoid_balance.bench.chain import Chain
from humanoid_balance.model import load_robot
from humanoid_balance.model.robot_config import load_robot_config
from humanoid_balance.nodes.qos import LATEST_QOS, RELIABLE_QOS
from humanoid_balance.resources import DEFAULT_ROBOT, robot_config_file

RATE = 100.0  # [Hz] of the plant, in lockstep
BALANCER = "centroidal_balancer"


class StandingProbe:
    """The test's view of a running chain on ``robot``."""

    def __init__(self, chain, robot=DEFAULT_ROBOT):
        self.chain, node = chain, chain.node
        self.config = load_robot_config(robot_config_file(robot))
        self.robot = load_robot(self.config.urdf_file, self.config.loops, floating_base=True)
        self.data = self.robot.model.createData()
        self.joints = self.odom = None
        self.truth = []  # (simulated time [s], base height [m]) of sim/odom
        self.standing = self.standing_com = None  # the base height and the CoM once standing [m]
        node.create_subscription(JointState, "estimated_joint_states", self._on_joints, LATEST_QOS)
        node.create_subscription(Odometry, "odom", lambda message: setattr(self, "odom", message), LATEST_QOS)
        node.create_subscription(Odometry, "sim/odom", self._on_truth, RELIABLE_QOS)

    def _on_joints(self, message):
        self.joints = message

    def _on_truth(self, message):
        stamp = message.header.stamp
        self.truth.append((stamp.sec + 1e-9 * stamp.nanosec, message.pose.pose.position.z))

    @property
    def now(self):
        return self.truth[-1][0]

    def run(self, seconds, every=None):
        """Spin until ``seconds`` of simulated time have passed, calling ``every()`` at each new estimated state; the
        base heights meanwhile [m]."""
        start, seen = self.now, [None]

        def done():
            if every is not None and self.joints is not seen[0]:
                seen[0] = self.joints
                every()
            return self.now >= start + seconds

        assert self.chain.spin(60.0 + 10.0 * seconds, until=done), f"the plant's clock stood at {self.now:.2f} s"
        return np.array([height for time, height in self.truth if time >= start])

    def configuration(self):
        """The estimated configuration (odom's base pose, every joint), pinocchio's order."""
        pose = self.odom.pose.pose
        q = self.robot.reference_q.copy()
        q[:7] = [pose.position.x, pose.position.y, pose.position.z, pose.orientation.x, pose.orientation.y,
                 pose.orientation.z, pose.orientation.w]
        for name, value in zip(self.joints.name, self.joints.position):
            q[self.robot.joint_q_index(name)] = value
        return q

    def positions(self, joints):
        """The estimated positions of ``joints`` [rad, m]."""
        q = self.configuration()
        return np.array([q[self.robot.joint_q_index(name)] for name in joints])

    def com(self):
        return pin.centerOfMass(self.robot.model, self.data, self.configuration()).copy()

    def mean_com(self, seconds):
        """The CoM averaged over the estimated states of the next ``seconds`` of simulated time [m]: where it stands,
        its rocking on the soles (a few mm at a few Hz through the nodes) averaged out."""
        samples = []
        self.run(seconds, every=lambda: samples.append(self.com()))
        return np.mean(samples, axis=0)

    def frames(self, q=None):
        pin.framesForwardKinematics(self.robot.model, self.data, self.configuration() if q is None else q)
        return self.data

    def assert_stands(self, heights, what, tolerance):
        worst = float(np.max(np.abs(heights - self.standing)))
        assert worst < tolerance, f"{what}: the base went {worst:.3f} m from its standing height"


def standing(probe_class, robot=DEFAULT_ROBOT, mode="kinematic", parameters=None, rate=RATE):
    """Yield a ``probe_class`` (a StandingProbe) on a lockstep chain of ``robot`` in balance ``mode`` at ``rate``
    [Hz], the balancer given ``parameters`` on top of its own, once the robot has stood for 2 s."""
    with Chain(rate, robot=robot, mode=mode, lockstep=True, parameters={BALANCER: parameters or {}}) as chain:
        probe = probe_class(chain, robot)
        chain.wait(lambda: probe.joints is not None and probe.odom is not None and len(probe.truth) > 10,
                   "waiting for the estimated state and the plant")
        heights = probe.run(2.0)
        probe.standing = float(np.median(heights[-50:]))
        probe.standing_com = probe.com()
        yield probe
