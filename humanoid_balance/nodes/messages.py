"""Standard messages in and out of the nodes without per-element Python work.

Incoming sequences of doubles arrive as ``array.array`` and are read as numpy views; outgoing messages are built
once, with their name lists, and refilled on every publish through preallocated ``array.array`` buffers, which
the message setters take as they are.
"""
import array

import numpy as np
import pinocchio as pin
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point, PointStamped, Pose, PoseStamped, Quaternion, Vector3, WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from humanoid_balance.control.joint_trajectory import LimbTrajectory
from humanoid_balance.estimation.contact_wrench import AERIAL, CONTACT, UNKNOWN
from humanoid_balance.errors import HumanoidBalanceError

__all__ = ["RejectedMessage", "finite", "unit_quaternion", "check_frame", "pose_placement", "imu_reading",
           "contact_phase", "stamp_seconds", "JointStateReader", "read_limb_trajectory", "Float64Buffer",
           "JointStateWriter", "Float64ArrayWriter", "OdometryWriter", "WrenchWriter", "point_message",
           "pose_message", "wrench_message", "vector_values", "trajectory_message"]


class RejectedMessage(HumanoidBalanceError):
    """An input message that must not reach the algorithms; ``reason`` is a short counter key."""

    def __init__(self, reason, detail):
        self.reason = reason
        self.detail = detail
        super().__init__(detail)


def stamp_seconds(stamp):
    return stamp.sec + 1e-9 * stamp.nanosec


def finite(values, topic, field):
    """``values`` as a float array (a view of an incoming ``array.array``); RejectedMessage('not_finite') on NaN
    or Inf."""
    array_values = np.frombuffer(values, dtype=float) if isinstance(values, array.array) else \
        np.asarray(values, dtype=float)
    if not np.isfinite(array_values).all():
        raise RejectedMessage("not_finite", f"{topic}: {field} contains NaN or Inf")
    return array_values


def unit_quaternion(orientation, topic, field="orientation"):
    """A geometry_msgs Quaternion as a finite (x, y, z, w) array of norm 1 ± 1e-3; RejectedMessage('not_unit')
    otherwise (a norm-0 or norm-2 quaternion is no rotation)."""
    quaternion = finite([orientation.x, orientation.y, orientation.z, orientation.w], topic, field)
    norm = float(np.sqrt(quaternion @ quaternion))
    if abs(norm - 1.0) > 1e-3:
        raise RejectedMessage("not_unit", f"{topic}: {field} has norm {norm:.4f}, not a unit quaternion")
    return quaternion


def pose_placement(message, frame, topic):
    """A PoseStamped given in ``frame`` as a pin.SE3; RejectedMessage for another frame, a non-finite position or a
    quaternion that is no rotation."""
    check_frame(message.header, frame, topic)
    position = finite(vector_values(message.pose.position), topic, "position")
    x, y, z, w = unit_quaternion(message.pose.orientation, topic)
    return pin.SE3(pin.Quaternion(w, x, y, z).toRotationMatrix(), position)


def check_frame(header, expected, topic):
    """RejectedMessage('unknown_frame') unless the header's frame_id is ``expected`` (or empty: unspecified)."""
    if header.frame_id and header.frame_id != expected:
        raise RejectedMessage("unknown_frame", f"{topic}: frame_id '{header.frame_id[:80]}' is not '{expected}'")


def imu_reading(message, topic="imu"):
    """A sensor_msgs/Imu as (orientation xyzw, angular velocity [rad/s], linear acceleration [m/s²] or None when
    the IMU does not provide it: covariance[0] = −1, REP-145) in the IMU frame; RejectedMessage when the orientation
    is not provided ('imu_no_orientation') or not a rotation ('not_unit'), or a value is NaN or Inf ('not_finite').
    A driver that sends no usable orientation is not trusted for the rest either."""
    if message.orientation_covariance[0] == -1.0:
        raise RejectedMessage("imu_no_orientation", f"{topic}: orientation not provided (covariance[0] = -1)")
    quaternion = unit_quaternion(message.orientation, topic)
    w, a = message.angular_velocity, message.linear_acceleration
    acceleration = finite([a.x, a.y, a.z], topic, "linear_acceleration")
    return (quaternion, finite([w.x, w.y, w.z], topic, "angular_velocity"),
            None if message.linear_acceleration_covariance[0] == -1.0 else acceleration)


def contact_phase(message, topic):
    """A contact/<foot>/state (std_msgs/Int8) as True (1, in contact), False (0, in the air) or None (−1, unknown:
    a silent sensor); RejectedMessage('unknown_phase') for any other value."""
    if message.data == CONTACT:
        return True
    if message.data == AERIAL:
        return False
    if message.data == UNKNOWN:
        return None
    raise RejectedMessage("unknown_phase", f"{topic}: {message.data} is not {CONTACT} (contact), {AERIAL} (aerial) "
                          f"or {UNKNOWN} (unknown)")


def read_limb_trajectory(message, topic, joints, now):
    """``message`` as a :class:`LimbTrajectory` of the limb's ``joints`` (any order, each once, no other), its start
    ``now`` [s] if the stamp is zero.

    Raises:
        RejectedMessage: wrong or duplicate joint names ('wrong_joints'); a point's positions, velocities or
            accelerations neither one per joint nor none ('length_mismatch'); some points with them and others
            without, accelerations without velocities, neither positions nor velocities ('mixed_points'); NaN or Inf
            ('not_finite'); times negative or not increasing ('bad_times').
    """
    names = list(message.joint_names)
    if sorted(names) != sorted(joints) or len(set(names)) != len(names):
        shown = [name[:40] for name in names[:8]]
        raise RejectedMessage("wrong_joints", f"{topic}: joint_names {shown} are not the limb's joints {list(joints)}")
    order = [names.index(joint) for joint in joints]
    points = message.points
    fields = ("positions", "velocities", "accelerations")
    given = {}
    for field in fields:
        counts = {len(getattr(point, field)) for point in points}
        if not counts <= {0, len(names)}:
            k = next(k for k, point in enumerate(points) if len(getattr(point, field)) not in (0, len(names)))
            raise RejectedMessage("length_mismatch", f"{topic}: points[{k}] has {len(getattr(points[k], field))} "
                                  f"{field} for {len(names)} joints")
        if counts == {0, len(names)}:
            raise RejectedMessage("mixed_points", f"{topic}: some points have {field} and others none")
        given[field] = counts == {len(names)}
    if points and not (given["positions"] or given["velocities"]):
        raise RejectedMessage("mixed_points", f"{topic}: the points have neither positions nor velocities")
    if given["accelerations"] and not given["velocities"]:
        raise RejectedMessage("mixed_points", f"{topic}: the points have accelerations but no velocities")
    values = {field: np.array([finite(getattr(point, field), topic, f"points[{k}].{field}")[order]
                               for k, point in enumerate(points)]) if given[field] else None for field in fields}
    times = np.array([point.time_from_start.sec + 1e-9 * point.time_from_start.nanosec for point in points])
    if len(points) and (times[0] < 0.0 or np.any(np.diff(times) <= 0.0)):
        raise RejectedMessage("bad_times", f"{topic}: time_from_start must be ≥ 0 and strictly increasing")
    start = stamp_seconds(message.header.stamp)
    return LimbTrajectory(start if start > 0.0 else now, times, **values)


def vector_values(*vectors):
    """The x, y, z of geometry_msgs Vector3 / Point messages, concatenated (3 per vector)."""
    return [value for vector in vectors for value in (vector.x, vector.y, vector.z)]


class JointStateReader:
    """Pick named joints out of sensor_msgs/JointState messages: any order, extra joints ignored (or refused
    with ``only_known``). The index arrays are built once per name layout."""

    def __init__(self, topic, required, optional=(), only_known=False):
        self.topic = topic
        self.required = tuple(required)
        self.optional = tuple(optional)
        self.only_known = only_known
        self._layout = None   # the name list the index below was built for
        self._take = None     # values of the layout → values of the required joints
        self._optional = {}   # optional name → index in the layout

    def _indices(self, names):
        if names != self._layout:
            position = {name: i for i, name in enumerate(names)}
            if len(position) != len(names):
                raise RejectedMessage("duplicate_names", f"{self.topic}: a joint name appears twice")
            missing = [name for name in self.required if name not in position]
            if missing:
                raise RejectedMessage("missing_joints", f"{self.topic}: missing required joints {missing}")
            if self.only_known:
                unknown = [name for name in names if name not in self.required and name not in self.optional]
                if unknown:
                    raise RejectedMessage("unknown_joints", f"{self.topic}: {unknown} are not joints this node takes")
            required = np.array([position[n] for n in self.required], dtype=int)
            if np.array_equal(required, np.arange(len(required))):  # the required joints first, in order: a view
                count = len(required)
                self._take = (lambda values: values) if len(names) == count else (lambda values: values[:count])
            else:
                self._take = lambda values: values[required]
            self._optional = {n: position[n] for n in self.optional if n in position}
            self._layout = list(names)

    def read(self, message):
        """(positions, velocities or None, efforts or None, {optional name: position}) of the joints.

        Raises:
            RejectedMessage: mismatched array lengths, missing or unknown joints, NaN/Inf.
        """
        names = message.name
        count = len(names)
        position, velocity, effort = message.position, message.velocity, message.effort
        if len(position) != count or len(velocity) not in (0, count) or len(effort) not in (0, count):
            raise RejectedMessage("length_mismatch", f"{self.topic}: {len(position)} positions, {len(velocity)} "
                                  f"velocities and {len(effort)} efforts for {count} names")
        self._indices(names)
        take = self._take
        position = finite(position, self.topic, "position")
        measured = {n: float(position[i]) for n, i in self._optional.items()}
        return (take(position), take(finite(velocity, self.topic, "velocity")) if len(velocity) else None,
                take(finite(effort, self.topic, "effort")) if len(effort) else None, measured)


class Float64Buffer:
    """Values for a float64[] message field: fill(values) hands back a new ``array.array('d')`` of them, which the
    field stores without converting (a microsecond for a hundred joints). A new one per message, not one refilled:
    a node in the same process (balance_stack) receives the message itself and may keep what it read from it."""

    def __init__(self, length):
        self.length = length

    def fill(self, values):
        values = np.asarray(values, dtype=float)
        if values.size != self.length:
            raise ValueError(f"{values.size} values for a field of {self.length}")
        return array.array("d", values.tobytes())


class JointStateWriter:
    """One sensor_msgs/JointState for a fixed list of joints, built once and refilled per publish."""

    def __init__(self, names, frame_id=""):
        self.message = JointState(name=list(names))
        self.message.header.frame_id = frame_id
        self.buffers = [Float64Buffer(len(names)) for _ in range(3)]
        self.empty = array.array("d")

    def fill(self, stamp, position, velocity=None, effort=None):
        message = self.message
        message.header.stamp = stamp
        buffers = self.buffers
        message.position = buffers[0].fill(position)
        message.velocity = self.empty if velocity is None else buffers[1].fill(velocity)
        message.effort = self.empty if effort is None else buffers[2].fill(effort)
        return message


class Float64ArrayWriter:
    """One std_msgs/Float64MultiArray of fixed length (a forward_command_controller's command), refilled per
    publish. With ``rows`` (their names), ``length`` values per row, row-major, the layout naming both dimensions."""

    def __init__(self, length, rows=None):
        self.message = Float64MultiArray()
        if rows:
            self.message.layout.dim = [
                MultiArrayDimension(label=",".join(rows), size=len(rows), stride=len(rows) * length),
                MultiArrayDimension(label="actuators", size=length, stride=length)]
        self.buffer = Float64Buffer(length * (len(rows) if rows else 1))
        self.rows = bool(rows)

    def fill(self, values):
        """``values``: (length,), or one (length,) array per row with rows."""
        self.message.data = self.buffer.fill(np.concatenate(values) if self.rows else values)
        return self.message


class OdometryWriter:
    """One nav_msgs/Odometry (REP-105: pose in ``frame_id``, twist in ``child_frame_id``), refilled per publish."""

    def __init__(self, frame_id, child_frame_id):
        self.message = Odometry(child_frame_id=child_frame_id)
        self.message.header.frame_id = frame_id

    def fill(self, stamp, position, quaternion_xyzw, linear_velocity, angular_velocity):
        message = self.message
        message.header.stamp = stamp
        pose, twist = message.pose.pose, message.twist.twist
        p, o = pose.position, pose.orientation
        p.x, p.y, p.z = float(position[0]), float(position[1]), float(position[2])
        o.x, o.y, o.z, o.w = (float(value) for value in quaternion_xyzw)
        v, w = twist.linear, twist.angular
        v.x, v.y, v.z = float(linear_velocity[0]), float(linear_velocity[1]), float(linear_velocity[2])
        w.x, w.y, w.z = float(angular_velocity[0]), float(angular_velocity[1]), float(angular_velocity[2])
        return message


class WrenchWriter:
    """One geometry_msgs/WrenchStamped in a fixed frame, refilled per publish."""

    def __init__(self, frame_id):
        self.message = WrenchStamped()
        self.message.header.frame_id = frame_id

    def fill(self, stamp, wrench):
        message = self.message
        message.header.stamp = stamp
        f, t = message.wrench.force, message.wrench.torque
        f.x, f.y, f.z = float(wrench[0]), float(wrench[1]), float(wrench[2])
        t.x, t.y, t.z = float(wrench[3]), float(wrench[4]), float(wrench[5])
        return message


def point_message(stamp, frame, xyz):
    """geometry_msgs/PointStamped of a 3-vector [m]."""
    message = PointStamped(point=Point(x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2])))
    message.header.stamp, message.header.frame_id = stamp, frame
    return message


def pose_message(stamp, frame, position, rotation):
    """geometry_msgs/PoseStamped of a position [m] and a rotation matrix (3, 3)."""
    x, y, z, w = pin.Quaternion(np.asarray(rotation, dtype=float)).coeffs()
    message = PoseStamped(pose=Pose(position=Point(x=float(position[0]), y=float(position[1]), z=float(position[2])),
                                    orientation=Quaternion(x=float(x), y=float(y), z=float(z), w=float(w))))
    message.header.stamp, message.header.frame_id = stamp, frame
    return message


def wrench_message(stamp, frame, wrench):
    """geometry_msgs/WrenchStamped of [f; τ] [N, N·m]."""
    message = WrenchStamped()
    message.header.stamp, message.header.frame_id = stamp, frame
    message.wrench.force = Vector3(x=float(wrench[0]), y=float(wrench[1]), z=float(wrench[2]))
    message.wrench.torque = Vector3(x=float(wrench[3]), y=float(wrench[4]), z=float(wrench[5]))
    return message


def trajectory_message(joint_names, times, positions, velocities, stamp):
    """trajectory_msgs/JointTrajectory starting at ``stamp``: one point per time from start [s], with positions
    (k, n) [rad, m] and velocities (k, n) [rad/s, m/s], either None: not given."""
    message = JointTrajectory(joint_names=list(joint_names))
    message.header.stamp = stamp
    for k, t in enumerate(times):
        seconds = int(t)
        message.points.append(JointTrajectoryPoint(
            positions=[] if positions is None else positions[k].tolist(),
            velocities=[] if velocities is None else velocities[k].tolist(),
            time_from_start=Duration(sec=seconds, nanosec=min(int(round((t - seconds) * 1e9)), 999_999_999))))
    return message
