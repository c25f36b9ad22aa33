"""mujoco_sim: the embedded MuJoCo plant as a robot on ROS topics.

    actuator_commands (Float64MultiArray, `actuated` order; ─┐
      impedance: rows position, velocity, effort,            │
      stiffness, damping)                                    │
    sim/push (WrenchStamped: frame_id = body, '' = root) ────┴─> Simulation.step
        ─> joint_states (JointState: actuated + measured passive joints, with noise and bias), imu (Imu),
           <foot>/wrench (WrenchStamped, foot F/T sensors when enabled), sim/odom (Odometry, ground truth),
           sim/com (PointStamped), sim/linear_momentum and sim/angular_momentum (Vector3Stamped, world axes, about
           the CoM), sim/<foot>/contact_force (WrenchStamped, world frame), /clock (if enabled)

With ``lockstep`` the plant waits, after each tick, for the actuator command computed from it (at most
``lockstep_timeout`` of wall time) before it steps again: the closed loop then sees exactly one tick of delay
however loaded the machine is, as with Gazebo's lockstep. Without it the plant runs free, as a robot does; with
``real_time`` it keeps up with the wall clock, a late tick stepping as far as the time that has passed (at most
``max_lag`` behind: further, the plant gives up that much time and counts it in /diagnostics).
joint_states, imu and the foot wrenches go out every tick; the ground truth under sim/ at ``ground_truth_rate``
of simulated time (≤ 0: every tick), while something subscribes to it; /diagnostics once a second of the node's
clock, as every node: with ``use_sim_time`` on the /clock it publishes itself (sim.launch.py, the demo), once a
simulated second, when the nodes on that clock report too.
"""
import time
from typing import NamedTuple

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PointStamped, PoseStamped, Vector3, Vector3Stamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.clock import Clock as SteadyClock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray

from humanoid_balance.model.loop_closures import load_loop_closures
from humanoid_balance.nodes.diagnostics import Diagnostics
from humanoid_balance.nodes.entry import run
from humanoid_balance.nodes.input_guard import InputGuard, advertise, subscribe, timer
from humanoid_balance.nodes.parameters import declare_robot, describe
from humanoid_balance.nodes.qos import LATEST_QOS, RELIABLE_QOS, SENSOR_QOS
from humanoid_balance.nodes.messages import (JointStateWriter, OdometryWriter, RejectedMessage, WrenchWriter, finite,
                                             point_message, pose_message, vector_values, wrench_message)
from humanoid_balance.nodes.timing import CallbackTiming, DisplayRate, RateMeter
from humanoid_balance.mapping import COMMAND_FIELDS
from humanoid_balance.sim import INTERFACES, PlantPerturbation, Simulation


PERTURBATION_PARAMETERS = {  # how the plant differs from the robot's files and its sensors lie (sim/perturbation.py)
    "mass_error": "each body's mass and inertia scaled by 1 ± this fraction, the sign drawn per body",
    "com_error": "each body's CoM moved ± this along each axis [m]",
    "position_noise": "encoder noise std [m or rad]",
    "position_bias": "encoder bias, ± per joint [m or rad]",
    "velocity_noise": "joint velocity noise std [m/s or rad/s]",
    "gyro_noise": "gyro noise std [rad/s]", "gyro_bias": "gyro bias, ± per axis [rad/s]",
    "accelerometer_noise": "accelerometer noise std [m/s²]",
    "accelerometer_bias": "accelerometer bias, ± per axis [m/s²]",
    "imu_tilt": "the IMU mounted this much off its frame [rad]",
    "effort_noise": "effort noise std, a fraction of each actuator's limit",
    "effort_offset": "effort offset, ± a fraction of each actuator's limit",
    "command_delay": "actuator_commands applied this many commands late",
    "floor_roll": "the floor inclined about x: its +y side raised by this angle [rad] (gravity turns; the IMU's "
                  "attitude is against gravity)",
    "floor_pitch": "then about y: its +x side lowered by this angle [rad]",
    "perturbation_seed": "seeds the perturbation's random draws (the same seed, the same plant)",
}


class PlantFigures(NamedTuple):
    """The figures of the plant's /diagnostics that the bench reads back (:meth:`read`), labelled once here."""

    simulated_time: float  # [s]
    tick_rate: float       # [Hz] of wall time
    base_height: float     # the ground truth's [m]

    def values(self):
        """{label: figure} for a DiagnosticStatus."""
        return dict(zip(PLANT_LABELS, self))

    @classmethod
    def read(cls, values):
        """The figures of a status's values ({label: text})."""
        return cls(*(float(values[label]) for label in PLANT_LABELS))


PLANT_LABELS = ("simulated time [s]", "tick rate [Hz]", "base height [m]")  # PlantFigures' fields, in order


class MujocoSimNode(Node):
    def __init__(self, hub=None, **node_options):
        super().__init__("mujoco_sim", **node_options)
        self.hub = hub  # balance_stack's Composition (unused: the plant is never in the stack)
        config = declare_robot(self)
        self.feet, soles = list(config.feet), list(config.soles)
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
        self.max_lag = self.declare_parameter("max_lag", 0.05, describe("real time: largest lag caught up [s]",
                                                                        True)).value
        self.interface = self.declare_parameter("command_interface", "position",
                                                describe(f"actuator_commands field: {' | '.join(INTERFACES)}",
                                                         True)).value
        perturbation = PlantPerturbation(**{name: type(default)(self.declare_parameter(
            name, default, describe(PERTURBATION_PARAMETERS[name], True)).value)
            for name, default in PlantPerturbation()._asdict().items()})
        self.push_duration = self.declare_parameter("push_duration", 0.1, describe("sim/push duration [s]")).value
        self.ground_truth = DisplayRate(self.declare_parameter(
            "ground_truth_rate", 100.0, describe("rate of the sim/ ground truth [Hz of simulated time]; ≤ 0: every "
                                                 "tick")).value)

        if self.interface not in INTERFACES:
            raise ValueError(f"parameter command_interface: '{self.interface}' is not one of {', '.join(INTERFACES)}")
        package_dirs = self.declare_parameter("package_dirs", Parameter.Type.STRING_ARRAY, describe(
            "where package:// meshes are looked up before ROS_PACKAGE_PATH", True)).value or []
        self.sim = Simulation.from_config(config, force_torque_sensors=ft, timestep=timestep,
                                          package_dirs=package_dirs, perturbation=perturbation)
        for warning in self.sim.warnings:
            self.get_logger().warning(warning)
        for notice in self.sim.notices:
            self.get_logger().info(notice)
        spec = load_loop_closures(config.loops) if config.loops else None
        self.command_length = len(self.sim.actuators) * len(COMMAND_FIELDS[self.interface])
        self.joint_names = list(self.sim.actuators) + ([n for n in spec.measured_passive if n not in self.sim.actuators]
                                                       if spec else [])
        self.soles = soles
        self.guard = InputGuard(self, "actuator_commands", "command_timeout")  # ERROR when commands stop
        self.rate = RateMeter()
        self.command_rate = RateMeter()  # the chain's, as the robot's hardware receives its commands
        self.timing = CallbackTiming(("step", "sensors", "ground truth"))  # one plant tick
        self.timestep = timestep
        self.steps = max(1, int(round(self.period / timestep)))
        self.wall_origin = None  # real time: monotonic wall time at which the simulated time was zero [s]
        self.lag_resets = 0      # real time: lags beyond max_lag given up
        self.awaiting_since = None   # wall time since which a lockstep tick waits for its command
        self.unanswered_ticks = 0    # lockstep ticks stepped on the timeout, without a command
        self.joints = JointStateWriter(self.joint_names)
        self.imu = Imu()
        self.imu.header.frame_id = "imu"
        self.wrenches = [WrenchWriter("") for _ in self.feet]
        self.odometry = OdometryWriter("world", config.base_frame or self.sim.root_body)
        self.body_names = {self.sim.model.body(i).name for i in range(self.sim.model.nbody)}

        subscribe(self, Float64MultiArray, "actuator_commands", self.on_command, LATEST_QOS)
        subscribe(self, WrenchStamped, "sim/push", self.on_push, RELIABLE_QOS)
        self.joint_publisher = advertise(self, JointState, "joint_states", SENSOR_QOS)
        self.imu_publisher = advertise(self, Imu, "imu", SENSOR_QOS)
        self.wrench_publishers = ([advertise(self, WrenchStamped, f"{foot}/wrench", SENSOR_QOS)
                                   for foot in self.feet] if ft else [])
        self.odom_publisher = advertise(self, Odometry, "sim/odom", RELIABLE_QOS)
        self.com_publisher = advertise(self, PointStamped, "sim/com", RELIABLE_QOS)
        self.contact_publishers = [advertise(self, WrenchStamped, f"sim/{foot}/contact_force", RELIABLE_QOS)
                                   for foot in self.feet]
        self.sole_wrench_publishers = [advertise(self, WrenchStamped, f"sim/{foot}/sole_wrench", RELIABLE_QOS)
                                       for foot in self.feet]  # in its sole frame, about its origin
        self.sole_pose_publishers = [advertise(self, PoseStamped, f"sim/{foot}/sole_pose", RELIABLE_QOS)
                                     for foot in self.feet]
        self.clock_publisher = advertise(self, Clock, "/clock", 10) if self.publish_clock else None
        self.diagnostics = Diagnostics(self, "simulation")
        self.momentum_publishers = [advertise(self, Vector3Stamped, f"sim/{kind}_momentum", RELIABLE_QOS)
                                    for kind in ("linear", "angular")]
        self.ground_truth_outputs = (self.odom_publisher, self.com_publisher, *self.contact_publishers,
                                     *self.sole_wrench_publishers, *self.sole_pose_publishers,
                                     *self.momentum_publishers)  # a forward pass of the plant: only for readers
        wall = SteadyClock(clock_type=ClockType.STEADY_TIME)  # the plant's pace never follows /clock
        if self.real_time:
            timer(self, self.period, self.tick, clock=wall)
        else:  # as fast as possible: back to back, or on each command in lockstep (the timer then is a watchdog)
            timer(self, self.lockstep_timeout if self.lockstep else 0.0, self.tick, clock=wall)
        timer(self, 1.0, self.publish_diagnostics)  # the node's clock: the nodes' pace, on /clock with use_sim_time

    def on_command(self, message):
        values = finite(message.data, "actuator_commands", "data")
        if len(values) != self.command_length:
            raise RejectedMessage("length_mismatch", f"actuator_commands: {len(values)} values for "
                                  f"{len(self.sim.actuators)} actuators with the {self.interface} interface "
                                  f"({self.command_length // len(self.sim.actuators)} per actuator)")
        self.sim.set_command(self.interface, values)
        self.command_rate.tick()
        if self.awaiting_since is not None:
            self.awaiting_since = None
            if not self.real_time:
                self.tick()

    def on_push(self, message):
        body = message.header.frame_id or self.sim.root_body
        if body not in self.body_names:
            raise RejectedMessage("unknown_body", f"sim/push: '{body}' is not a body")
        wrench = finite(vector_values(message.wrench.force, message.wrench.torque), "sim/push", "wrench")
        self.sim.push(body, wrench[:3], wrench[3:], self.push_duration)

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
        timing = self.timing.begin()
        self.sim.step(self.steps_due())
        if self.lockstep:
            self.awaiting_since = time.monotonic()
        stamp = self.stamp()
        timing.lap()
        if self.clock_publisher is not None:
            self.clock_publisher.publish(Clock(clock=stamp))
        quaternion, gyro, accelerometer = self.sim.imu()  # before joint_states: the estimate that a joint_states
        imu = self.imu                                     # sample starts finds the imu of the same tick
        imu.header.stamp = stamp
        o, w, a = imu.orientation, imu.angular_velocity, imu.linear_acceleration
        o.x, o.y, o.z, o.w = (float(value) for value in quaternion)
        w.x, w.y, w.z = (float(value) for value in gyro)
        a.x, a.y, a.z = (float(value) for value in accelerometer)
        self.imu_publisher.publish(imu)
        self.joint_publisher.publish(self.joints.fill(stamp, *self.sim.joint_states(self.joint_names)))
        for publisher, writer, sole in zip(self.wrench_publishers, self.wrenches, self.soles):
            frame, wrench = self.sim.foot_wrench(sole)
            writer.message.header.frame_id = frame
            publisher.publish(writer.fill(stamp, wrench))
        timing.lap()
        if self.ground_truth.due(self.sim.time) and any(output.wanted() for output in self.ground_truth_outputs):
            self.publish_ground_truth(stamp)
        timing.lap()
        self.rate.tick()

    def steps_due(self):
        """Integration steps for this tick: one tick's worth, or, running free in real time, as many as bring the
        simulated time up to the wall clock's."""
        if self.lockstep or not self.real_time:
            return self.steps
        now = time.monotonic()
        if self.wall_origin is None:
            self.wall_origin = now - self.sim.time - self.period
        lag = now - self.wall_origin - self.sim.time
        if lag > self.max_lag:
            self.lag_resets += 1
            self.wall_origin += lag - self.period
            lag = self.period
        return max(1, int(round(lag / self.timestep)))

    def publish_ground_truth(self, stamp):
        truth = self.sim.ground_truth()
        self.odom_publisher.publish(self.odometry.fill(stamp, truth.base_position, truth.base_quaternion,
                                                       np.zeros(3), np.zeros(3)))
        self.com_publisher.publish(point_message(stamp, "world", truth.com))
        for publisher, momentum in zip(self.momentum_publishers, (truth.linear_momentum, truth.angular_momentum)):
            message = Vector3Stamped(vector=Vector3(x=momentum[0], y=momentum[1], z=momentum[2]))
            message.header.stamp, message.header.frame_id = stamp, "world"
            publisher.publish(message)
        for publisher, force in zip(self.contact_publishers, truth.sole_forces):
            publisher.publish(wrench_message(stamp, "world", np.r_[force, 0.0, 0.0, 0.0]))
        for publisher, sole, wrench in zip(self.sole_wrench_publishers, self.soles, truth.sole_wrenches):
            if publisher.wanted():
                publisher.publish(wrench_message(stamp, sole, wrench))
        for publisher, position, rotation in zip(self.sole_pose_publishers, truth.sole_positions, truth.sole_rotations):
            if publisher.wanted():
                publisher.publish(pose_message(stamp, "world", position, rotation))

    def publish_diagnostics(self):
        truth = self.sim.ground_truth()
        values = {**PlantFigures(self.sim.time, self.rate.hz, float(truth.base_position[2])).values(),
                  "command interface": self.interface, "actuator_commands rate [Hz]": self.command_rate.hz}
        if self.lockstep:
            values["lockstep ticks without a command"] = self.unanswered_ticks
        elif self.real_time:
            values["lags beyond max_lag given up"] = self.lag_resets
        values.update(self.timing.figures())
        values.update(self.guard.figures())
        if self.sim.warnings:
            values["geometry warnings"] = " | ".join(self.sim.warnings)
            self.diagnostics.publish("WARN", f"simulating; {len(self.sim.warnings)} geometry warning(s)", values)
        else:
            self.diagnostics.publish("OK", "simulating", values)


FACTORY = MujocoSimNode
"""What builds this node (the demo and balance_stack build it too)."""


def main(args=None):
    return run(FACTORY, "mujoco_sim", args)
