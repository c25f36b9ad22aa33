"""contact_estimator in its own process, over DDS: both modes, a silent wrench topic, bad input."""
import math

import numpy as np
import pinocchio as pin
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import PointStamped, PolygonStamped, WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Int8

from humanoid_balance.resources import executable
from support.model_fixtures import load, static_stance
from support.ros_probe import NodeSession

pytestmark = pytest.mark.dds
EXECUTABLE = str(executable("contact_estimator"))
DIAGNOSTIC = "contact_estimator: contacts"
SOLES = ("left_sole", "right_sole")


@pytest.fixture(scope="module")
def stance():
    robot, chain = load("kangaroo_like", floating_base=True)
    q, F, tau, weight = static_stance(robot, chain, SOLES)
    com = pin.centerOfMass(robot.model, robot.model.createData(), q)
    efforts = np.zeros(len(robot.joint_names))
    efforts[robot.actuated_v - 6] = tau
    return robot, q[7:], efforts, F, com


class Session(NodeSession):
    def __init__(self, mode, extra=()):
        super().__init__(EXECUTABLE, ["-p", f"mode:={mode}", "-p", "sample_rate:=200.0", *extra], "contact_probe")
        self.joints = self.probe.publisher(JointState, "estimated_joint_states", sensor=False)
        self.odom = self.probe.publisher(Odometry, "odom", sensor=False)
        self.wrench = {foot: self.probe.publisher(WrenchStamped, f"{foot}/wrench") for foot in ("left_foot", "right_foot")}
        self.zmp = self.probe.record(PointStamped, "zmp")
        self.polygon = self.probe.record(PolygonStamped, "support_polygon")
        self.left = self.probe.record(WrenchStamped, "contact/left_foot/wrench")
        self.states = {foot: self.probe.record(Int8, f"contact/{foot}/state") for foot in ("left_foot", "right_foot")}
        self.time = 2000.0

    def stamp(self, message, seconds=None):
        seconds = self.time if seconds is None else seconds
        message.header.stamp.sec, message.header.stamp.nanosec = int(seconds), int((seconds % 1) * 1e9)
        return message

    def send_state(self, robot, positions, efforts, stamp=None, names=None):
        self.time += 0.005
        message = JointState(name=list(names or robot.joint_names), position=[float(x) for x in positions],
                             effort=[float(x) for x in efforts])
        self.joints.publish(self.stamp(message, stamp))
        odom = Odometry()
        odom.pose.pose.orientation.w = 1.0
        self.odom.publish(self.stamp(odom))

    def send_wrench(self, foot, frame, wrench):
        message = WrenchStamped()
        message.header.frame_id = frame
        message.wrench.force.x, message.wrench.force.y, message.wrench.force.z = map(float, wrench[:3])
        message.wrench.torque.x, message.wrench.torque.y, message.wrench.torque.z = map(float, wrench[3:])
        self.wrench[foot].publish(self.stamp(message))



def test_actuator_forces_mode_zmp_under_the_com(stance):
    robot, joints, efforts, F, com = stance
    session = Session("actuator_forces")
    try:
        assert session.run(lambda: len(session.zmp) > 20, lambda: session.send_state(robot, joints, efforts)), \
            session.report()
        zmp = session.zmp[-1].point
        np.testing.assert_allclose([zmp.x, zmp.y], com[:2], atol=1e-3)
        assert session.zmp[-1].header.frame_id == "odom"
        assert session.states["left_foot"][-1].data == 1 and session.states["right_foot"][-1].data == 1
        left = session.left[-1]
        assert left.header.frame_id == "left_sole"
        assert left.wrench.force.z == pytest.approx(F[0, 2], rel=1e-3)
        assert len(session.polygon[-1].polygon.points) >= 4
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_actuator_forces_mode_sees_flight_in_the_imu(stance):
    """Legs that carry nothing (zero efforts), the posture held: with the imu reading gravity's reaction (standing
    still, 9.81 m/s² up) the base rows of eq. 45 put the weight on the soles, in contact; with the imu reading
    free fall (0 m/s², Newton's law for the CoM: the supports carry nothing) both feet go aerial."""
    robot, joints, _, _, _ = stance
    session = Session("actuator_forces")
    imu_publisher = session.probe.publisher(Imu, "imu")
    reading = [9.81]

    def tick():
        session.send_state(robot, joints, np.zeros(len(joints)))
        imu = Imu()
        imu.orientation.w = 1.0
        imu.linear_acceleration.z = reading[0]
        imu_publisher.publish(session.stamp(imu))

    def phases():
        return [session.states[foot][-1].data if session.states[foot] else None for foot in ("left_foot", "right_foot")]

    try:
        assert session.run(lambda: phases() == [1, 1], tick), session.report()
        reading[0] = 0.0
        assert session.run(lambda: phases() == [0, 0], tick), (phases(), session.report())
        assert session.run(lambda: (session.probe.diagnostic_values(DIAGNOSTIC) or {}).get("flight detection")
                           == "on (imu)", tick)
        assert float(session.probe.diagnostic_values(DIAGNOSTIC)["weight on the supports [%]"]) == 0.0
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_ft_mode_and_a_wrench_topic_that_goes_silent(stance):
    robot, joints, efforts, F, _ = stance
    session = Session("ft_sensors")
    feet = {"left_foot": ("left_sole", F[0]), "right_foot": ("right_sole", F[1])}
    silent = []

    def tick():
        for foot, (frame, wrench) in feet.items():
            if foot not in silent:
                session.send_wrench(foot, frame, wrench)
        session.send_state(robot, joints, efforts)

    try:
        assert session.run(lambda: len(session.left) > 20, tick), session.report()
        assert session.left[-1].wrench.force.z == pytest.approx(F[0, 2], rel=1e-6)
        assert session.states["right_foot"][-1].data == 1
        silent.append("right_foot")
        assert session.run(lambda: session.states["right_foot"][-1].data == -1, tick, timeout=5.0)

        def warned():
            status = session.probe.diagnostics.get(DIAGNOSTIC)
            return status is not None and "right_foot/wrench silent" in status.message

        assert session.run(warned, tick, timeout=5.0)
        assert session.probe.diagnostics[DIAGNOSTIC].level == DiagnosticStatus.WARN
        def rejected():  # best-effort input: resent until one arrives and is counted
            return int((session.probe.diagnostic_values(DIAGNOSTIC) or {}).get("rejected: unknown_frame", 0)) >= 1

        def tick_with_bad_frame():
            session.send_wrench("left_foot", "no_such_frame", F[0])  # a frame the URDF does not have
            tick()

        assert session.run(rejected, tick_with_bad_frame, timeout=5.0)
        assert session.left[-1].wrench.force.z == pytest.approx(F[0, 2], rel=1e-6)
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_bad_input_is_rejected_counted_and_the_last_good_state_kept(stance):
    robot, joints, efforts, _, com = stance
    session = Session("actuator_forces")
    try:
        assert session.run(lambda: len(session.zmp) > 5, lambda: session.send_state(robot, joints, efforts))
        bad = joints.copy()
        bad[3] = math.inf
        bad_messages = {  # the node keeps only the latest input: one bad message at a time, each counted
            "rejected: not_finite": lambda: session.send_state(robot, bad, efforts),
            "rejected: missing_joints": lambda: session.send_state(robot, joints[1:], efforts[1:],
                                                                   names=robot.joint_names[1:]),
            "rejected: length_mismatch": lambda: session.send_state(robot, joints, efforts[:-1]),
            "rejected: stamp_backwards": lambda: session.send_state(robot, joints, efforts, stamp=1.0),
        }
        for key, send in bad_messages.items():
            send()

            def counted():
                return (session.probe.diagnostic_values(DIAGNOSTIC) or {}).get(key) == "1"

            assert session.probe.spin_until(counted, 10.0), (key, session.probe.diagnostic_values(DIAGNOSTIC))
        count = len(session.zmp)
        assert session.run(lambda: len(session.zmp) > count + 5, lambda: session.send_state(robot, joints, efforts))
        np.testing.assert_allclose([session.zmp[-1].point.x, session.zmp[-1].point.y], com[:2], atol=1e-3)
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr
