"""state_estimator: raw actuator encoders + IMU → every joint of the closed-chain model + floating base.

    joint_states (sensor_msgs/JointState, sensor QoS) ─┐
    imu (sensor_msgs/Imu, sensor QoS) ──────────────────┤
    contact/<foot>/state (std_msgs/Int8, from contact_estimator) ┴─> RobotStateEstimator.update
        ─> estimated_joint_states (sensor_msgs/JointState: every joint), odom (nav_msgs/Odometry),
           TF odom → base_link (when tf2_ros is installed, as on a ROS 2 machine; ``publish_tf``)
    ~/calibrate (std_srvs/Trigger): encoder calibration (Kangaroo eqs. 41–42), offsets saved to offsets_file
        (atomically, the previous file kept as <name>.previous; an offsets_file that is missing or unusable at
        start-up leaves the encoders uncalibrated, says why, and is not touched until a calibration)
    /diagnostics: loop residual, update rate, callback time by stage, rejected messages, where contacts come from
The base is carried by the feet in contact: those of contact/<foot>/state while every foot's phase is known and
younger than contact_timeout, else the soles within contact_height of the lowest one. With every foot in the air the
base is ballistic; a foot that touches down is anchored where the estimate puts it, so the estimate does not jump.
With the imu's linear_acceleration, the base is predicted from the accelerometer and drawn towards the feet's
kinematics (position_time_constant, velocity_time_constant; a kinematic velocity more than kinematic_gate from the
prediction is not taken): contact phases are known late, the accelerometer is not (estimation/floating_base.py).
Stamps: out-of-line stamps (backwards, or more than max_stamp_lead ahead of the node's clock) are rejected and
not adopted; a sustained jump of the source's clock is followed (nodes/stamp_policy.py).
"""
from pathlib import Path

import numpy as np
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import FloatingPointRange
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Int8
from std_srvs.srv import Trigger

from humanoid_balance.estimation import ImuSample, RobotStateEstimator, load_offsets, save_offsets
from humanoid_balance.estimation.robot_state import LEVEL_IMU
from humanoid_balance.loop import Observation
from humanoid_balance.model import ModelFileError, load_robot
from humanoid_balance.model.robot_config import check_robot_config
from humanoid_balance.nodes.diagnostics import Diagnostics
from humanoid_balance.nodes.entry import run
from humanoid_balance.nodes.input_guard import InputGuard, LatestInput, advertise, subscribe, timer
from humanoid_balance.nodes.parameters import declare_robot, describe
from humanoid_balance.nodes.plausibility import Plausibility
from humanoid_balance.nodes.qos import CHANGES_QOS, RELIABLE_QOS, SENSOR_QOS
from humanoid_balance.nodes.messages import (JointStateReader, JointStateWriter, OdometryWriter, contact_phase,
                                             imu_reading)
from humanoid_balance.nodes.timing import CallbackTiming, RateMeter

try:  # not available as a wheel: TF is broadcast where ROS 2 is installed, odom carries the same pose everywhere
    from tf2_ros import TransformBroadcaster
except ImportError:
    TransformBroadcaster = None

def gain(text):
    return describe(text, floating_point_range=[FloatingPointRange(from_value=0.0, to_value=1e5)])


class StateEstimatorNode(Node):
    def __init__(self, hub=None, **node_options):
        super().__init__("state_estimator", **node_options)
        self.hub = hub  # balance_stack's Composition (nodes/composition.py), None: every topic over DDS
        config = declare_robot(self)
        alpha = self.declare_parameter("alpha", 1000.0, gain("constraint-correction gain α [1/s], eq. 38")).value
        beta = self.declare_parameter("beta", 1000.0, gain("measurement-correction gain β [1/s], eq. 38")).value
        contact_height = self.declare_parameter(
            "contact_height", 0.01, describe("without contact phases, a sole this close to the lowest one is in "
                                             "contact [m]")).value
        self.contact_timeout = self.declare_parameter(
            "contact_timeout", 0.5, describe("contact/<foot>/state older than this is not used [s]")).value
        odom_frame = self.declare_parameter("odom_frame", "odom", describe("odometry frame (REP-105)")).value
        self.offsets_file = Path(self.declare_parameter(
            "offsets_file", str(Path.home() / ".ros" / "humanoid_balance" / "actuator_offsets.yaml"),
            describe("YAML file the calibrated actuator offsets are saved to and reloaded from", True)).value)
        self.calibration_max_iterations = self.declare_parameter(
            "calibration_max_iterations", 20, describe("Newton iterations allowed to calibration (eqs. 41–42)")).value
        self.residual_warn = self.declare_parameter(
            "residual_warn", 1e-4, describe("loop residual above which diagnostics warn [m, rad]")).value
        inertial = {name: self.declare_parameter(name, default, gain(text)).value for name, default, text in (
            ("position_time_constant", 0.1, "the base position's pull towards the feet's kinematics [s]"),
            ("velocity_time_constant", 0.2, "the base velocity's pull towards the feet's kinematics [s]"),
            ("kinematic_gate", 0.3, "a kinematic base velocity farther than this from the accelerometer's "
                                    "prediction is not taken [m/s]"))}

        publish_tf = self.declare_parameter("publish_tf", True,
                                            describe("broadcast odom → base_link on TF (needs tf2_ros)", True)).value
        self.tf_broadcaster = TransformBroadcaster(self) if publish_tf and TransformBroadcaster else None
        self.tf_status = ("broadcasting" if self.tf_broadcaster else "off (publish_tf false)" if not publish_tf
                          else "off (tf2_ros is not installed)")

        self.robot = load_robot(config.urdf_file, config.loops)
        check_robot_config(config, self.robot, "state_estimator parameters")
        self.base_frame = config.base_frame or self.robot.root_link
        self.core = RobotStateEstimator(self.robot, config.soles, imu_frame=config.imu_frame or None, alpha=alpha,
                                        beta=beta, contact_height=contact_height, **inertial)
        self.offsets_problem = None  # why offsets_file could not be used, while it cannot
        self.load_offsets()

        self.joints = JointStateReader("joint_states", self.robot.actuated_names, optional=self.robot.measured_names)
        self.plausibility = Plausibility(self, self.robot, config.soles)
        self.joint_gate = self.plausibility.joint_gate(self.robot.actuated_names)
        self.imu_gate = self.plausibility.attitude_gate("the IMU's attitude")
        self.estimates = JointStateWriter(self.robot.joint_names)
        self.odometry = OdometryWriter(odom_frame, self.base_frame)
        self.efforts = np.zeros(self.robot.nv)  # passive joints carry no motor effort
        self.guard = InputGuard(self, "joint_states")
        self.rate = RateMeter()
        self.timing = CallbackTiming()
        self.imu = None
        self.last_state = None
        self.tipping_ticks, self.last_tipping = 0, ()  # estimates with a sole tipping over an edge, and its feet
        self.last_reading = None

        subscribe(self, JointState, "joint_states", self.on_joint_states, SENSOR_QOS)
        subscribe(self, Imu, "imu", self.on_imu, SENSOR_QOS)
        self.feet = tuple(config.feet)
        self.phases = {foot: LatestInput(self, self.contact_timeout) for foot in self.feet}  # in contact or not
        for foot in self.feet:
            subscribe(self, Int8, f"contact/{foot}/state",
                      lambda message, foot=foot: self.on_contact_state(foot, message), CHANGES_QOS)
        self.joint_publisher = advertise(self, JointState, "estimated_joint_states", RELIABLE_QOS)
        self.odom_publisher = advertise(self, Odometry, "odom", RELIABLE_QOS)
        self.create_service(Trigger, "~/calibrate", self.on_calibrate)
        self.diagnostics = Diagnostics(self, "estimation")
        timer(self, 1.0, self.publish_diagnostics)

    def load_offsets(self):
        """The calibrated offsets from offsets_file if it holds them; if it does not exist, none (relative encoders
        read as absolute); if it cannot be used, none either, the reason logged and in diagnostics, and the file
        left as it is (a calibration keeps it as <name>.previous)."""
        if not self.offsets_file.exists():
            self.offsets_source = f"none: {self.offsets_file} does not exist (relative encoders read as absolute)"
            return
        try:
            self.core.offsets = load_offsets(self.offsets_file, self.robot.actuated_names)
            self.offsets_source = str(self.offsets_file)
        except ModelFileError as error:
            self.offsets_problem = f"actuator offsets not loaded: {error}"
            self.offsets_source = "none: offsets_file unusable (relative encoders read as absolute)"
            self.get_logger().warning(f"{self.offsets_problem}; starting without them, the file is left as it is")

    def on_imu(self, message):
        time = self.guard.check_stamp("imu", message.header.stamp)
        imu = ImuSample(*imu_reading(message))
        self.plausibility.check_attitude(self.imu_gate, imu.quaternion_xyzw, time, "imu")
        self.imu = imu
        if self.hub is not None:  # balance_stack: the contact estimator's too
            self.hub.imu(time, self.imu)

    def on_contact_state(self, foot, message):
        self.phases[foot].set(contact_phase(message, f"contact/{foot}/state"))

    def contacts(self):
        """Each foot's phase from contact/<foot>/state if every one is known and fresh, else None (lowest soles)."""
        phases = [reading.fresh() for reading in self.phases.values()]
        return None if None in phases else phases

    def on_joint_states(self, message):
        timing = self.timing.begin()
        time = self.guard.check_stamp("joint_states", message.header.stamp)
        positions, velocities, efforts, measured = self.joints.read(message)
        self.plausibility.check(self.joint_gate, positions, time, "joint_states")
        self.last_reading = (positions, measured)
        imu = self.imu or LEVEL_IMU
        timing.lap()
        if self.hub is not None:  # balance_stack: the whole loop's tick
            self.hub.cycle(message.header.stamp, Observation(time, positions, velocities, imu, efforts), timing)
            return
        state = self.core.update(positions, velocities, time, imu, self.contacts())
        timing.lap()
        self.adopt(message.header.stamp, state, efforts)
        timing.lap()

    def adopt(self, stamp, state, actuator_efforts):
        """The tick's RobotState, stamped ``stamp``: published, kept for diagnostics."""
        self.last_state = state
        if state.base.tipping:
            self.tipping_ticks += 1
            self.last_tipping = state.base.tipping
        self.publish(stamp, state, actuator_efforts)
        self.rate.tick()

    def publish(self, stamp, state, actuator_efforts):
        """odom first: the nodes that compute on estimated_joint_states then have the base of the same tick. Each only
        to someone (in balance_stack the cycle hands the state on, and these go out for RViz or a recorder)."""
        if actuator_efforts is not None:
            self.efforts[self.robot.actuated_v] = actuator_efforts
        if self.odom_publisher.wanted() or self.tf_broadcaster is not None:
            base = state.base
            odom = self.odometry.fill(stamp, base.position, base.quaternion_xyzw,
                                      base.rotation.T @ base.linear_velocity,  # nav_msgs: twist in the child frame
                                      base.angular_velocity)
            self.odom_publisher.publish(odom)
            if self.tf_broadcaster is not None:
                transform = TransformStamped(header=odom.header, child_frame_id=self.base_frame)
                transform.transform.translation.x = odom.pose.pose.position.x
                transform.transform.translation.y = odom.pose.pose.position.y
                transform.transform.translation.z = odom.pose.pose.position.z
                transform.transform.rotation = odom.pose.pose.orientation
                self.tf_broadcaster.sendTransform(transform)
        if self.joint_publisher.wanted():
            self.joint_publisher.publish(self.estimates.fill(stamp, state.q, state.v, self.efforts))

    def on_calibrate(self, request, response):
        if self.last_reading is None:
            response.success, response.message = False, "no joint_states received yet"
            return response
        positions, measured = self.last_reading
        missing = [name for name in self.robot.measured_names if name not in measured]
        if missing:
            response.success, response.message = False, f"joint_states lacks the absolute encoders {missing}"
            return response
        result = self.core.calibrate(positions, [measured[name] for name in self.robot.measured_names],
                                     max_iterations=self.calibration_max_iterations)
        if not result.converged:
            response.success = False
            response.message = (f"calibration did not converge: ‖e‖ = {result.error_norm:.3e} after "
                                f"{result.iterations} iterations; previous offsets kept")
            return response
        calibrated = f"calibrated in {result.iterations} iterations, ‖e‖ = {result.error_norm:.3e}"
        try:
            save_offsets(self.offsets_file, self.robot.actuated_names, result.offsets)
        except OSError as error:
            self.offsets_source = "calibrated, not saved: in use until the node stops"
            response.success = False
            response.message = (f"{calibrated}, but not saved to {self.offsets_file} ({error.strerror or error}); "
                                "the offsets are in use until the node stops")
            return response
        self.offsets_source, self.offsets_problem = str(self.offsets_file), None
        response.success = True
        response.message = f"{calibrated}; offsets saved to {self.offsets_file}"
        return response

    def publish_diagnostics(self):
        values = {"update rate [Hz]": self.rate.hz, "actuator offsets": self.offsets_source,
                  "TF odom → base_link": self.tf_status,
                  "contacts from": "contact/<foot>/state" if self.contacts() is not None else
                  "the lowest soles (no fresh contact/<foot>/state of every foot)"}
        values.update(self.timing.figures())
        values["implausible readings taken over"] = self.plausibility.taken_over
        values.update(self.guard.figures())
        if self.last_state is None:
            waiting = [f"waiting for {self.resolve_topic_name('joint_states')}", self.offsets_problem]
            self.diagnostics.publish("WARN", "; ".join(filter(None, waiting)), values)
            return
        values["loop residual"] = self.last_state.residual_norm
        values["feet in contact"] = ", ".join(self.last_state.base.feet_in_contact) or "none"
        values["feet tipping"] = ", ".join(self.last_state.base.tipping) or "none"
        values["estimates with a sole tipping (not carrying the base)"] = self.tipping_ticks
        values["last feet tipping"] = ", ".join(self.last_tipping) or "none"
        if self.offsets_problem is not None:
            level, text = "WARN", self.offsets_problem
        elif self.last_state.residual_norm > self.residual_warn:
            level, text = "WARN", f"loop residual {self.last_state.residual_norm:.2e} above {self.residual_warn:.0e}"
        elif self.imu is None:
            level, text = "WARN", "no valid imu message: base orientation assumed level"
        else:
            level, text = "OK", "estimating"
        self.diagnostics.publish(level, text, values)


FACTORY = StateEstimatorNode
"""What builds this node (the demo and balance_stack build it too)."""


def main(args=None):
    return run(FACTORY, "state_estimator", args)
