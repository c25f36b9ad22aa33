"""Bad messages for every input topic of the suite, for the fault tests.

Each message is one a node must reject: NaN and Inf, arrays of the wrong length, unknown, duplicate and
300-character names, stamps of 0 and 2³¹−1 s, quaternions of norm 0 and 2, trajectories with negative or unordered
times, unknown frames and bodies, contact phases that do not exist. None is a valid message that could
legitimately move the robot. Messages whose content is bad carry a current stamp (up to half a second ahead), so
that they reach the content checks and would poison the stamp track if a rejected stamp were adopted.
"""
import copy
import math

from builtin_interfaces.msg import Duration
from geometry_msgs.msg import PointStamped, PoseStamped, WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, Int8
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

FAR_FUTURE = 2 ** 31 - 1  # [s]
LONG_NAME = "j" * 300


def set_stamp(message, seconds):
    message.header.stamp.sec, message.header.stamp.nanosec = int(seconds), int((seconds % 1) * 1e9)
    return message


def _stamps(template):
    """The two stamp faults of a stamped message whose content is valid."""
    return [("stamp_backwards", set_stamp(copy.deepcopy(template), 0.0)),
            ("stamp_future", set_stamp(copy.deepcopy(template), FAR_FUTURE))]


def joint_states(template, outside_limits=None, implausible=False):
    """From a valid JointState of the topic; ``outside_limits``: (index, value) of an output beyond its URDF limits
    (for a topic of commands); ``implausible``: with a joint 1 rad (or 1 m) from where it is (for a topic of state)."""
    def changed(**fields):
        message = copy.deepcopy(template)
        for name, value in fields.items():
            setattr(message, name, value)
        return message

    position, names = list(template.position), list(template.name)
    faults = [("not_finite", changed(position=[math.nan] + position[1:])),
              ("not_finite", changed(position=position[:-1] + [math.inf])),
              ("length_mismatch", changed(position=position[:-1])),
              ("missing_joints", changed(name=[LONG_NAME] + names[1:])),
              ("duplicate_names", changed(name=[names[1]] + names[1:])),
              ("length_mismatch", changed(name=names + ["extra"])),
              *_stamps(template)]
    if len(template.velocity):
        faults.append(("not_finite", changed(velocity=[math.inf] * len(names))))
    if implausible:
        faults.append(("implausible", changed(position=[position[0] + 1.0] + position[1:])))
    if outside_limits is not None:
        index, value = outside_limits
        faults.append(("outside_limits", changed(position=position[:index] + [value] + position[index + 1:])))
    return faults


def turned(o):
    """The quaternion (x, y, z, w) of the attitude ``o`` (a geometry_msgs Quaternion) turned by 1 rad about the
    world's z: (0, 0, sin ½, cos ½) ⊗ o."""
    s, c = math.sin(0.5), math.cos(0.5)
    return c * o.x - s * o.y, c * o.y + s * o.x, c * o.z + s * o.w, c * o.w - s * o.z


def imu(template):
    def changed(quaternion=None, gyro=None, covariance=None):
        message = copy.deepcopy(template)
        if quaternion is not None:
            o = message.orientation
            o.x, o.y, o.z, o.w = quaternion
        if gyro is not None:
            message.angular_velocity.x = gyro
        if covariance is not None:
            message.orientation_covariance[0] = covariance
        return message

    return [("not_unit", changed(quaternion=(0.0, 0.0, 0.0, 0.0))),
            ("not_unit", changed(quaternion=(0.0, 0.0, 0.0, 2.0))),
            ("not_finite", changed(quaternion=(math.nan, 0.0, 0.0, 1.0))), ("not_finite", changed(gyro=math.inf)),
            ("imu_no_orientation", changed(covariance=-1.0)),
            ("implausible", changed(quaternion=turned(template.orientation))), *_stamps(template)]


def odometry(template):
    """Odometry faults, among them a base 1 m away and one turned by 1 rad about the vertical (implausible)."""
    def changed(quaternion=None, z=None, frame=None, x=None):
        message = copy.deepcopy(template)
        if quaternion is not None:
            o = message.pose.pose.orientation
            o.x, o.y, o.z, o.w = quaternion
        if z is not None:
            message.pose.pose.position.z = z
        if x is not None:
            message.pose.pose.position.x = x
        if frame is not None:
            message.header.frame_id = frame
        return message

    return [("not_unit", changed(quaternion=(0.0, 0.0, 0.0, 0.0))),
            ("not_unit", changed(quaternion=(2.0, 0.0, 0.0, 0.0))), ("not_finite", changed(z=math.nan)),
            ("unknown_frame", changed(frame=LONG_NAME)),
            ("implausible", changed(x=template.pose.pose.position.x + 1.0)),
            ("implausible", changed(quaternion=turned(template.pose.pose.orientation))), *_stamps(template)]


def point(template, stamped=True, implausible=False):
    """PointStamped; ``stamped``: the node checks its stamps (else only content faults, since a valid point with
    any stamp would be taken); ``implausible``: with a point 1 m ahead (a ZMP outside every sole)."""
    nan, frame, ahead = copy.deepcopy(template), copy.deepcopy(template), copy.deepcopy(template)
    nan.point.y = math.nan
    frame.header.frame_id = "nowhere"
    ahead.point.x += 1.0
    return [("not_finite", nan), ("unknown_frame", frame)] + (_stamps(template) if stamped else []) + \
        ([("implausible", ahead)] if implausible else [])


def pose(frame):
    """PoseStamped in ``frame`` (a sole's or a hand's target: content faults only, since a valid pose with any
    stamp would be taken)."""
    def changed(quaternion=(0.0, 0.0, 0.0, 1.0), z=0.0, frame_id=frame):
        message = PoseStamped()
        message.header.frame_id = frame_id
        o = message.pose.orientation
        o.x, o.y, o.z, o.w = quaternion
        message.pose.position.z = z
        return message

    return [("not_unit", changed(quaternion=(0.0, 0.0, 0.0, 0.0))), ("not_unit", changed(quaternion=(2.0, 0, 0, 0))),
            ("not_finite", changed(z=math.inf)), ("unknown_frame", changed(frame_id="nowhere"))]


def contact_state():
    return [("unknown_phase", Int8(data=value)) for value in (2, 5, -7, 127, -128)]


def trajectory(joints, stamp):
    """JointTrajectory faults for a limb with ``joints``."""
    def build(names, times, velocities, positions=None):
        message = JointTrajectory(joint_names=list(names))
        set_stamp(message, stamp)
        for k, (t, velocity) in enumerate(zip(times, velocities)):
            message.points.append(JointTrajectoryPoint(
                positions=[] if positions is None else list(positions[k]), velocities=list(velocity),
                time_from_start=Duration(sec=math.floor(t), nanosec=int((t % 1) * 1e9))))
        return message

    joints = list(joints)
    zero = [0.0] * len(joints)
    return [("wrong_joints", build([LONG_NAME] + joints[1:], (0.5, 1.0), (zero, zero))),
            ("wrong_joints", build([joints[0]] + joints[:-1], (0.5, 1.0), (zero, zero))),
            ("not_finite", build(joints, (0.5, 1.0), ([math.nan] + zero[1:], zero))),
            ("length_mismatch", build(joints, (0.5, 1.0), (zero[1:], zero))),
            ("bad_times", build(joints, (-1.0, 1.0), (zero, zero))),
            ("bad_times", build(joints, (1.0, 0.5), (zero, zero))),
            ("mixed_points", build(joints, (0.5, 1.0), (zero, zero), (zero, []))),
            ("outside_limits", build(joints, (0.5, 1.0), (zero, zero), (zero, [1e6] * len(joints))))]


def actuator_commands(template):
    nan = Float64MultiArray(data=[math.nan] + list(template.data)[1:])
    return [("not_finite", nan), ("length_mismatch", Float64MultiArray(data=list(template.data)[:-1])),
            ("length_mismatch", Float64MultiArray(data=[]))]


def sole_wrench(sole, absurd_force):
    """contact/<foot>/wrench: in another frame than the foot's sole, with a NaN, or pushing ``absurd_force`` [N]."""
    elsewhere, nan, absurd = WrenchStamped(), WrenchStamped(), WrenchStamped()
    elsewhere.header.frame_id = LONG_NAME
    elsewhere.wrench.force.z = 100.0
    nan.header.frame_id = absurd.header.frame_id = sole
    nan.wrench.torque.y = math.nan
    absurd.wrench.force.z = absurd_force
    return [("unknown_frame", elsewhere), ("not_finite", nan), ("implausible", absurd)]


def push():
    unknown, nan = WrenchStamped(), WrenchStamped()
    unknown.header.frame_id = LONG_NAME
    unknown.wrench.force.y = 10.0
    nan.wrench.force.x = math.nan
    return [("unknown_body", unknown), ("not_finite", nan)]


TEMPLATE_TYPES = {"joint_states": JointState, "imu": Imu, "odom": Odometry, "zmp": PointStamped,
                  "estimated_joint_states": JointState, "balance/joint_command": JointState,
                  "actuator_commands": Float64MultiArray}
"""Topics whose faults are made from a valid message of the running chain, and its type."""
