"""Recordings of the closed loop (the benchmark experiments' runs without ROS): each tick becomes the messages the
plant and the nodes publish on the same topics, built from what the loop's cores produced, in a rosbag2 (MCAP)
directory logged on the simulated time, so that the runs open in the same tools and layout as the demo's.

Every tick: /clock, joint_states (the actuated joints the loop reads), imu, estimated_joint_states, odom, zmp,
contact/<foot>/wrench, balance/joint_command, actuator_commands and the ground truth under sim/; at the nodes'
display rate: support_polygon, balance/com, contact/<foot>/desired_wrench and contact/<foot>/state (also when it
changes); robot_description once, /tf at 50 Hz with /tf_static; sim/push when the loop pushes. Units: SI.
"""

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point32, PointStamped, PolygonStamped, Vector3, Vector3Stamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile
from rclpy.serialization import serialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, Int8, String

from humanoid_balance.mapping import COMMAND_FIELDS
from humanoid_balance.model.meshes import description_text
from humanoid_balance.nodes.qos import RELIABLE_QOS, SENSOR_QOS
from humanoid_balance.nodes.messages import (Float64ArrayWriter, JointStateWriter, OdometryWriter, point_message,
                                             wrench_message)
from humanoid_balance.recording import LATCHED_QOS, Bag, RobotTransforms
from humanoid_balance.recording.transforms import TF_QOS, TF_STATIC_QOS, TF_TYPE

__all__ = ["LoopRecorder"]

DISPLAY_RATE, TF_RATE = 30.0, 50.0   # [Hz of simulated time], as the nodes' display_rate and the demo's /tf
ODOM, WORLD = "odom", "world"        # the estimates' and the plant's frames
CLOCK_QOS = QoSProfile(depth=10)      # as the plant offers /clock


def _stamp(seconds):
    nanoseconds = int(round(seconds * 1e9))
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def _msgtype(message_class):
    return f"{message_class.__module__.split('.')[0]}/msg/{message_class.__name__}"


class LoopRecorder:
    """Records a :class:`ClosedLoop`'s ticks into the rosbag2 directory ``path``.

    Args:
        path: the directory (see :class:`Bag`).
        loop: the ClosedLoop; :meth:`write` is called with its :class:`Signals` after each tick.
        description: what is recorded (key → text), kept in the metadata.
    """

    def __init__(self, path, loop, description):
        config, robot = loop.config, loop.robot
        self.bag, self.loop = Bag(path, description), loop
        self.transforms = RobotTransforms(config.urdf_file)
        self.feet, self.soles = list(config.feet), list(config.soles)
        base = config.base_frame or robot.root_link
        topics = {"/clock": (Clock, CLOCK_QOS), "/joint_states": (JointState, SENSOR_QOS), "/imu": (Imu, SENSOR_QOS),
                  "/estimated_joint_states": (JointState, RELIABLE_QOS), "/odom": (Odometry, RELIABLE_QOS),
                  "/zmp": (PointStamped, RELIABLE_QOS), "/support_polygon": (PolygonStamped, RELIABLE_QOS),
                  "/balance/joint_command": (JointState, RELIABLE_QOS), "/balance/com": (PointStamped, RELIABLE_QOS),
                  "/actuator_commands": (Float64MultiArray, RELIABLE_QOS), "/sim/odom": (Odometry, RELIABLE_QOS),
                  "/sim/com": (PointStamped, RELIABLE_QOS), "/sim/push": (WrenchStamped, RELIABLE_QOS),
                  "/sim/linear_momentum": (Vector3Stamped, RELIABLE_QOS),
                  "/sim/angular_momentum": (Vector3Stamped, RELIABLE_QOS),
                  "/robot_description": (String, LATCHED_QOS)}
        for foot in self.feet:
            topics.update({f"/contact/{foot}/wrench": (WrenchStamped, RELIABLE_QOS),
                           f"/contact/{foot}/state": (Int8, RELIABLE_QOS),
                           f"/contact/{foot}/desired_wrench": (WrenchStamped, RELIABLE_QOS),
                           f"/sim/{foot}/contact_force": (WrenchStamped, RELIABLE_QOS)})
        for topic, (message_class, qos) in topics.items():
            self.bag.add_topic(topic, _msgtype(message_class), [qos])
        self.bag.add_topic("/tf", TF_TYPE, [TF_QOS])
        self.bag.add_topic("/tf_static", TF_TYPE, [TF_STATIC_QOS])
        self.joint_states = JointStateWriter(loop.actuated)
        self.estimated = JointStateWriter(robot.joint_names)
        self.commands = JointStateWriter(robot.output_names)
        self.odometry = OdometryWriter(ODOM, base)
        self.truth = OdometryWriter(WORLD, base)
        self.fields = COMMAND_FIELDS["impedance" if loop.impedance else "position"]   # what the plant is sent
        self.actuators = Float64ArrayWriter(len(loop.actuated), self.fields if loop.impedance else None)
        self.next_display = self.next_transform = 0.0   # [s]
        self.phases = None                               # the contact phases last recorded
        self.urdf = description_text(config.urdf_file)
        self.started = False

    def write(self, signals):
        """One tick's messages (see the module's docstring)."""
        seconds = signals.time
        stamp, log = _stamp(seconds), int(round(seconds * 1e9))

        def write(topic, message):
            self.bag.write(topic, log, serialize_message(message))

        if not self.started:
            write("/robot_description", String(data=self.urdf))
            self.bag.write("/tf_static", log, self.transforms.static_message(stamp))
            self.started = True
        write("/clock", Clock(clock=stamp))
        position, velocity, effort = signals.sensors
        write("/joint_states", self.joint_states.fill(stamp, position, velocity, effort))
        imu = Imu()
        imu.header.stamp, imu.header.frame_id = stamp, "imu"
        o, w = imu.orientation, imu.angular_velocity
        o.x, o.y, o.z, o.w = (float(value) for value in signals.imu[0])
        w.x, w.y, w.z = (float(value) for value in signals.imu[1])
        write("/imu", imu)
        state, contact, command, truth = signals.state, signals.contact, signals.command, signals.truth
        base = state.base
        joint_state = self.estimated.fill(stamp, state.q, state.v)
        odometry = self.odometry.fill(stamp, base.position, base.quaternion_xyzw,
                                      base.rotation.T @ base.linear_velocity, base.angular_velocity)
        write("/estimated_joint_states", joint_state)
        write("/odom", odometry)
        if contact.zmp is not None:
            write("/zmp", point_message(stamp, ODOM, contact.zmp))
        for foot, sole, estimate in zip(self.feet, self.soles, contact.feet):
            if estimate.wrench is not None:
                write(f"/contact/{foot}/wrench", wrench_message(stamp, sole, estimate.wrench))
        write("/balance/joint_command", self.commands.fill(stamp, command.position, command.velocity, command.effort))
        if signals.actuators is not None:
            rows = [getattr(signals.actuators, field) for field in self.fields]
            write("/actuator_commands", self.actuators.fill(rows if self.loop.impedance else rows[0]))
        write("/sim/odom", self.truth.fill(stamp, truth.base_position, truth.base_quaternion, np.zeros(3), np.zeros(3)))
        write("/sim/com", point_message(stamp, WORLD, truth.com))
        for topic, momentum in (("/sim/linear_momentum", truth.linear_momentum),
                                ("/sim/angular_momentum", truth.angular_momentum)):
            message = Vector3Stamped(vector=Vector3(x=float(momentum[0]), y=float(momentum[1]), z=float(momentum[2])))
            message.header.stamp, message.header.frame_id = stamp, WORLD
            write(topic, message)
        for foot, force in zip(self.feet, truth.sole_forces):
            write(f"/sim/{foot}/contact_force", wrench_message(stamp, WORLD, np.r_[force, 0.0, 0.0, 0.0]))
        phases = [int(estimate.state) for estimate in contact.feet]
        display = seconds >= self.next_display
        if display or phases != self.phases:
            self.phases = phases
            for foot, phase in zip(self.feet, phases):
                write(f"/contact/{foot}/state", Int8(data=phase))
        if display:
            self.next_display = seconds + 1.0 / DISPLAY_RATE
            polygon = PolygonStamped()
            polygon.header.stamp, polygon.header.frame_id = stamp, ODOM
            polygon.polygon.points = [Point32(x=float(x), y=float(y), z=float(z))
                                      for x, y, z in self.loop.loop.contact.support_polygon(contact)]
            write("/support_polygon", polygon)
            write("/balance/com", point_message(stamp, ODOM, command.com))
            for foot, sole, wrench in zip(self.feet, self.soles, command.wrenches):
                write(f"/contact/{foot}/desired_wrench", wrench_message(stamp, sole, wrench))
        if seconds >= self.next_transform:
            self.next_transform = seconds + 1.0 / TF_RATE
            self.bag.write("/tf", log, self.transforms.message(joint_state, odometry))

    def push(self, seconds, body, force):
        """A push of ``force`` [N] on ``body`` at ``seconds``, as sim/push carries it."""
        message = wrench_message(_stamp(seconds), body, np.r_[force, 0.0, 0.0, 0.0])
        self.bag.write("/sim/push", int(round(seconds * 1e9)), serialize_message(message))

    def close(self):
        self.bag.close()
