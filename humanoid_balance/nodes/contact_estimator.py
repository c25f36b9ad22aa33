"""contact_estimator: where the robot pushes on the ground.

    estimated_joint_states (JointState, with efforts) ─┐
    odom (nav_msgs/Odometry) ──────────────────────────┼─> ContactEstimator.update
    <foot>/wrench (WrenchStamped, ft_sensors mode) ────┤
    imu (sensor_msgs/Imu, actuator_forces mode) ───────┤
    balance/<foot>/lifted (std_msgs/Bool) ─────────────┘
        ─> contact/<foot>/wrench (WrenchStamped, sole frame), contact/<foot>/cop (PointStamped, world),
           contact/<foot>/state (std_msgs/Int8: 1 contact, 0 aerial, −1 unknown), zmp (PointStamped, world),
           support_polygon (PolygonStamped, world), contact/markers (MarkerArray), /diagnostics

In actuator_forces mode the imu's accelerometer, with the joints' kinematics, tells how much of the weight the
supports carry (the CoM's specific force, estimation/support_load.py): a robot in the air reads no contact. Without
an imu younger than imu_timeout the robot is taken as supported.
zmp and contact/<foot>/wrench follow every estimate; contact/<foot>/state when it changes and at ``display_rate``;
the CoPs, the support polygon and the markers, which only people look at, at ``display_rate`` and only while
something subscribes to them.
A foot the balancer says is lifted (balance/<foot>/lifted: by a step, or by a push that tipped the robot onto the other
foot) is aerial and, from actuator forces, carries no wrench — the leg's dynamics, or its drives pressing towards a
floor it has left, would read as load — once its sole has risen (estimation/lift_claims.py: a foot said lifted on
the floor is not, and is reported after UNSEEN_LIFT) until the balancer puts it down, or for lift_timeout at most.
A foot said lifted sooner than min_lift_interval after it was last lifted or put down is not (rejected as
implausible: a second publisher on the balancer's topic, not a step); a foot put down always is.
Stamps: out-of-line stamps (backwards, or more than max_stamp_lead ahead of the node's clock) are rejected and
not adopted; a sustained jump of the source's clock is followed (nodes/stamp_policy.py).
"""
import numpy as np
from geometry_msgs.msg import Point, Point32, PointStamped, PolygonStamped, Vector3, WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import FloatingPointRange
from pinocchio import Quaternion
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Bool, ColorRGBA, Int8
from visualization_msgs.msg import Marker, MarkerArray

from humanoid_balance.estimation.contact_state import ACTUATOR_FORCES, FT_SENSORS, ContactEstimator
from humanoid_balance.estimation.contact_wrench import AERIAL, CONTACT, UNKNOWN
from humanoid_balance.estimation.plausibility import ChangeGate
from humanoid_balance.model import load_robot
from humanoid_balance.model.robot_config import check_robot_config, robot_parameter
from humanoid_balance.nodes.diagnostics import Diagnostics
from humanoid_balance.nodes.entry import run
from humanoid_balance.nodes.input_guard import (InputGuard, LatestInput, PairedInput, StampedInput, advertise,
                                                 subscribe, timer)
from humanoid_balance.nodes.parameters import declare_robot, describe
from humanoid_balance.nodes.plausibility import Plausibility
from humanoid_balance.nodes.qos import CHANGES_QOS, COMPANION_QOS, LATEST_QOS, RELIABLE_QOS, SENSOR_QOS
from humanoid_balance.nodes.messages import (JointStateReader, RejectedMessage, WrenchWriter, check_frame, finite,
                                             imu_reading, point_message, unit_quaternion, vector_values)
from humanoid_balance.nodes.timing import CallbackTiming, DisplayRate, RateMeter
STATE_COLORS = {CONTACT: ColorRGBA(r=0.1, g=0.8, b=0.2, a=0.6), AERIAL: ColorRGBA(r=0.6, g=0.6, b=0.6, a=0.4),
                UNKNOWN: ColorRGBA(r=1.0, g=0.5, b=0.0, a=0.6)}
STATE_NAMES = {CONTACT: "contact", AERIAL: "aerial", UNKNOWN: "unknown"}
LEVEL_BASE = (np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0]))  # without odom: the base at the origin, level
UNSEEN_LIFT = 0.25  # [s] a foot said lifted, its sole not risen since: reported (a step's sole rises in 0.05 s)


def force_range(text, high=1e5):
    return describe(text, floating_point_range=[FloatingPointRange(from_value=0.0, to_value=high)])


class ContactEstimatorNode(Node):
    def __init__(self, hub=None, **node_options):
        super().__init__("contact_estimator", **node_options)
        self.hub = hub  # balance_stack's Composition (nodes/composition.py), None: every topic over DDS
        config = declare_robot(self)
        mode = self.declare_parameter("mode", FT_SENSORS,
                                      describe(f"'{FT_SENSORS}' or '{ACTUATOR_FORCES}'", True)).value
        self.feet, soles = list(config.feet), list(config.soles)
        self.world_frame = self.declare_parameter("world_frame", "odom", describe("frame of zmp, cop, polygon")).value
        display_rate = self.declare_parameter(
            "display_rate", 30.0, force_range("rate of the CoP, polygon, markers and state heartbeat [Hz]")).value
        self.wrench_timeout = self.declare_parameter(
            "wrench_timeout", 0.1, force_range("a silent <foot>/wrench makes that contact unknown after [s]")).value
        cutoff = robot_parameter("cutoff_frequency")
        options = {
            "cutoff": self.declare_parameter(cutoff.name, cutoff.default, force_range(cutoff.description)).value,
            "sample_rate": self.declare_parameter("sample_rate", 500.0, force_range(
                "expected rate of estimated_joint_states [Hz]; the low-pass follows the rate the stamps show")).value,
            "contact_on": self.declare_parameter("contact_on", 40.0, force_range("contact above this normal force [N]")
                                                 ).value,
            "contact_off": self.declare_parameter("contact_off", 20.0,
                                                  force_range("aerial below this normal force [N]")).value,
            "min_cop_force": self.declare_parameter("min_cop_force", 5.0,
                                                    force_range("CoP undefined below this normal force [N]")).value,
            "efforts_are_motor_torques": self.declare_parameter(
                "efforts_are_motor_torques", False,
                describe("actuator efforts are motor torques [N·m]; ball-screws convert by eq. 47")).value,
        }
        self.robot = load_robot(config.urdf_file, config.loops, floating_base=True)
        check_robot_config(config, self.robot, "contact_estimator parameters")
        self.core = ContactEstimator(self.robot, soles, mode=mode, rectangles=config.sole_rectangles or None,
                                     imu_frame=config.imu_frame or None, **options)
        self.imu_timeout = self.declare_parameter(
            "imu_timeout", 0.1, force_range("an imu older than this is not used: the robot is taken as supported "
                                            "[s]")).value
        self.mode = mode
        lift_timeout = self.declare_parameter(
            "lift_timeout", 2.0, force_range("a foot balance/<foot>/lifted has lifted is put down after at most [s] "
                                             "(a balancer gone silent)")).value
        self.lifted = {foot: LatestInput(self, lift_timeout) for foot in self.feet}
        min_lift_interval = self.declare_parameter(
            "min_lift_interval", 0.1, force_range("a foot balance/<foot>/lifted lifts sooner than this after its last "
                                                  "lift or put-down is not (no step lifts and puts down a foot as "
                                                  "fast) [s]")).value
        self.lift_changes = {foot: ChangeGate(True, min_lift_interval) for foot in self.feet}

        self.joints = JointStateReader("estimated_joint_states", self.robot.joint_names)
        self.plausibility = Plausibility(self, self.robot, soles)
        self.joint_gate, self.base_gate = self.plausibility.joint_gate(self.robot.joint_names), \
            self.plausibility.base_gate()
        self.actuated = self.robot.actuated_v - self.robot.base_nv  # their places among every joint
        self.guard = InputGuard(self, "estimated_joint_states")
        self.rate = RateMeter()
        self.timing = CallbackTiming()
        self.display = DisplayRate(display_rate)
        self.odom = PairedInput()  # the base pose of each estimated_joint_states' stamp
        self.sensor = {foot: LatestInput(self, self.wrench_timeout) for foot in self.feet}  # (frame, wrench)
        self.last = None
        self.states = [None] * len(self.feet)  # the contact states last published

        subscribe(self, JointState, "estimated_joint_states", self.on_joint_states, LATEST_QOS)
        subscribe(self, Odometry, "odom", self.on_odom, COMPANION_QOS)
        self.acceleration = StampedInput(self, self.imu_timeout)  # the imu's linear_acceleration [m/s²]
        if mode == ACTUATOR_FORCES:
            subscribe(self, Imu, "imu", self.on_imu, SENSOR_QOS)
        for foot in self.feet:
            subscribe(self, Bool, f"balance/{foot}/lifted",
                      lambda message, foot=foot: self.on_lifted(foot, message), CHANGES_QOS)
        if mode == FT_SENSORS:
            for foot in self.feet:
                subscribe(self, WrenchStamped, f"{foot}/wrench",
                          lambda message, foot=foot: self.on_wrench(foot, message), SENSOR_QOS)
        self.wrenches = [WrenchWriter(sole) for sole in soles]
        self.wrench_publishers = [advertise(self, WrenchStamped, f"contact/{foot}/wrench", RELIABLE_QOS)
                                  for foot in self.feet]
        self.cop_publishers = [advertise(self, PointStamped, f"contact/{foot}/cop", RELIABLE_QOS)
                               for foot in self.feet]
        self.state_publishers = [advertise(self, Int8, f"contact/{foot}/state", RELIABLE_QOS)
                                 for foot in self.feet]
        self.zmp_publisher = advertise(self, PointStamped, "zmp", RELIABLE_QOS)
        self.zmp = PointStamped()
        self.zmp.header.frame_id = self.world_frame
        self.polygon_publisher = advertise(self, PolygonStamped, "support_polygon", RELIABLE_QOS)
        self.marker_publisher = advertise(self, MarkerArray, "contact/markers", RELIABLE_QOS)
        self.diagnostics = Diagnostics(self, "contacts")
        timer(self, 1.0, self.publish_diagnostics)

    def on_odom(self, message):
        time = self.guard.check_stamp("odom", message.header.stamp)
        check_frame(message.header, self.world_frame, "odom")
        position = finite(vector_values(message.pose.pose.position), "odom", "position")
        quaternion = unit_quaternion(message.pose.pose.orientation, "odom")
        self.plausibility.check_base(self.base_gate, position, quaternion, time, "odom")
        self.odom.set(message.header.stamp, (position, quaternion))

    def on_lifted(self, foot, message):
        topic, now = f"balance/{foot}/lifted", self.get_clock().now().nanoseconds * 1e-9
        gate = self.lift_changes[foot]
        if not gate.check(message.data, now):
            raise RejectedMessage("implausible", f"{topic}: lifted {gate.since(now):.3f} s after it was last lifted or "
                                                 f"put down (min_lift_interval {gate.min_interval} s)")
        self.lifted[foot].set(message.data)

    def on_imu(self, message):
        stamp = self.guard.check_stamp("imu", message.header.stamp)
        self.acceleration.set_stamped(stamp, imu_reading(message)[2])

    def on_wrench(self, foot, message):
        topic = f"{foot}/wrench"
        self.guard.check_stamp(topic, message.header.stamp)
        if not self.robot.model.existFrame(message.header.frame_id):
            raise RejectedMessage("unknown_frame", f"{topic}: frame_id '{message.header.frame_id}' is not a "
                                  "frame of the URDF")
        wrench = finite(vector_values(message.wrench.force, message.wrench.torque), topic, "wrench")
        self.plausibility.check_force(wrench[:3], topic)
        self.sensor[foot].set((message.header.frame_id, wrench))

    def silent_feet(self):
        return [foot for foot, reading in self.sensor.items() if reading.fresh() is None]

    def on_joint_states(self, message):
        timing = self.timing.begin()
        time = self.guard.check_stamp("estimated_joint_states", message.header.stamp)
        positions, _, efforts, _ = self.joints.read(message)
        self.plausibility.check(self.joint_gate, positions, time, "estimated_joint_states")
        if self.mode == ACTUATOR_FORCES and efforts is None:
            raise RejectedMessage("missing_efforts", "estimated_joint_states: no efforts (actuator_forces mode)")
        q = self.core.configuration(positions, *(self.odom.of(message.header.stamp) or LEVEL_BASE))
        lifted = [self.lifted[foot].fresh() is True for foot in self.feet]
        timing.lap()
        if self.mode == ACTUATOR_FORCES:
            result = self.core.update(q, actuator_efforts=efforts[self.actuated], time=time,
                                      specific_force=self.acceleration.at(time), lifted=lifted)  # the imu of the tick
        else:
            result = self.core.update(q, sensor_wrenches=self.sensor_wrenches(), time=time, lifted=lifted)
        timing.lap()
        self.adopt(message.header.stamp, time, result)
        timing.lap()

    def sensor_wrenches(self):
        """Per foot, its fresh <foot>/wrench reading (frame, wrench (6,)) or None; None in actuator_forces mode."""
        return [self.sensor[foot].fresh() for foot in self.feet] if self.mode == FT_SENSORS else None

    def adopt(self, stamp, time, result):
        """The tick's ContactEstimate, stamped ``stamp`` (``time`` [s]): published, kept for diagnostics."""
        self.last = result
        self.publish(stamp, result, self.display.due(time))
        self.rate.tick()

    def publish(self, stamp, result, display):
        for k, contact in enumerate(result.feet):
            if contact.state != self.states[k] or display:
                self.state_publishers[k].publish(Int8(data=contact.state))
                self.states[k] = contact.state
            if contact.wrench is not None and self.wrench_publishers[k].wanted():
                self.wrench_publishers[k].publish(self.wrenches[k].fill(stamp, contact.wrench))
            if display and contact.cop_sole is not None and self.cop_publishers[k].wanted():
                self.cop_publishers[k].publish(point_message(stamp, self.world_frame, contact.cop_world()))
        if result.zmp is not None:
            self.zmp.header.stamp = stamp
            self.zmp.point.x, self.zmp.point.y, self.zmp.point.z = (float(value) for value in result.zmp)
            self.zmp_publisher.publish(self.zmp)
        if display and self.polygon_publisher.wanted():
            polygon = PolygonStamped()
            polygon.header.stamp, polygon.header.frame_id = stamp, self.world_frame
            polygon.polygon.points = [Point32(x=float(x), y=float(y), z=float(z))
                                      for x, y, z in self.core.support_polygon(result)]
            self.polygon_publisher.publish(polygon)
        if display and self.marker_publisher.wanted():
            self.marker_publisher.publish(self.markers(stamp, result))

    def markers(self, stamp, result):
        array = MarkerArray()
        for index, contact in enumerate(result.feet):
            rectangle = contact.rectangle
            marker = Marker(ns="soles", id=index, type=Marker.CUBE, action=Marker.ADD,
                            color=STATE_COLORS[contact.state])
            marker.header.stamp, marker.header.frame_id = stamp, self.world_frame
            centre = contact.sole_placement.act(rectangle.centre() - [0.0, 0.0, 0.002])
            marker.pose.position = Point(x=centre[0], y=centre[1], z=centre[2])
            x, y, z, w = Quaternion(contact.sole_placement.rotation).coeffs()
            marker.pose.orientation.x, marker.pose.orientation.y = x, y
            marker.pose.orientation.z, marker.pose.orientation.w = z, w
            marker.scale = Vector3(x=rectangle.x_max - rectangle.x_min, y=rectangle.y_max - rectangle.y_min, z=0.004)
            array.markers.append(marker)
        return array

    def publish_diagnostics(self):
        values = {"mode": self.mode, "update rate [Hz]": self.rate.hz}
        if self.mode == ACTUATOR_FORCES:
            values["weight on the supports [%]"] = 100.0 * self.core.support.fraction()
            values["flight detection"] = ("on (imu)" if self.acceleration.fresh() is not None else
                                          f"off: no {self.resolve_topic_name('imu')} within {self.imu_timeout} s (the "
                                          "robot is taken as supported)")
        values.update(self.timing.figures())
        values["implausible readings taken over"] = self.plausibility.taken_over
        values.update(self.guard.figures())
        if self.last is None:
            self.diagnostics.publish("WARN", f"waiting for {self.resolve_topic_name('estimated_joint_states')}", values)
            return
        problems = []
        now, claims = self.get_clock().now().nanoseconds * 1e-9, self.core.lift_claims
        for foot, contact, taken, unseen in zip(self.feet, self.last.feet, claims.taken, claims.unseen()):
            values[f"{foot} state"] = STATE_NAMES[contact.state]
            values[f"{foot} normal force [N]"] = float("nan") if contact.wrench is None else float(contact.wrench[2])
            values[f"{foot} CoP inside sole"] = contact.cop_inside()
            values[f"{foot} lifted by the balancer"] = ("yes" if taken else "said, but its sole has not risen: in "
                                                        "contact" if unseen else "no")
            said_for = self.lift_changes[foot].since(now) if unseen else 0.0
            if said_for > UNSEEN_LIFT:
                problems.append(f"balance/{foot}/lifted says lifted {said_for:.1f} s ago, but its sole has not "
                                "risen: taken as in contact")
        values["total normal force [N]"] = self.last.normal_force
        values["estimated_joint_states read with odom of another stamp"] = self.odom.unpaired
        if self.mode == FT_SENSORS:
            problems += [f"{foot}/wrench silent for more than {self.wrench_timeout} s: contact unknown"
                         for foot in self.silent_feet()]
        if self.hub is None and not self.odom.values:  # (balance_stack hands the base over with the joints)
            problems.append("no odom: base assumed at the origin, level")
        self.diagnostics.publish("WARN" if problems else "OK", "; ".join(problems) or "estimating", values)


FACTORY = ContactEstimatorNode
"""What builds this node (the demo and balance_stack build it too)."""


def main(args=None):
    return run(FACTORY, "contact_estimator", args)
