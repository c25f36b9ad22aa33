"""mujoco_sim in its own process, over DDS: sensors, ground truth, a push through sim/push, bad commands."""

import pinocchio as pin
import pytest
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray

from humanoid_balance.resources import executable
from support.model_fixtures import load
from support.ros_probe import Probe
from support.ros_processes import start, stop

pytestmark = pytest.mark.dds
EXECUTABLE = str(executable("mujoco_sim"))
DIAGNOSTIC = "mujoco_sim: simulation"


def test_sensors_ground_truth_push_and_bad_commands():
    robot, _ = load("kangaroo_like")
    process = start([EXECUTABLE], ros_args=["-p", "real_time:=true"])
    probe = Probe("sim_probe")
    joints = probe.record(JointState, "joint_states", sensor=True)
    imu = probe.record(Imu, "imu", sensor=True)
    odom = probe.record(Odometry, "sim/odom")
    push = probe.publisher(WrenchStamped, "sim/push", sensor=False)
    commands = probe.publisher(Float64MultiArray, "actuator_commands", sensor=False)
    try:
        assert probe.spin_until(lambda: len(joints) > 500 and imu and odom, 30.0), stop(process)[2]  # settled
        names = list(joints[-1].name)
        assert names[:len(robot.actuated_names)] == list(robot.actuated_names)
        assert set(robot.measured_names) <= set(names)
        data = robot.model.createData()
        pin.framesForwardKinematics(robot.model, data, robot.reference_q)
        standing_height = -min(data.oMf[robot.frame_id(sole)].translation[2] for sole in ("left_sole", "right_sole"))
        assert odom[-1].pose.pose.position.z == pytest.approx(standing_height, abs=0.01)  # less the drives' sag
        assert imu[-1].linear_acceleration.z == pytest.approx(9.81, abs=0.1)
        message = WrenchStamped()
        message.header.frame_id = "base_link"
        message.wrench.force.y = 200.0

        def pushed():
            push.publish(message)
            return abs(odom[-1].pose.pose.position.y) > 0.005

        assert probe.spin_until(pushed, 10.0, period=0.05)
        commands.publish(Float64MultiArray(data=[0.0, 1.0]))  # wrong length: refused

        def counted():
            return (probe.diagnostic_values(DIAGNOSTIC) or {}).get("rejected: length_mismatch") == "1"

        assert probe.spin_until(counted, 10.0)
    finally:
        probe.close()
        returncode, _, stderr = stop(process)
    assert returncode == 0, stderr
