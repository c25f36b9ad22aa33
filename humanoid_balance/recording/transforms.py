"""/tf and /tf_static of a robot in a recording, from its recorded joint states and odometry.

On a ROS 2 machine robot_state_publisher turns joint states into the links' transforms and the state estimator
broadcasts odom → base_link; tf2_msgs has no wheel, so on a bare machine nothing publishes them. Viewers need
them to draw the robot from ``robot_description`` (Foxglove's 3D panel, RViz on ``ros2 bag play``), so the
recording derives them: one transform per URDF joint, parent link → child link (fixed joints once on
/tf_static), and odom → the URDF's root link.
"""
import xml.etree.ElementTree as ElementTree

import numpy as np
import pinocchio as pin
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

from humanoid_balance.recording.bag import TYPESTORE
from humanoid_balance.recording.recorder import LATCHED_QOS

__all__ = ["RobotTransforms", "TransformRecorder", "TF_QOS", "TF_STATIC_QOS"]

TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
TF_STATIC_QOS = LATCHED_QOS   # as tf2's static broadcaster offers it
TF_TYPE = "tf2_msgs/msg/TFMessage"
_T = TYPESTORE.types


def _stamp(seconds, nanoseconds):
    return _T["builtin_interfaces/msg/Time"](sec=seconds, nanosec=nanoseconds)


def _transform(stamp, parent, child, placement):
    """A geometry_msgs/TransformStamped (type store class) of a pinocchio SE3 ``placement`` of child in parent."""
    x, y, z, w = pin.Quaternion(placement.rotation).coeffs()
    translation = placement.translation
    return _T["geometry_msgs/msg/TransformStamped"](
        header=_T["std_msgs/msg/Header"](stamp=stamp, frame_id=parent), child_frame_id=child,
        transform=_T["geometry_msgs/msg/Transform"](
            translation=_T["geometry_msgs/msg/Vector3"](x=translation[0], y=translation[1], z=translation[2]),
            rotation=_T["geometry_msgs/msg/Quaternion"](x=x, y=y, z=z, w=w)))


class RobotTransforms:
    """The links' transforms of a URDF at given joint positions (robot_state_publisher's), plus odom → root.

    Args:
        urdf_file: the robot's URDF.
    """

    def __init__(self, urdf_file):
        self.model = pin.buildModelFromUrdf(str(urdf_file))
        self.data = self.model.createData()
        self.joints = [(joint.get("type"), joint.find("parent").get("link"), joint.find("child").get("link"))
                       for joint in ElementTree.parse(urdf_file).getroot().findall("joint")]
        links = [(k, frame.name) for k, frame in enumerate(self.model.frames) if frame.type == pin.FrameType.BODY]
        self.root = links[0][1]
        self.link_frame = {name: k for k, name in links}
        self.q_index = {name: self.model.joints[self.model.getJointId(name)].idx_q
                        for name in self.model.names[1:] if self.model.joints[self.model.getJointId(name)].nq == 1}

    def placements(self, q):
        """Every link's placement in the root link at configuration ``q`` (pinocchio order) [m]."""
        pin.framesForwardKinematics(self.model, self.data, q)
        return self.data.oMf

    def configuration(self, names, positions):
        """The pinocchio configuration of named joint positions [rad, m] (joints not named: neutral)."""
        q = pin.neutral(self.model)
        for name, position in zip(names, positions):
            index = self.q_index.get(name)
            if index is not None:
                q[index] = position
        return q

    def link_transforms(self, stamp, placements, fixed):
        """TransformStamped of every ``fixed`` (or every moving) joint, parent link → child link, from the links'
        ``placements``."""
        return [_transform(stamp, parent, child,
                           placements[self.link_frame[parent]].actInv(placements[self.link_frame[child]]))
                for kind, parent, child in self.joints if (kind == "fixed") == fixed]

    def odometry_transform(self, stamp, odometry, placements):
        """odom → root link, from an Odometry of any link (its child_frame_id) and the links' ``placements``."""
        pose = odometry.pose.pose
        p, o = pose.position, pose.orientation
        odom_base = pin.SE3(pin.Quaternion(o.w, o.x, o.y, o.z).toRotationMatrix(), np.array([p.x, p.y, p.z]))
        base_in_root = placements[self.link_frame[odometry.child_frame_id]]
        return _transform(stamp, odometry.header.frame_id, self.root, odom_base * base_in_root.inverse())

    def static_message(self, stamp):
        """/tf_static: the fixed joints (CDR bytes), stamped ``stamp`` (a builtin_interfaces Time)."""
        transforms = self.link_transforms(_stamp(stamp.sec, stamp.nanosec), self.placements(pin.neutral(self.model)),
                                          fixed=True)
        return TYPESTORE.serialize_cdr(_T[TF_TYPE](transforms=transforms), TF_TYPE)

    def message(self, joint_state, odometry):
        """/tf at a JointState of the robot's joints and an Odometry of its base (CDR bytes), stamped with the
        joint state's stamp."""
        stamp = _stamp(joint_state.header.stamp.sec, joint_state.header.stamp.nanosec)
        placements = self.placements(self.configuration(joint_state.name, joint_state.position))
        transforms = [self.odometry_transform(stamp, odometry, placements)] + self.link_transforms(stamp, placements,
                                                                                                 fixed=False)
        return TYPESTORE.serialize_cdr(_T[TF_TYPE](transforms=transforms), TF_TYPE)


class TransformRecorder:
    """Writes /tf (at ``rate`` [Hz of the recorder's clock]) and /tf_static into a :class:`GraphRecorder`'s bag,
    from the joint states and odometry it records. Does nothing when the graph publishes /tf itself (the recorder
    then records that).

    Args:
        recorder: the GraphRecorder.
        transforms: the robot's :class:`RobotTransforms`.
        joints_topic, odom_topic: absolute topic names of every joint's JointState and the base's Odometry.
    """

    def __init__(self, recorder, transforms, joints_topic="/estimated_joint_states", odom_topic="/odom", rate=50.0):
        self.bag, self.transforms, self.period = recorder.bag, transforms, int(1e9 / rate)
        self.odometry = None   # the latest Odometry, CDR bytes
        self.next_stamp = 0    # [ns]
        self.static_written = False
        if not (self.bag.add_topic("/tf", TF_TYPE, [TF_QOS]) and self.bag.add_topic("/tf_static", TF_TYPE,
                                                                                      [TF_STATIC_QOS])):
            return
        recorder.listen(odom_topic, lambda data, stamp: setattr(self, "odometry", data))
        recorder.listen(joints_topic, self.on_joint_state)

    def on_joint_state(self, data, stamp):
        if self.odometry is None or stamp < self.next_stamp:
            return
        self.next_stamp = stamp + self.period
        joint_state = deserialize_message(data, JointState)
        if not self.static_written:
            self.bag.write("/tf_static", stamp, self.transforms.static_message(joint_state.header.stamp))
            self.static_written = True
        self.bag.write("/tf", stamp, self.transforms.message(joint_state, deserialize_message(self.odometry, Odometry)))
