"""mujoco_sim: the embedded MuJoCo plant as a robot on ROS topics.

    actuator_commands (Float64MultiArray, `actuated` order) ─┐
    sim/push (WrenchStamped: frame_id = body, force/torque)  ┴─> Simulation.step
        ─> joint_states (JointState: actuated + measured passive joints, with noise and bias), imu (Imu),
           <foot>/wrench (WrenchStamped, foot F/T sensors when enabled), sim/odom (Odometry, ground truth),
           sim/com (PointStamped), sim/linear_momentum and sim/angular_momentum (Vector3Stamped, world axes, about
           the CoM), sim/<foot>/contact_force (WrenchStamped, world frame), /clock (if enabled)

With ``lockstep`` the plant waits, after each tick, for the actuator command computed from it (at most
``lockstep_timeout`` of wall time) before it steps again: the closed loop then sees exactly one tick of delay
however loaded the machine is, as with Gazebo's lockstep.
"""
import time

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, PointStamped, Vector3, Vector3Stamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.clock import Clock as SteadyClock, ClockType
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray

from humanoid_balance.model.loop_closures import load_loop_closures
from humanoid_balance.nodes.common import (RELIABLE_QOS, SENSOR_QOS, Diagnostics, InputGuard, RateMeter,
                                           RejectedMessage, describe, finite, point_message, run,
                                           wrench_message)
from humanoid_balance.resources import robot_files
from humanoid_balance.sim import INTERFACES, Simulation

DEFAULT_URDF, DEFAULT_LOOPS = robot_files()


class MujocoSimNode(Node):
    def __init__(self, **node_options):
        super().__init__("mujoco_sim", **node_options)
        urdf = self.declare_parameter("urdf_file", str(DEFAULT_URDF), describe("URDF", True)).value
        loops = self.declare_parameter("loops_file", str(DEFAULT_LOOPS or ""), describe("loop YAML ('' = serial)",
                                                                                        True)).value
        self.feet = self.declare_parameter("feet", ["left_foot", "right_foot"], describe("foot names", True)).value
        soles = self.declare_parameter("soles", ["left_sole", "right_sole"], describe("sole links", True)).value
        ft = self.declare_parameter("force_torque_sensors", False, describe("foot F/T sensors", True)).value
        timestep = self.declare_parameter("timestep", 0.0005, describe("integration step [s]", True)).value
        self.period = self.declare_parameter("publish_period", 0.002, describe("sensor period [s]", True)).value
        self.real_time = self.declare_parameter("real_time", True,
                                                describe("pace to the wall clock (false: as fast as possible)",
                                                         True)).value
        self.publish_clock = self.declare_parameter("publish_clock", False, describe("publish /clock", True)).value
        self.lockstep = self.declare_parameter("lockstep", False,
                                               describe("wait for each tick's actuator command", True)).value
        self.lockstep_timeout = self.declare_parameter("lockstep_timeout", 0.5,
                                                       describe("step anyway after this wall time [s]", True)).value
        self.interface = self.declare_parameter("command_interface", "position",
                                                describe(f"actuator_commands field: {' | '.join(INTERFACES)}",
                                                         True)).value
        self.noise = self.declare_parameter("position_noise", 0.0, describe("encoder noise std [m or rad]")).value
        self.bias = self.declare_parameter("position_bias", 0.0, describe("encoder bias [m or rad]")).value
        self.push_duration = self.declare_parameter("push_duration", 0.1, describe("sim/push duration [s]")).value

        self.sim = Simulation(urdf, loops or None, soles, force_torque_sensors=ft, timestep=timestep)
        spec = load_loop_closures(loops) if loops else None
        self.joint_names = list(self.sim.actuators) + ([n for n in spec.measured_passive if n not in self.sim.actuators]
                                                       if spec else [])
        self.soles = soles
        self.rng = np.random.default_rng(0)
        self.guard = InputGuard(self)
        self.rate = RateMeter()
        self.steps = max(1, int(round(self.period / timestep)))
        self.awaiting_since = None   # wall time since which a lockstep tick waits for its command
        self.unanswered_ticks = 0    # lockstep ticks stepped on the timeout, without a command

        self.create_subscription(Float64MultiArray, "actuator_commands", self.on_command, RELIABLE_QOS)
        self.create_subscription(WrenchStamped, "sim/push", self.on_push, RELIABLE_QOS)
        self.joint_publisher = self.create_publisher(JointState, "joint_states", SENSOR_QOS)
        self.imu_publisher = self.create_publisher(Imu, "imu", SENSOR_QOS)
        self.wrench_publishers = ([self.create_publisher(WrenchStamped, f"{foot}/wrench", SENSOR_QOS)
                                   for foot in self.feet] if ft else [])
        self.odom_publisher = self.create_publisher(Odometry, "sim/odom", RELIABLE_QOS)
        self.com_publisher = self.create_publisher(PointStamped, "sim/com", RELIABLE_QOS)
        self.contact_publishers = [self.create_publisher(WrenchStamped, f"sim/{foot}/contact_force", RELIABLE_QOS)
                                   for foot in self.feet]
        self.clock_publisher = self.create_publisher(Clock, "/clock", 10) if self.publish_clock else None
        self.diagnostics = Diagnostics(self, "simulation")
        self.momentum_publishers = [self.create_publisher(Vector3Stamped, f"sim/{kind}_momentum", RELIABLE_QOS)
                                    for kind in ("linear", "angular")]
        wall = SteadyClock(clock_type=ClockType.STEADY_TIME)  # the plant's pace never follows /clock
        if self.real_time:
            self.create_timer(self.period, self.tick, clock=wall)
        else:  # as fast as possible: back to back, or on each command in lockstep (the timer then is a watchdog)
            self.create_timer(self.lockstep_timeout if self.lockstep else 0.0, self.tick, clock=wall)
        self.create_timer(1.0, self.publish_diagnostics, clock=wall)

    def on_command(self, message):
        try:
            values = finite(message.data, "actuator_commands", "data")
            if len(values) != len(self.sim.actuators):
                raise RejectedMessage("length_mismatch", f"actuator_commands: {len(values)} values for "
                                      f"{len(self.sim.actuators)} actuators")
        except RejectedMessage as error:
            self.guard.reject(error)
            return
        self.sim.set_command(self.interface, values)
        if self.awaiting_since is not None:
            self.awaiting_since = None
            if not self.real_time:
                self.tick()

    def on_push(self, message):
        try:
            if message.header.frame_id not in [self.sim.model.body(i).name for i in range(self.sim.model.nbody)]:
                raise RejectedMessage("unknown_body", f"sim/push: '{message.header.frame_id}' is not a body")
            f, t = message.wrench.force, message.wrench.torque
            wrench = finite([f.x, f.y, f.z, t.x, t.y, t.z], "sim/push", "wrench")
        except RejectedMessage as error:
            self.guard.reject(error)
            return
        self.sim.push(message.header.frame_id, wrench[:3], wrench[3:], self.push_duration)

    def stamp(self):
        """Simulated time when publishing /clock, else the node's clock."""
        if self.publish_clock:
            return Time(sec=int(self.sim.time), nanosec=int((self.sim.time % 1) * 1e9))
        return self.get_clock().now().to_msg()

    def tick(self):
        if self.awaiting_since is not None:
            if time.monotonic() - self.awaiting_since < self.lockstep_timeout:
                return
            self.unanswered_ticks += 1
        self.sim.step(self.steps)
        if self.lockstep:
            self.awaiting_since = time.monotonic()
        self.rate.tick()
        stamp = self.stamp()
        if self.clock_publisher is not None:
            self.clock_publisher.publish(Clock(clock=stamp))
        position, velocity, effort = self.sim.joint_states(self.joint_names)
        if self.noise:
            position = position + self.rng.normal(scale=self.noise, size=len(position))
        joints = JointState(name=self.joint_names, position=(position + self.bias).tolist(),
                            velocity=velocity.tolist(), effort=effort.tolist())
        joints.header.stamp = stamp
        self.joint_publisher.publish(joints)
        quaternion, gyro, accelerometer = self.sim.imu()
        imu = Imu()
        imu.header.stamp, imu.header.frame_id = stamp, "imu"
        imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = map(float, quaternion)
        imu.angular_velocity = Vector3(x=gyro[0], y=gyro[1], z=gyro[2])
        imu.linear_acceleration = Vector3(x=accelerometer[0], y=accelerometer[1], z=accelerometer[2])
        self.imu_publisher.publish(imu)
        for publisher, sole in zip(self.wrench_publishers, self.soles):
            frame, wrench = self.sim.foot_wrench(sole)
            publisher.publish(wrench_message(stamp, frame, wrench))
        truth = self.sim.ground_truth()
        odom = Odometry(child_frame_id="base_link")
        odom.header.stamp, odom.header.frame_id = stamp, "world"
        odom.pose.pose.position = Point(x=truth.base_position[0], y=truth.base_position[1], z=truth.base_position[2])
        x, y, z, w = map(float, truth.base_quaternion)
        odom.pose.pose.orientation.x, odom.pose.pose.orientation.y = x, y
        odom.pose.pose.orientation.z, odom.pose.pose.orientation.w = z, w
        self.odom_publisher.publish(odom)
        self.com_publisher.publish(point_message(stamp, "world", truth.com))
        for publisher, momentum in zip(self.momentum_publishers, (truth.linear_momentum, truth.angular_momentum)):
            message = Vector3Stamped(vector=Vector3(x=momentum[0], y=momentum[1], z=momentum[2]))
            message.header.stamp, message.header.frame_id = stamp, "world"
            publisher.publish(message)
        for publisher, force in zip(self.contact_publishers, truth.sole_forces):
            publisher.publish(wrench_message(stamp, "world", np.r_[force, 0.0, 0.0, 0.0]))

    def publish_diagnostics(self):
        truth = self.sim.ground_truth()
        values = {"simulated time [s]": self.sim.time, "tick rate [Hz]": self.rate.hz,
                  "base height [m]": float(truth.base_position[2]),
                  "command interface": self.interface}
        if self.lockstep:
            values["lockstep ticks without a command"] = self.unanswered_ticks
        values.update(self.guard.figures())
        self.diagnostics.publish("OK", "simulating", values)


def main(args=None):
    return run(MujocoSimNode, "mujoco_sim", args)
