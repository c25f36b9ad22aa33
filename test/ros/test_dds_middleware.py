"""Two rclpy nodes in two processes exchange a sensor_msgs/JointState over real DDS."""
import json

import pytest

from support.joint_state_peer import EFFORTS, NAMES, POSITIONS, VELOCITIES
from support.ros_processes import start_script, stop

pytestmark = pytest.mark.dds


def test_joint_state_crosses_process_boundary(ros_domain_id):
    talker = start_script("joint_state_peer.py", "talker")
    listener = start_script("joint_state_peer.py", "listener")
    try:
        out, err = listener.communicate(timeout=30)
    finally:
        stop(listener)
        stop(talker)
    assert listener.returncode == 0, err
    received = json.loads(out.strip().splitlines()[-1])
    assert received == {"name": NAMES, "position": POSITIONS, "velocity": VELOCITIES, "effort": EFFORTS}


def test_topic_remap_through_ros_args(ros_domain_id):
    """A remap given with --ros-args redirects the talker; the listener follows the same remap."""
    remap = ("-r", "joint_states:=robot/joint_states")
    talker = start_script("joint_state_peer.py", "talker", ros_args=remap)
    listener = start_script("joint_state_peer.py", "listener", ros_args=remap)
    try:
        out, err = listener.communicate(timeout=30)
    finally:
        stop(listener)
        returncode, _, talker_err = stop(talker)
    assert listener.returncode == 0, err
    assert json.loads(out.strip().splitlines()[-1])["name"] == NAMES
    assert returncode == 0, talker_err
