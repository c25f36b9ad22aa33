"""Both executors a node can run on (parameter ``executor``): each carries a node through valid input, survives
messages rclpy cannot use (a truncated CDR payload, names that are not UTF-8) and stops cleanly; a wrong executor
name is a one-line error."""
import subprocess

import numpy as np
import pytest
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from humanoid_balance.resources import executable
from support.model_fixtures import load
from support.ros_probe import NodeSession

pytestmark = pytest.mark.dds
EXECUTABLE = str(executable("state_estimator"))
DIAGNOSTIC = "state_estimator: estimation"


def malformed(names, positions, seconds):
    """Serialized JointStates rclpy cannot take as they are: cut in half, and with a name that is not UTF-8."""
    message = JointState(name=list(names), position=list(positions))
    message.header.stamp.sec, message.header.stamp.nanosec = int(seconds), int(seconds % 1 * 1e9)
    payload = bytearray(serialize_message(message))
    at = payload.find(names[0].encode())
    invalid = bytearray(payload)
    invalid[at:at + 2] = b"\xff\xfe"
    return [bytes(payload[:len(payload) // 2]), bytes(invalid)]


@pytest.mark.parametrize("executor", ["events", "single_threaded"])
def test_a_node_runs_on_either_executor_and_survives_messages_it_cannot_use(tmp_path, executor):
    robot, _ = load("kangaroo_like")
    names = list(robot.actuated_names)
    positions = [float(x) for x in robot.reference_q[robot.actuated_q]]
    session = NodeSession(EXECUTABLE, ["-p", f"offsets_file:={tmp_path / 'offsets.yaml'}",
                                       "-p", f"executor:={executor}"], "executor_probe")
    joint_states = session.probe.publisher(JointState, "joint_states")
    estimates = session.probe.record(JointState, "estimated_joint_states")
    clock = [100.0]

    def send_valid():
        clock[0] += 0.005
        message = JointState(name=names, position=positions)
        message.header.stamp.sec, message.header.stamp.nanosec = int(clock[0]), int(clock[0] % 1 * 1e9)
        joint_states.publish(message)

    def send_malformed():
        clock[0] += 0.005
        for payload in malformed(names, positions, clock[0]):
            joint_states.publish(payload)
        send_valid()

    def rejected_names():
        values = session.probe.diagnostic_values(DIAGNOSTIC) or {}
        return int(values.get("rejected: missing_joints", 0))

    try:
        assert session.run(lambda: len(estimates) > 10, send_valid), session.report()
        assert session.run(lambda: rejected_names() >= 1, send_malformed, timeout=10.0), session.report()
        before = len(estimates)
        assert session.run(lambda: len(estimates) > before + 10, send_valid), session.report()
        assert session.process.poll() is None
        np.testing.assert_allclose(np.array(estimates[-1].position)[[robot.joint_names.index(n) for n in names]],
                                   positions, atol=1e-9)
    finally:
        code, _, stderr = session.stop()
    assert code == 0 and "Traceback" not in stderr, stderr


def test_an_unknown_executor_is_a_one_line_error():
    result = subprocess.run([EXECUTABLE, "--ros-args", "-p", "executor:=multi"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip() == ("state_estimator: error: parameter 'executor': 'multi' is not one of events, "
                                     "single_threaded")
