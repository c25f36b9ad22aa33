"""centroidal_balancer: the balance controller (lifecycle node: commands only while active).

    estimated_joint_states (JointState) ─┐
    odom (Odometry) ─────────────────────┤
    contact/<foot>/state (Int8), zmp, ───┼─> Balancer.update
    contact/<foot>/wrench (WrenchStamped)│ ─> balance/joint_command (JointState: outputs)
    balance/com_reference (PointStamped) ┤                      balance/com (PointStamped), balance/markers,
    balance/<limb>/trajectory ───────────┤                      contact/<foot>/desired_wrench,
    (JointTrajectory, J-busy limbs)      │                      balance/<foot>/lifted (Bool), /diagnostics
    balance/<limb>/pose ─────────────────┤
    (PoseStamped in world_frame, C-busy limbs)
    balance/<foot>/step ─────────────────┘
    (PoseStamped in world_frame: where the sole lands)
    ~/jump (std_srvs/Trigger): viip mode stoops, lifts off, flies and absorbs the landing

Steps (kinematic and momentum modes, control/stepping.py): a capture point ξ = c + ċ/ω beyond the support polygon
asks for a recovery step; balance/<foot>/step asks for one where the user wants it, refused with the reason when the
robot is not standing on both feet, is already stepping or cannot reach it. The markers show ξ and the footstep.
balance/<foot>/lifted says, when it changes, whether the foot carries nothing: a step has lifted it, or a push has
tipped the robot onto the other foot (control/stepping.py); the contact estimator reads such a foot as aerial, whatever
load the leg's dynamics or its drives put on its estimate, until it is put down.

Modes (parameter ``mode``): kinematic (Choi–Kim), momentum (Garofalo et al.), viip (Sugihara–Nakamura).
Balance first: the references are granted as far as the robot stays up (the core's limitations, reported by
nodes/limitations.py: WARN while they last, counted, logged at a limited rate); a pose beyond the limb's reach is
rejected (out_of_reach), any reference while no foot is in contact (no_contact); a jump or a mode change the robot
cannot do now is refused with the reason.
Inputs older than ``input_timeout`` → hold the last posture with zero velocity, say so, recover on return;
so does the kinematic mode without a fresh zmp (its ZMP/CoM control, Choi–Kim eq. 24, feeds it back).
balance/joint_command follows every estimate; balance/com, the markers and the desired wrenches, which only people
look at, go out at ``display_rate`` while something subscribes to them.
Stamps: out-of-line stamps (backwards, or more than max_stamp_lead ahead of the node's clock) are rejected and
not adopted; a sustained jump of the source's clock is followed (nodes/stamp_policy.py).
"""
import numpy as np
import pinocchio as pin
from geometry_msgs.msg import Point, PointStamped, PoseStamped, Vector3, WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import SetParametersResult
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, ColorRGBA, Int8
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import Marker, MarkerArray

from humanoid_balance.control.balancer import (BALANCE_MODES, MODES, BalancerConfig, BalancerState, Foot, Refused,
                                               balance_controller, change_mode)
from humanoid_balance.control.embedded_motion import C_BUSY, J_BUSY, Section
from humanoid_balance.control.joint_trajectory import Unfollowable
from humanoid_balance.control.limb_motion import OutOfReach
from humanoid_balance.control.zmp_com import GainError, ZmpComGains
from humanoid_balance.model import ModelError, load_robot
from humanoid_balance.model.robot_config import check_robot_config
from humanoid_balance.nodes.balance_diagnostics import at_a_limit, status_values, warning
from humanoid_balance.nodes.diagnostics import Diagnostics
from humanoid_balance.nodes.entry import autostarted, run
from humanoid_balance.nodes.input_guard import InputGuard, LatestInput, advertise, subscribe, timer
from humanoid_balance.nodes.parameters import declare_robot, declare_robot_parameter, describe
from humanoid_balance.nodes.qos import CHANGES_QOS, LATEST_QOS, RELIABLE_QOS
from humanoid_balance.nodes.limitations import Limitations
from humanoid_balance.nodes.messages import (JointStateReader, JointStateWriter, RejectedMessage, check_frame,
                                             contact_phase, finite, point_message, pose_placement,
                                             read_limb_trajectory, unit_quaternion, vector_values, wrench_message)
from humanoid_balance.nodes.timing import CallbackTiming, DisplayRate, RateMeter

CONTACT_PHASES = ("state", "normal_force")
GOVERNOR_PARAMETERS = {  # what the balance grants of the references (control/reference_governor.py, limb_motion.py);
    # defaults: BalancerConfig's; support_margin, a robot configuration's, besides
    "min_foot_load": "... and where each foot in contact carries at least this fraction of the weight",
    "max_com_speed": "the CoM reference approaches a new target at most this fast [m/s]",
    "max_com_acceleration": "... and accelerates at most this much, and ω² support_margin (its LIPM ZMP stays in the "
                            "support) [m/s²]",
    "max_limb_speed": "C-busy limb ends approach their target poses at most this fast [m/s]",
    "max_limb_acceleration": "... accelerating at most this much [m/s²]",
    "max_limb_angular_speed": "... turning at most this fast [rad/s]",
}

STEP_PARAMETERS = {  # the steps (control/stepping.py); defaults: BalancerConfig's
    "stepping": "take a recovery step when the capture point leaves the support polygon (kinematic, momentum)",
    "step_trigger": "... by more than this beyond its edge [m]",
    "step_duration": "swing time of a step [s]",
    "step_height": "how high a swing sole is lifted [m]",
    "max_steps": "recovery steps in a row before the robot must stand again",
}


class CentroidalBalancerNode(LifecycleNode):
    def __init__(self, hub=None, **node_options):
        super().__init__("centroidal_balancer", **node_options)
        self.hub = hub  # the process's IntraProcess hub (balance_stack), None: every topic over DDS
        self.robot_config = declare_robot(self)
        self.declare_parameter("mode", "kinematic", describe(f"controller: {' | '.join(MODES)}"))
        self.cartesian_limbs = [name for name in declare_robot_parameter(self, "cartesian_limbs") if name]  # read-only
        declare_robot_parameter(self, "k_p", read_only=False)
        declare_robot_parameter(self, "k_c", read_only=False)
        declare_robot_parameter(self, "support_margin")
        self.declare_parameter("input_timeout", 0.1, describe("inputs older than this are stale [s]"))
        self.declare_parameter("max_tracking_error", 0.25, describe(
            "a position command this far from the measured output joint restarts from the measured posture "
            "(kinematic, viip) [rad or m]", True))
        self.declare_parameter("limit_margin", 0.02, describe(
            "fraction of each actuator's stroke the velocity resolution keeps free (kinematic, viip)", True))
        defaults = BalancerConfig()
        for name, text in GOVERNOR_PARAMETERS.items():
            self.declare_parameter(name, float(getattr(defaults, name)), describe(text, True))
        for name, text in STEP_PARAMETERS.items():
            self.declare_parameter(name, getattr(defaults, name), describe(text, True))
        self.declare_parameter("world_frame", "odom", describe("frame of balance/com and the markers"))
        self.declare_parameter("display_rate", 30.0, describe("rate of balance/com, markers, desired wrenches [Hz]"))
        self.declare_parameter("contact_phases", "state", describe(
            f"contact phases from: {' | '.join(CONTACT_PHASES)} (contact/<foot>/state or the f_z of "
            "contact/<foot>/wrench above f_min)", True))
        self.declare_parameter("autostart", True, describe("configure and activate at start-up", True))
        self.core = None
        self.configuration_error = None  # why the last configuration was refused
        self.last_q = None
        self.guard = InputGuard(self, "estimated_joint_states")
        self.add_on_set_parameters_callback(self.on_set_parameters)

    # -- lifecycle ------------------------------------------------------------------------------------
    def on_configure(self, state):
        value = lambda name: self.get_parameter(name).value  # noqa: E731
        try:
            robot_config = self.robot_config
            self.robot = load_robot(robot_config.urdf_file, robot_config.loops, floating_base=True)
            check_robot_config(robot_config, self.robot, "centroidal_balancer parameters")
            feet = [Foot(name, sole, robot_config.leg_joints[name], robot_config.rectangle(k))
                    for k, (name, sole) in enumerate(zip(robot_config.feet, robot_config.soles))]
            self.limbs = list(robot_config.busy_limbs)
            self.extra = [Section(name, robot_config.limb_joints[name], robot_config.limb_end_frames[name], J_BUSY)
                          for name in self.limbs]
            self.extra += [Section(name, tuple(self.limb_parameter(f"{name}_joints", [""])),
                                   self.limb_parameter(f"{name}_end_frame", ""), C_BUSY)
                           for name in self.cartesian_limbs]
            if not value("max_tracking_error") > 0.0:
                raise ValueError(f"parameter 'max_tracking_error' must be > 0, got {value('max_tracking_error')}")
            config = BalancerConfig(mode=value("mode"), feet=tuple(feet),
                                         zmp_com=ZmpComGains(np.full(2, value("k_p")), np.full(2, value("k_c"))),
                                         max_tracking_error=float(value("max_tracking_error")),
                                         limit_margin=float(value("limit_margin")),
                                         support_margin=float(value("support_margin")),
                                         **{name: float(value(name)) for name in GOVERNOR_PARAMETERS},
                                         **{name: value(name) for name in STEP_PARAMETERS})
            if value("contact_phases") not in CONTACT_PHASES:
                raise ValueError(f"parameter 'contact_phases': '{value('contact_phases')}' is not one of "
                                 f"{', '.join(CONTACT_PHASES)}")
            self.core = balance_controller(self.robot, config, self.extra)
            self.core.check(self.robot.reference_q)
        except (ModelError, ValueError) as error:
            self.configuration_error = str(error)
            self.get_logger().error(f"configuration refused: {error}")
            return TransitionCallbackReturn.FAILURE
        self.feet = feet
        self.joints = JointStateReader("estimated_joint_states", self.robot.joint_names)
        self.commands = JointStateWriter(self.robot.output_names)
        self.rate = RateMeter()
        self.timing = CallbackTiming()
        self.display = DisplayRate(value("display_rate"))
        self.world_frame = value("world_frame")
        self.input_timeout = value("input_timeout")
        self.latest = {"odom": None}
        self.zmp = LatestInput(self, self.input_timeout)  # the last good zmp [m]
        self.zmp_fresh = False
        self.phases = {foot.name: None for foot in feet}  # in contact, from the last contact/<foot>/state or wrench
        self.com_reference = None
        self.trajectories = {}
        self.poses = {}
        self.last_input_time = None
        self.holding = False
        self.status = None  # the BalanceStatus of the last update
        self.reported_restarts = 0  # the core's restarts from the measured posture at the last diagnostics
        self.wrenches = np.zeros((len(feet), 6))
        subscribe(self, JointState, "estimated_joint_states", self.on_joint_states, LATEST_QOS)
        subscribe(self, Odometry, "odom", self.on_odom, LATEST_QOS)
        subscribe(self, PointStamped, "zmp", self.on_zmp, LATEST_QOS)
        subscribe(self, PointStamped, "balance/com_reference", self.on_com_reference, RELIABLE_QOS)
        for foot in feet:
            if value("contact_phases") == "state":
                subscribe(self, Int8, f"contact/{foot.name}/state",
                          lambda message, name=foot.name: self.on_contact_state(name, message), CHANGES_QOS)
            else:
                subscribe(self, WrenchStamped, f"contact/{foot.name}/wrench",
                          lambda message, name=foot.name: self.on_wrench(name, message), LATEST_QOS)
        for limb in self.limbs:
            subscribe(self, JointTrajectory, f"balance/{limb}/trajectory",
                      lambda message, limb=limb: self.on_trajectory(limb, message), RELIABLE_QOS)
        for limb in self.cartesian_limbs:
            subscribe(self, PoseStamped, f"balance/{limb}/pose",
                      lambda message, limb=limb: self.on_pose(limb, message), RELIABLE_QOS)
        for foot in feet:
            subscribe(self, PoseStamped, f"balance/{foot.name}/step",
                      lambda message, name=foot.name: self.on_step(name, message), RELIABLE_QOS)
        self.create_service(Trigger, "~/jump", self.on_jump)
        self.command_publisher = advertise(self, JointState, "balance/joint_command", RELIABLE_QOS)
        self.com_publisher = advertise(self, PointStamped, "balance/com", RELIABLE_QOS)
        self.marker_publisher = advertise(self, MarkerArray, "balance/markers", RELIABLE_QOS)
        self.wrench_publishers = [advertise(self, WrenchStamped, f"contact/{foot.name}/desired_wrench",
                                                                  RELIABLE_QOS) for foot in feet]
        self.lifted_publishers = [advertise(self, Bool, f"balance/{foot.name}/lifted", RELIABLE_QOS) for foot in feet]
        self.lifted = [False] * len(feet)  # as last published
        self.diagnostics = Diagnostics(self, "balance")
        self.limitations = Limitations(self.guard.log)
        timer(self, 1.0, self.publish_diagnostics)
        timer(self, 0.02, self.check_inputs)
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state):
        if self.core is not None:
            self.core.position_command = None  # restart from the measured posture
        return super().on_activate(state)

    def limb_parameter(self, name, default):
        if not self.has_parameter(name):
            self.declare_parameter(name, default, describe("joints / end frame of a C-busy limb", True))
        return self.get_parameter(name).value

    def on_set_parameters(self, parameters):
        """Refuse gain changes that break the stability conditions (Choi–Kim eqs. 25, 31) and a mode change the robot
        cannot make now (control.balancer.change_mode), with the reason; a new mode starts from the measured posture."""
        if self.core is None:
            return SetParametersResult(successful=True)
        values = {p.name: p.value for p in parameters}
        gains = self.core.config.zmp_com
        gains = ZmpComGains(np.full(2, values.get("k_p", gains.k_p[0])), np.full(2, values.get("k_c", gains.k_c[0])))
        try:
            core = change_mode(self.core, values.get("mode", self.core.mode))  # a new mode: a new controller
            core.check(self.last_q if self.last_q is not None else self.robot.reference_q, gains)
        except (GainError, Refused, ValueError) as error:
            if isinstance(error, Refused):
                self.limitations.refused("mode", str(error))
            return SetParametersResult(successful=False, reason=str(error))
        core.retune(gains)
        self.core = core
        self.input_timeout = self.zmp.timeout = values.get("input_timeout", self.input_timeout)
        self.world_frame = values.get("world_frame", self.world_frame)
        if "display_rate" in values:
            self.display = DisplayRate(values["display_rate"])
        return SetParametersResult(successful=True)

    # -- inputs ---------------------------------------------------------------------------------------
    def on_odom(self, message):
        self.guard.check_stamp("odom", message.header.stamp)
        check_frame(message.header, self.world_frame, "odom")
        pose, twist = message.pose.pose, message.twist.twist
        position = finite(vector_values(pose.position), "odom", "position")
        quaternion = unit_quaternion(pose.orientation, "odom", "orientation")
        velocity = finite(vector_values(twist.linear, twist.angular), "odom", "twist")
        self.latest["odom"] = (np.concatenate([position, quaternion]), velocity)

    def on_zmp(self, message):
        self.guard.check_stamp("zmp", message.header.stamp)
        check_frame(message.header, self.world_frame, "zmp")
        self.zmp.set(finite(vector_values(message.point), "zmp", "point"))

    def on_com_reference(self, message):
        check_frame(message.header, self.world_frame, "balance/com_reference")
        point = finite(vector_values(message.point), "balance/com_reference", "point")
        self.refuse_without_contact("balance/com_reference")
        self.com_reference = point

    def on_contact_state(self, foot, message):
        """contact/<foot>/state: CONTACT or AERIAL set the foot's phase; UNKNOWN (a silent sensor) keeps it."""
        phase = contact_phase(message, f"contact/{foot}/state")
        if phase is not None:
            self.phases[foot] = phase

    def on_trajectory(self, limb, message):
        """balance/<limb>/trajectory, taken up at the control's now (the last state's stamp; a zero stamp: from then)
        from the position command, or rejected with the reason it cannot be followed."""
        topic = f"balance/{limb}/trajectory"
        now = self.last_input_time if self.last_input_time is not None else \
            self.get_clock().now().nanoseconds * 1e-9
        trajectory = read_limb_trajectory(message, topic, self.robot_config.limb_joints[limb], now)
        try:
            self.core.check_trajectory(limb, trajectory, now)
        except Unfollowable as error:
            raise RejectedMessage(error.reason, f"{topic}: {error}") from None
        self.refuse_without_contact(topic)
        self.trajectories[limb] = trajectory

    def on_wrench(self, foot, message):
        normal_force = finite([message.wrench.force.z], f"contact/{foot}/wrench", "force")[0]
        self.phases[foot] = bool(normal_force > self.core.config.f_min)

    def in_contact(self, foot):
        """The foot's last contact phase (``contact_phases``); in contact until one arrives."""
        return self.phases[foot] is not False

    def on_pose(self, limb, message):
        topic = f"balance/{limb}/pose"
        placement = pose_placement(message, self.world_frame, topic)
        try:
            self.core.check_pose(limb, placement.translation)
        except OutOfReach as error:
            raise RejectedMessage("out_of_reach", f"{topic}: {error}") from None
        self.refuse_without_contact(topic)
        self.poses[limb] = placement

    def on_step(self, foot, message):
        """balance/<foot>/step: the sole's landing pose (world frame; its height and tilt are the floor's)."""
        topic = f"balance/{foot}/step"
        try:
            self.core.request_step(foot, pose_placement(message, self.world_frame, topic))
        except Refused as error:
            self.limitations.refused(topic, str(error))

    def refuse_without_contact(self, topic):
        """RejectedMessage('no_contact') while no foot is on the ground: nothing can be balanced towards then."""
        if self.core.supported is False:
            raise RejectedMessage("no_contact", f"{topic}: refused, no foot is in contact")

    def on_jump(self, request, response):
        try:
            if self.core is None:
                raise Refused("not configured")
            self.core.jump()
        except Refused as error:
            self.limitations.refused("jump", str(error))
            response.success, response.message = False, f"jump refused: {error}"
        else:
            response.success, response.message = True, "jump requested: stoop, lift-off, aerial, touchdown"
        return response

    def on_joint_states(self, message):
        timing = self.timing.begin()
        time = self.guard.check_stamp("estimated_joint_states", message.header.stamp)
        positions, velocities, _, _ = self.joints.read(message)
        if self.latest["odom"] is None:
            return
        pose, twist = self.latest["odom"]
        q = np.concatenate([pose, positions])
        v = np.concatenate([twist, np.zeros(len(positions)) if velocities is None else velocities])
        self.last_q = q
        dt = 0.0 if self.last_input_time is None else float(np.clip(time - self.last_input_time, 0.0, 0.05))
        self.last_input_time, self.last_input_stamp = time, message.header.stamp
        zmp = self.zmp.fresh()
        self.zmp_fresh = zmp is not None
        if self.com_reference is None:
            self.com_reference = self.core.kinematics.update(q).com.copy()
        state = BalancerState(q, v, tuple(self.in_contact(f.name) for f in self.feet), zmp, self.com_reference,
                              self.trajectories, self.poses, time)
        if self.holding:
            self.core.hold(state)
            self.holding = False
        timing.lap()
        command = self.core.update(state, dt)
        self.status = command.status
        self.limitations.update(command.limitations)
        self.wrenches = command.wrenches
        timing.lap()
        self.publish(message.header.stamp, command, self.display.due(time))
        timing.lap()
        self.rate.tick()

    def check_inputs(self):
        """Stale inputs → hold the last posture with zero velocity (published once per tick here)."""
        if self.core is None or self.core.position_command is None or self.last_input_time is None:
            return
        age = self.guard.input_age()  # of the last good estimated_joint_states
        if age is not None and age > self.input_timeout:
            self.holding = True
            zeros = np.zeros(len(self.robot.output_names))
            # stamped as the state it holds, so never ahead of the next real command's stamp (the mapper checks)
            self.command_publisher.publish(self.commands.fill(self.last_input_stamp, self.core.position_command,
                                                              zeros, zeros))

    # -- outputs --------------------------------------------------------------------------------------
    def publish(self, stamp, command, display):
        self.command_publisher.publish(self.commands.fill(stamp, command.position, command.velocity, command.effort))
        for k, lifted in enumerate(command.lifted):
            if lifted != self.lifted[k]:
                self.lifted_publishers[k].publish(Bool(data=lifted))
                self.lifted[k] = lifted
        if not display:
            return
        if self.com_publisher.wanted():
            self.com_publisher.publish(point_message(stamp, self.world_frame, command.com))
        for publisher, foot, wrench in zip(self.wrench_publishers, self.feet, command.wrenches):
            if publisher.wanted():
                publisher.publish(wrench_message(stamp, foot.sole, wrench))
        if not self.marker_publisher.wanted():
            return
        markers = MarkerArray()
        ground = self.core.ground or 0.0
        for index, (xyz, color) in enumerate(((command.com, ColorRGBA(r=0.9, g=0.2, b=0.2, a=1.0)),
                                              (command.com_reference, ColorRGBA(r=0.2, g=0.2, b=0.9, a=0.6)),
                                              ((*command.capture_point, ground), ColorRGBA(r=0.9, g=0.6, b=0.1,
                                                                                           a=1.0)))):
            marker = Marker(ns="com" if index < 2 else "capture_point", id=index, type=Marker.SPHERE,
                            action=Marker.ADD, color=color, scale=Vector3(x=0.04, y=0.04, z=0.04))
            marker.header.stamp, marker.header.frame_id = stamp, self.world_frame
            marker.pose.position = Point(x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2]))
            marker.pose.orientation.w = 1.0
            markers.markers.append(marker)
        footstep = Marker(ns="footstep", id=0, action=Marker.ADD if command.footstep is not None else Marker.DELETE,
                          type=Marker.CUBE, color=ColorRGBA(r=0.1, g=0.7, b=0.3, a=0.6),
                          scale=Vector3(x=0.2, y=0.1, z=0.005))
        footstep.header.stamp, footstep.header.frame_id = stamp, self.world_frame
        if command.footstep is not None:
            position, (x, y, z, w) = command.footstep.translation, pin.Quaternion(command.footstep.rotation).coeffs()
            footstep.pose.position = Point(x=float(position[0]), y=float(position[1]), z=float(position[2]))
            footstep.pose.orientation.x, footstep.pose.orientation.y = float(x), float(y)
            footstep.pose.orientation.z, footstep.pose.orientation.w = float(z), float(w)
        markers.markers.append(footstep)
        self.marker_publisher.publish(markers)

    def publish_diagnostics(self):
        values = {"update rate [Hz]": self.rate.hz, **status_values(self.status),
                  "ZMP margin [m]": self.core.zmp_margin(self.zmp.value)}
        for foot, wrench in zip(self.feet, self.wrenches):
            values[f"{foot.name} desired normal force [N]"] = float(wrench[2])
            values[f"{foot.name} contact phase"] = {True: "contact", False: "aerial", None: "none received: assumed"}[
                self.phases[foot.name]]
        values.update(self.limitations.figures())
        values.update(self.timing.figures())
        values.update(self.guard.figures())
        if self.last_input_time is None:
            self.diagnostics.publish("WARN", f"waiting for {self.resolve_topic_name('estimated_joint_states')} and "
                                     f"{self.resolve_topic_name('odom')}", values)
        elif self.holding:
            self.diagnostics.publish("WARN", "inputs stale: holding posture", values)
        elif not self.zmp_fresh:  # the kinematic mode's ZMP/CoM control (eq. 24) holds without it
            consequence = "holding posture" if BALANCE_MODES[self.core.mode].needs_zmp else "no ZMP margin"
            self.diagnostics.publish("WARN", f"zmp stale or missing (older than input_timeout {self.input_timeout} "
                                     f"s): {consequence}", values)
        elif self.core.restarts > self.reported_restarts:
            self.diagnostics.publish("WARN", f"the robot does not follow the commands: "
                                     f"{self.core.restarts - self.reported_restarts} restarts from the measured "
                                     "posture (a command beyond max_tracking_error "
                                     f"{self.core.config.max_tracking_error})",
                                     values)
        elif self.limitations.active():
            self.diagnostics.publish("WARN", self.limitations.summary() + at_a_limit(self.status), values)
        elif (concern := warning(self.status)) is not None:  # the controller's: a wrench QP fallback, limits not met
            self.diagnostics.publish("WARN", concern, values)
        else:
            self.diagnostics.publish("OK", f"balancing ({self.core.mode})" + at_a_limit(self.status), values)
        self.reported_restarts = self.core.restarts
        self.limitations.next_report()


FACTORY = autostarted(CentroidalBalancerNode)
"""What builds this node (the demo and balance_stack build it too)."""


def main(args=None):
    return run(FACTORY, "centroidal_balancer", args)
