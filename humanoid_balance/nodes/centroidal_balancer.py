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

Modes (parameter ``mode``): control/balancer.py's BALANCE_MODES; each mode's gains are the parameters
``<mode>.<field>`` (its controller's Gains), all declared whichever mode runs, so that a change of mode takes its own.
Balance first: the references are granted as far as the robot stays up (the core's limitations, reported by
nodes/limitations.py: WARN while they last, counted, logged at a limited rate); a pose beyond the limb's reach is
rejected (out_of_reach), any reference while no foot is in contact (no_contact) or while the computer is starved
(starved: loop/balance_stage.py, which then holds the granted CoM; WARN, ERROR beyond half the ticks skipped); a jump,
a step or a mode change the robot cannot do now is refused with the reason.
Inputs older than ``input_timeout`` → hold the last posture with zero velocity, say so, recover on return;
so does the kinematic mode without a fresh zmp (its ZMP/CoM control, Choi–Kim eq. 24, feeds it back). Each foot's
measured wrench (contact/<foot>/wrench, its sole frame) drives that sole's foot damping and force difference control
in the kinematic mode (control/foot_damping.py); a foot without a fresh one is left still.
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

from humanoid_balance.control.balancer import BALANCE_MODES, MODES, Refused, configured, parameters
from humanoid_balance.control.embedded_motion import C_BUSY, J_BUSY, Section
from humanoid_balance.control.joint_trajectory import Unfollowable
from humanoid_balance.control.limb_motion import OutOfReach
from humanoid_balance.control.zmp_com import GainError, ZmpComGains
from humanoid_balance.loop import BalanceStage, NoContact, Starved, balance_feet
from humanoid_balance.loop.starvation import STARVED_ERROR, STARVED_RATE
from humanoid_balance.model import ModelError, load_robot
from humanoid_balance.estimation.robot_state import floating_state
from humanoid_balance.model.robot_config import check_robot_config
from humanoid_balance.nodes.balance_diagnostics import at_a_limit, status_values, warning
from humanoid_balance.nodes.diagnostics import Diagnostics
from humanoid_balance.nodes.entry import autostarted, run
from humanoid_balance.nodes.input_guard import InputGuard, LatestInput, PairedInput, advertise, subscribe, timer
from humanoid_balance.nodes.plausibility import Plausibility, declare as declare_plausibility
from humanoid_balance.nodes.parameters import declare_robot, declare_robot_parameter, describe
from humanoid_balance.nodes.qos import CHANGES_QOS, COMPANION_QOS, LATEST_QOS, RELIABLE_QOS
from humanoid_balance.nodes.limitations import Limitations
from humanoid_balance.nodes.messages import (JointStateReader, JointStateWriter, RejectedMessage, check_frame,
                                             contact_phase, finite, point_message, pose_placement,
                                             read_limb_trajectory, unit_quaternion, vector_values, wrench_message)
from humanoid_balance.nodes.timing import CallbackTiming, DisplayRate, RateMeter

CONTACT_PHASES = ("state", "normal_force")


class CentroidalBalancerNode(LifecycleNode):
    def __init__(self, hub=None, **node_options):
        super().__init__("centroidal_balancer", **node_options)
        self.hub = hub  # balance_stack's Composition (nodes/composition.py), None: every topic over DDS
        self.robot_config = declare_robot(self)
        self.declare_parameter("mode", "kinematic", describe(f"controller: {' | '.join(MODES)}"))
        self.cartesian_limbs = [name for name in declare_robot_parameter(self, "cartesian_limbs") if name]  # read-only
        declare_robot_parameter(self, "k_p", read_only=False)
        declare_robot_parameter(self, "k_c", read_only=False)
        declare_robot_parameter(self, "support_margin")
        self.declare_parameter("input_timeout", 0.1, describe("inputs older than this are stale [s]"))
        declare_plausibility(self)
        self.max_zmp_outside = self.declare_parameter("max_zmp_outside", 0.05, describe(
            "a zmp farther outside the soles (in contact or not: it lags a lift-off) is implausible [m]", True)).value
        self.declare_parameter("starved_rate", STARVED_RATE, describe(
            "skipping more than a fifth of the states' ticks while computing on fewer than this many a second is a "
            "starved computer: new references are refused, the granted CoM held [Hz]", True))
        self.declare_parameter("starved_margin", 1.0, describe(
            "how much further inside the support polygon the CoM reference stays on a starved computer, in "
            "support_margins (in proportion to the share of the states' ticks skipped, up to a fifth)", True))
        for name, tunable in parameters().items():  # the shared tunables, and each mode's gains as <mode>.<field>
            self.declare_parameter(name, tunable.parameter_default, describe(tunable.text, True))
        self.declare_parameter("world_frame", "odom", describe("frame of balance/com and the markers"))
        self.declare_parameter("display_rate", 30.0, describe("rate of balance/com, markers, desired wrenches [Hz]"))
        self.declare_parameter("contact_phases", "state", describe(
            f"contact phases from: {' | '.join(CONTACT_PHASES)} (contact/<foot>/state or the f_z of "
            "contact/<foot>/wrench above f_min)", True))
        self.declare_parameter("autostart", True, describe("configure and activate at start-up", True))
        self.stage = None  # the BalanceStage (humanoid_balance.loop), once configured
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
            feet = balance_feet(robot_config)
            self.limbs = list(robot_config.busy_limbs)
            self.extra = [Section(name, robot_config.limb_joints[name], robot_config.limb_end_frames[name], J_BUSY)
                          for name in self.limbs]
            self.extra += [Section(name, tuple(self.limb_parameter(f"{name}_joints", [""])),
                                   self.limb_parameter(f"{name}_end_frame", ""), C_BUSY)
                           for name in self.cartesian_limbs]
            if not value("max_tracking_error") > 0.0:
                raise ValueError(f"parameter 'max_tracking_error' must be > 0, got {value('max_tracking_error')}")
            config = configured(value, mode=value("mode"), feet=feet,
                                zmp_com=ZmpComGains(np.full(2, value("k_p")), np.full(2, value("k_c"))),
                                support_margin=float(value("support_margin")))
            if value("contact_phases") not in CONTACT_PHASES:
                raise ValueError(f"parameter 'contact_phases': '{value('contact_phases')}' is not one of "
                                 f"{', '.join(CONTACT_PHASES)}")
            if not value("starved_rate") > 0.0:
                raise ValueError(f"parameter 'starved_rate': {value('starved_rate')} is not a rate above 0 Hz")
            if not value("starved_margin") >= 0.0:
                raise ValueError(f"parameter 'starved_margin': {value('starved_margin')} is not ≥ 0")
            self.stage = BalanceStage(self.robot, config, self.extra, value("starved_rate"), value("starved_margin"))
            self.core.check(self.robot.reference_q)
            self.plausibility = Plausibility(self, self.robot, robot_config.soles)
        except (ModelError, ValueError) as error:
            self.configuration_error = str(error)
            self.get_logger().error(f"configuration refused: {error}")
            return TransitionCallbackReturn.FAILURE
        self.feet = feet
        self.joints = JointStateReader("estimated_joint_states", self.robot.joint_names)
        self.joint_gate, self.base_gate = self.plausibility.joint_gate(self.robot.joint_names), \
            self.plausibility.base_gate()
        self.commands = JointStateWriter(self.robot.output_names)
        self.rate = RateMeter()
        self.timing = CallbackTiming()
        self.display = DisplayRate(value("display_rate"))
        self.world_frame = value("world_frame")
        self.input_timeout = value("input_timeout")
        self.odom = PairedInput()  # the base pose and twist of each estimated_joint_states' stamp
        self.zmp = LatestInput(self, self.input_timeout)  # the last good zmp [m]
        self.zmp_fresh = False
        self.last_input_stamp = None
        self.status = None  # the BalanceStatus of the last update
        self.reported_restarts = 0  # the core's restarts from the measured posture at the last diagnostics
        self.wrenches = np.zeros((len(feet), 6))
        self.sole_wrenches = [LatestInput(self, self.input_timeout) for _ in feet]  # measured, sole frames
        self.phases_from_forces = value("contact_phases") != "state"
        subscribe(self, JointState, "estimated_joint_states", self.on_joint_states, LATEST_QOS)
        subscribe(self, Odometry, "odom", self.on_odom, COMPANION_QOS)
        subscribe(self, PointStamped, "zmp", self.on_zmp, LATEST_QOS)
        subscribe(self, PointStamped, "balance/com_reference", self.on_com_reference, RELIABLE_QOS)
        for k, foot in enumerate(feet):
            if not self.phases_from_forces:
                subscribe(self, Int8, f"contact/{foot.name}/state",
                          lambda message, k=k: self.on_contact_state(k, message), CHANGES_QOS)
            subscribe(self, WrenchStamped, f"contact/{foot.name}/wrench",
                      lambda message, k=k: self.on_wrench(k, message), LATEST_QOS)
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
        if self.stage is not None:
            self.stage.restart()  # from the measured posture
        return super().on_activate(state)

    @property
    def core(self):
        """The balance mode's controller (None before the configuration)."""
        return None if self.stage is None else self.stage.controller

    @property
    def last_input_time(self):
        """Stamp of the last state the balance computed on [s] (None: none yet)."""
        return None if self.stage is None else self.stage.last_time

    def limb_parameter(self, name, default):
        if not self.has_parameter(name):
            self.declare_parameter(name, default, describe("joints / end frame of a C-busy limb", True))
        return self.get_parameter(name).value

    def on_set_parameters(self, parameters):
        """Refuse gain changes that break the stability conditions (Choi–Kim eqs. 25, 31) and a mode change the robot
        cannot make now (control.balancer.change_mode), with the reason; a new mode starts from the measured posture."""
        if self.stage is None:
            return SetParametersResult(successful=True)
        values = {p.name: p.value for p in parameters}
        gains = self.core.config.zmp_com
        gains = ZmpComGains(np.full(2, values.get("k_p", gains.k_p[0])), np.full(2, values.get("k_c", gains.k_c[0])))
        try:
            self.stage.change_mode(values.get("mode", self.core.mode), gains, self.last_q)
        except (GainError, Refused, ValueError) as error:
            if isinstance(error, Refused):
                self.limitations.refused("mode", str(error))
            return SetParametersResult(successful=False, reason=str(error))
        self.input_timeout = self.zmp.timeout = values.get("input_timeout", self.input_timeout)
        for wrench in self.sole_wrenches:
            wrench.timeout = self.input_timeout
        self.world_frame = values.get("world_frame", self.world_frame)
        if "display_rate" in values:
            self.display = DisplayRate(values["display_rate"])
        return SetParametersResult(successful=True)

    # -- inputs ---------------------------------------------------------------------------------------
    def on_odom(self, message):
        time = self.guard.check_stamp("odom", message.header.stamp)
        check_frame(message.header, self.world_frame, "odom")
        pose, twist = message.pose.pose, message.twist.twist
        position = finite(vector_values(pose.position), "odom", "position")
        quaternion = unit_quaternion(pose.orientation, "odom", "orientation")
        velocity = finite(vector_values(twist.linear, twist.angular), "odom", "twist")
        self.plausibility.check_base(self.base_gate, position, quaternion, time, "odom")
        self.odom.set(message.header.stamp, (np.concatenate([position, quaternion]), velocity))

    def on_zmp(self, message):
        self.guard.check_stamp("zmp", message.header.stamp)
        check_frame(message.header, self.world_frame, "zmp")
        zmp = finite(vector_values(message.point), "zmp", "point")
        outside = -self.core.soles_margin(zmp)  # from the hull of the soles at the last update (NaN: none)
        if outside > self.max_zmp_outside:
            raise RejectedMessage("implausible", f"zmp: {outside:.3g} m outside the soles (at most "
                                  f"{self.max_zmp_outside:g} m plausibly)")
        self.zmp.set(zmp)

    def on_com_reference(self, message):
        check_frame(message.header, self.world_frame, "balance/com_reference")
        point = finite(vector_values(message.point), "balance/com_reference", "point")
        self.requested("balance/com_reference", self.stage.set_com_reference, point)

    def on_contact_state(self, foot, message):
        """contact/<foot>/state: CONTACT or AERIAL set the foot's phase; UNKNOWN (a silent sensor) keeps it."""
        contact_phase(message, f"contact/{self.feet[foot].name}/state")
        self.stage.observe_phase(foot, message.data)

    def on_trajectory(self, limb, message):
        """balance/<limb>/trajectory, taken up at the control's now (the last state's stamp; a zero stamp: from then)
        from the position command, or rejected with the reason it cannot be followed."""
        topic = f"balance/{limb}/trajectory"
        now = self.last_input_time if self.last_input_time is not None else \
            self.get_clock().now().nanoseconds * 1e-9
        trajectory = read_limb_trajectory(message, topic, self.robot_config.limb_joints[limb], now)
        try:
            self.requested(topic, self.stage.follow, limb, trajectory, now)
        except Unfollowable as error:
            raise RejectedMessage(error.reason, f"{topic}: {error}") from None

    def on_wrench(self, foot, message):
        """contact/<foot>/wrench: the sole's measured wrench (its sole frame) for foot damping; with
        contact_phases 'normal_force', its f_z above f_min is the foot's phase."""
        topic = f"contact/{self.feet[foot].name}/wrench"
        check_frame(message.header, self.feet[foot].sole, topic)
        wrench = finite(vector_values(message.wrench.force, message.wrench.torque), topic, "wrench")
        self.plausibility.check_force(wrench[:3], topic)
        self.sole_wrenches[foot].set(wrench)
        if self.phases_from_forces:
            self.stage.observe_normal_force(foot, wrench[2])

    def on_pose(self, limb, message):
        topic = f"balance/{limb}/pose"
        placement = pose_placement(message, self.world_frame, topic)
        try:
            self.requested(topic, self.stage.reach, limb, placement)
        except OutOfReach as error:
            raise RejectedMessage("out_of_reach", f"{topic}: {error}") from None

    def on_step(self, foot, message):
        """balance/<foot>/step: the sole's landing pose (world frame; its height and tilt are the floor's)."""
        topic = f"balance/{foot}/step"
        try:
            self.stage.request_step(foot, pose_placement(message, self.world_frame, topic))
        except Refused as error:
            self.limitations.refused(topic, str(error))

    @staticmethod
    def requested(topic, request, *arguments):
        """``request(*arguments, what=topic)`` of the stage, RejectedMessage('no_contact') while no foot is on the
        ground (nothing can be balanced towards then), RejectedMessage('starved') while the computer is short of time
        (loop.BalanceStage)."""
        try:
            request(*arguments, what=topic)
        except NoContact as error:
            raise RejectedMessage("no_contact", str(error)) from None
        except Starved as error:
            raise RejectedMessage("starved", str(error)) from None

    def on_jump(self, request, response):
        try:
            if self.stage is None:
                raise Refused("not configured")
            self.stage.jump()
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
        self.plausibility.check(self.joint_gate, positions, time, "estimated_joint_states")
        base = self.odom.of(message.header.stamp)  # the base of the same state
        if base is None:
            return
        q, v = floating_state(*base, positions, velocities)
        zmp = self.zmp.fresh()
        timing.lap()
        command = self.stage.update(q, v, time, zmp, sole_wrenches=tuple(w.fresh() for w in self.sole_wrenches))
        timing.lap()
        self.adopt(message.header.stamp, time, q, zmp, command)
        timing.lap()

    def adopt(self, stamp, time, q, zmp, command):
        """The tick's JointCommand for the state ``q`` stamped ``stamp`` (``time`` [s]) with the measured ``zmp``
        (None: none fresh): published, its limitations and figures kept for diagnostics."""
        self.last_q = q
        self.last_input_stamp = stamp
        self.zmp_fresh = zmp is not None
        if zmp is not None and self.hub is not None:  # balance_stack: the cycle's zmp, for the ZMP margin
            self.zmp.set(zmp)
        self.status = command.status
        self.limitations.update(command.limitations)
        self.wrenches = command.wrenches
        self.publish(stamp, command, self.display.due(time))
        self.rate.tick()

    def check_inputs(self):
        """Stale inputs → hold the last posture with zero velocity (published once per tick here)."""
        if self.core is None or self.core.position_command is None or self.last_input_time is None:
            return
        age = self.guard.input_age()  # of the last good estimated_joint_states
        if age is not None and age > self.input_timeout:
            zeros = np.zeros(len(self.robot.output_names))
            # stamped as the state it holds, so never ahead of the next real command's stamp (the mapper checks)
            self.command_publisher.publish(self.commands.fill(self.last_input_stamp, self.stage.hold(), zeros, zeros))

    # -- outputs --------------------------------------------------------------------------------------
    def publish(self, stamp, command, display):
        if self.command_publisher.wanted():  # (in balance_stack the cycle hands the command on)
            self.command_publisher.publish(self.commands.fill(stamp, command.position, command.velocity,
                                                              command.effort))
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
        for k, (foot, wrench) in enumerate(zip(self.feet, self.wrenches)):
            values[f"{foot.name} desired normal force [N]"] = float(wrench[2])
            values[f"{foot.name} contact phase"] = {True: "contact", False: "aerial", None: "none received: assumed"}[
                self.stage.phases[k]]
        values["estimated_joint_states read with odom of another stamp"] = self.odom.unpaired
        values["state ticks skipped in the last second [%]"] = 100.0 * self.stage.starvation.fraction
        values["ZMP gain k_p slowed to [% of k_p]"] = 100.0 * self.stage.starvation.computed_share
        values.update(self.limitations.figures())
        values.update(self.timing.figures())
        values["implausible readings taken over"] = self.plausibility.taken_over
        values.update(self.guard.figures())
        if self.last_input_time is None:
            self.diagnostics.publish("WARN", f"waiting for {self.resolve_topic_name('estimated_joint_states')} and "
                                     f"{self.resolve_topic_name('odom')}", values)
        elif self.stage.holding:
            self.diagnostics.publish("WARN", "inputs stale: holding posture", values)
        elif self.stage.starvation.starved:
            starvation = self.stage.starvation
            self.diagnostics.publish("ERROR" if starvation.fraction > STARVED_ERROR else "WARN",
                                     f"starved: {100 * starvation.fraction:.0f} % of the state's ticks skipped in the "
                                     f"last second, {starvation.taken_rate:.0f} Hz computed (the computer is short of "
                                     "time: see realtime_priority); new references refused, the granted CoM held",
                                     values)
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
