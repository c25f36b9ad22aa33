"""What every balance mode shares: one ``update(state, dt)`` per control tick (:class:`BalanceController`); each
mode's own part is a subclass in :mod:`humanoid_balance.control.modes`, chosen by
:mod:`humanoid_balance.control.balancer`.

Each tick the controller computes the kinematics of the state once (:class:`WholeBodyKinematics`), then runs its
stages in order: the support polygon of the soles in contact (:mod:`~humanoid_balance.control.support`), the step
(:mod:`~humanoid_balance.control.stepping`), the CoM reference it grants (:mod:`~humanoid_balance.control.
reference_governor`: within the support and the heights the legs reach, :mod:`~humanoid_balance.control.com_height`,
at bounded speed and acceleration), the C-busy limbs' twists and the J-busy limbs' rates, slowed where the ZMP or the
joints' speed ask (:mod:`~humanoid_balance.control.limb_motion`, :mod:`~humanoid_balance.control.limb_preview`). The
mode plans the CoM wrench and the motion (:meth:`BalanceController.plan`), the QP distributes the wrench over the
soles (Garofalo et al. eqs. 41–43) and the mode turns the distribution into efforts
(:meth:`BalanceController.efforts`). A motion keeps the actuators' strokes and the joints' ranges
(:mod:`~humanoid_balance.control.joint_limits`, Kangaroo eq. (IV)): at a limit the CoM's horizontal motion goes on
through the other joints, and a rise the limits stop is not asked for again (the anti-windup of the CoM height). It is
integrated into position commands, restarted from the measured posture when the robot does not follow; position,
velocity and effort are clamped to the URDF limits before leaving (:mod:`~humanoid_balance.control.
command_integration`). Each command carries the limitations and a :class:`~humanoid_balance.control.balance_status.
BalanceStatus`, and what the robot cannot do now is :class:`Refused`. Everything works on the serial-equivalent
outputs q (robot.output_names); a closed-chain robot is projected onto them with T = ∂ν/∂ν_o and its actuator torques
mapped by eq. 23. Units: SI.
"""
import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple, Optional

import numpy as np
import pinocchio as pin

from humanoid_balance.control.balance_status import BalanceStatus
from humanoid_balance.control.command_integration import CommandIntegrator
from humanoid_balance.control.com_height import ComHeightRange, leg_limits
from humanoid_balance.control.embedded_motion import BASE, C_BUSY, J_BUSY, EmbeddedMotionResolver, Section
from humanoid_balance.control.floor import Floor
from humanoid_balance.control.joint_limits import JointLimits
from humanoid_balance.control.joint_trajectory import check as check_trajectory
from humanoid_balance.control.limb_preview import LimbPreview
from humanoid_balance.control.limb_motion import PoseTargets, TrajectoryClock, limb_reach
from humanoid_balance.control.momentum_balance import WrenchDistribution, contact_wrench_map, joint_torques
from humanoid_balance.control.capture_point import capture_point
from humanoid_balance.control.reference_governor import ComGovernor, Limitation
from humanoid_balance.control.support import SoleSupport, support_roles
from humanoid_balance.control.tunables import tunable
from humanoid_balance.control.stepping import LANDED_SHORT, StepRequestError, Stepping, StepTick, step_region
from humanoid_balance.control.zmp_com import GRAVITY, ZmpComGains, check_gains
from humanoid_balance.errors import HumanoidBalanceError
from humanoid_balance.model.centroidal import Centroidal
from humanoid_balance.model.closed_chain import ClosedChain
from humanoid_balance.model.kinematics import WholeBodyKinematics
from humanoid_balance.model.robot_config import ROBOT_DEFAULTS
from humanoid_balance.model.projected_dynamics import gravity_from_com_jacobian, output_dynamics
from humanoid_balance.model.soles import TIPPING_TILT, free_contact_twists, sole_rectangle

__all__ = ["BalanceController", "Foot", "BalancerConfig", "BalancerState", "JointCommand", "Plan", "Refused", "Tick",
           "WRENCH_TOLERANCE"]

LEVER_TORQUE_FRACTION = 0.125
"""With the lever rule, an ankle torque costs as much as a force at this fraction of the smallest sole's width or
length (WrenchDistribution's torque_length: an eighth, a quarter of the half-width)."""
WRENCH_TOLERANCE = 1e-6
"""OSQP's tolerance for the soles' wrenches, every mode: their sum to ~10 mN of the desired wrench, CoPs to a
micrometre. To 1e-10, a saturated push (the capture point at the feet's edge, the desired wrench out of their reach)
sent OSQP to its 10,000 iterations: in momentum mode at 90-100 % of the LIPM feet bound (kangaroo_like and TALOS, the
closed loop in one process at 500 Hz), solves of up to 4.7 ms on 2-12 % of the ticks longer than the 2 ms period, and
up to 23 in 750 given up (the last feasible wrenches held); at 1e-6 none given up, at most 1 % over 2 ms. OSQP's
polishing would refine the wrenches on their active constraints, but it prints a line each time it finds none (a robot
standing, OSQP 1.1), and viip's jump through the nodes ended with its CoM reference off the support with it."""



class Refused(HumanoidBalanceError):
    """A request the robot cannot do now (a jump, a mode change); the message says why."""


class Foot(NamedTuple):
    name: str          # foot name (topics)
    sole: str          # sole frame
    joints: tuple      # serial-equivalent leg joints, hip to ankle
    rectangle: object = None  # SoleRectangle of the contact surface; None: from the foot's collision boxes


@dataclass
class BalancerConfig:
    """What every mode shares; the tunables (:func:`~humanoid_balance.control.tunables.tunable`) are the
    centroidal_balancer's parameters of the same name, and each mode's gains (its controller's ``Gains``) its
    ``<mode>.<field>`` ones."""

    mode: str = "kinematic"            # which BalanceController (control.balancer.BALANCE_MODES)
    feet: tuple = ()
    gains: dict = field(default_factory=dict)  # mode → its controller's Gains; a mode not in it: their defaults
    zmp_com: ZmpComGains = field(default_factory=lambda: ZmpComGains(np.full(2, ROBOT_DEFAULTS["k_p"]),
                                                                      np.full(2, ROBOT_DEFAULTS["k_c"])))
    attitude_gain: float = tunable(5.0, "the base's attitude back to level (every mode's motion)", "1/s")
    friction: float = tunable(0.7, "μ of the soles' friction pyramid")
    f_min: float = tunable(10.0, "least normal force of a sole in contact (the wrench distribution)", "N")
    stance_cop_margin: float = tunable(0.05, "fraction of a sole's length and width its CoP keeps off each edge when "
                                             "the foot carries the robot alone (it does not tip over an edge)")
    cop_margin: float = tunable(0.05, "fraction of a sole's length and width its CoP keeps off each edge when the "
                                      "feet share the load (on torque drives a CoP asked on the edge tips the sole)")
    pose_gain: float = tunable(5.0, "C-busy limbs converge to their target poses", "1/s")
    max_tracking_error: float = tunable(0.25, "a position command this far from the measured output joint restarts "
                                              "from the measured posture (the modes that plan a motion)", "rad or m")
    support_margin: float = ROBOT_DEFAULTS["support_margin"]  # [m] the CoM reference stays this far inside the
                                       # support polygon's edges (the robot configuration's parameter)
    min_foot_load: float = tunable(0.25, "the CoM reference stays where each foot in contact carries at least this "
                                         "fraction of the weight")
    max_com_speed: float = tunable(0.05, "the CoM reference approaches a new target at most this fast", "m/s")
    max_com_acceleration: float = tunable(0.5, "... and accelerates at most this much, and ω² support_margin (its "
                                               "LIPM ZMP stays in the support)", "m/s²")
    max_limb_speed: float = tunable(0.3, "C-busy limb ends approach their target poses at most this fast", "m/s")
    max_limb_acceleration: float = tunable(1.0, "... accelerating at most this much", "m/s²")
    max_limb_angular_speed: float = tunable(1.0, "... turning at most this fast", "rad/s")
    respect_limits: bool = tunable(True, "the velocity resolution keeps the actuators' strokes and the joints' "
                                         "ranges (false: the command clamped output by output)")
    limit_margin: float = tunable(0.02, "fraction of each actuator's stroke the velocity resolution keeps free "
                                        "(the modes that plan a motion)")
    limit_com_weight: float = tunable(1e4, "weight of the CoM's horizontal motion against the rest when a limit acts "
                                           "(joint_limits)")
    stepping: bool = tunable(False, "take a recovery step when the capture point leaves the support polygon (the "
                                    "modes that step)")
    step_trigger: float = tunable(0.0, "... by more than this beyond its edge", "m")
    step_duration: float = tunable(0.35, "swing time of a step", "s")
    commanded_step_duration: float = tunable(0.8, "swing time of a step asked for on balance/<foot>/step (after the "
                                                  "weight has gone onto the other foot)", "s")
    step_height: float = tunable(0.04, "how high a swing sole is lifted", "m")
    swing_gain: float = tunable(20.0, "the swing sole's pose error fed back", "1/s")
    max_steps: int = tunable(2, "recovery steps in a row before the robot must stand again")
    step_region: Optional[tuple] = None  # StepRegion (forward, backward, outward, inward) [m]; None: from the legs


class BalancerState(NamedTuple):
    q: np.ndarray                      # floating-base configuration (base pose from odom, every joint)
    v: np.ndarray                      # velocity (base twist in the base frame, every joint)
    contacts: tuple                    # per foot: True in contact
    zmp: Optional[np.ndarray]          # measured ZMP, world frame [m]; None: none fresh (kinematic mode holds)
    com_reference: np.ndarray          # desired CoM, world frame [m]: a wish, granted as far as balance allows
    trajectories: dict = {}            # J-busy extra sections → their newest LimbTrajectory
    poses: dict = {}                   # C-busy extra sections → target pin.SE3 of their end frame, world
    time: float = 0.0                  # of the state, on the trajectories' stamps' clock [s]
    sole_wrenches: tuple = ()          # per foot, its measured sole wrench [f; τ] (sole frame, about its origin)
                                       # or None: unknown [N, N·m]; () none known (contact/<foot>/wrench)


class JointCommand(NamedTuple):
    position: np.ndarray               # robot.output_names order [rad or m]
    velocity: np.ndarray
    effort: np.ndarray                 # [N·m or N]
    wrenches: np.ndarray               # desired sole wrenches (feet, 6), sole frames [N, N·m]
    com: np.ndarray                    # CoM of the state the command was computed from, world frame [m]
    status: BalanceStatus              # the tick's figures
    limitations: tuple = ()            # the references not granted as asked (reference_governor.Limitation)
    com_reference: np.ndarray = None   # the CoM reference granted, world frame [m]
    capture_point: np.ndarray = None   # ξ = c + ċ/ω of the state, world frame (2,) [m]
    footstep: object = None            # the swing sole's landing placement (pin.SE3, world) while stepping
    lifted: tuple = ()                 # per foot (config.feet order), whether a step has lifted it


class Tick(NamedTuple):
    """What an update has found before the mode's part (world frame, SI)."""

    state: BalancerState
    dt: float                 # [s]
    com: np.ndarray           # the state's CoM [m]
    R_base: np.ndarray        # the base's orientation (3, 3)
    placements: list          # the soles' placements (pin.SE3), one per foot
    active: tuple             # indices of the feet in contact
    granted: object           # the CoM reference granted (reference_governor.GrantedCom)
    zmp_reference: np.ndarray  # its LIPM ZMP, Choi–Kim eq. 23 (2,) [m]
    twists: dict              # C-busy limb → its end's twist towards its target [m/s, rad/s]
    rates: dict               # J-busy limb → its joints' rates on its trajectory's clock [rad/s, m/s]
    omega: float              # the pendulum's ω = √(g / (c_z − ground)) [1/s]
    support: object           # the soles in contact (support.Support; None: none)
    wrench_maps: list         # per foot, G_i: its sole wrench → the same wrench at the CoM (contact_wrench_map)
    com_velocity: np.ndarray  # the state's CoM velocity [m/s]


class Plan(NamedTuple):
    """A mode's answer for one tick."""

    wrench: np.ndarray            # the CoM wrench the soles are to exert, world frame, at the CoM (6,) [N, N·m]
    motion: Optional[np.ndarray]  # ν_o: base twist and output rates (6 + n_out,); None: the posture is held still
    momentum: np.ndarray          # the centroidal momentum the mode measured [p; L] (6,) [kg m/s, kg m²/s] (0: none)
    acceleration: Optional[np.ndarray] = None  # the outputs' accelerations the motion asks for (n_out,); None: none
    distribution: object = None   # the soles' wrenches when the mode distributed ``wrench`` itself (to move the
                                  # soles by them; a DistributionResult); None: the update distributes it


class BalanceController:
    """Balance of a floating-base :class:`RobotModel` over its serial-equivalent outputs; a subclass per mode
    (:mod:`humanoid_balance.control.modes`) says what wrench and motion a tick asks for (:meth:`plan`) and which
    efforts hold the wrenches (:meth:`efforts`).

    Args:
        robot: the RobotModel (floating base).
        config: its :class:`BalancerConfig` (the controller's own: a change of mode or gains makes a new one).
        extra_sections: the limbs' embedded-motion Sections (J-busy: trajectories; C-busy: target poses).
    """

    mode = None  # the mode's name, as BalancerConfig.mode and the node's parameter give it
    steps = True  # whether the mode takes steps (capture-point recovery, requested steps)
    lever_rule = False  # whether the soles' wrenches keep ankle torques small, the loads following the ZMP (a mode
                        # on position drives, whose soles go where their CoPs are asked), or are the least wrenches
    Gains = None  # the mode's gains: a dataclass of tunables (control.tunables), BalancerConfig.gains[mode]
    return_turn_rate = None  # [1/s] a foot in the air that no step lifted turns back level at this rate per radian
                             # (Stepping; None: at swing_gain)

    @property
    def tipping(self):
        """(gain [m/rad], deadband [rad]) of the CoP bound a tipping sole has moved in (WrenchDistribution); a gain of
        0: none (a mode on position drives levels its soles instead)."""
        return 0.0, 0.0

    def __init__(self, robot, config, extra_sections=()):
        self.robot, self.config, self.sections = robot, config, tuple(extra_sections)
        self.gains = config.gains[self.mode] if self.mode in config.gains else self.Gains()
        self.model = robot.model
        self.chain = ClosedChain(robot)
        self.kinematics = WholeBodyKinematics(self.chain)
        self.centroidal = Centroidal(self.chain)
        self.mass = robot.total_mass
        feet = list(config.feet)
        self.foot_names = [f.name for f in feet]
        self.sole_ids = [robot.frame_id(f.sole) for f in feet]
        rectangles = [f.rectangle or sole_rectangle(robot, f.sole) for f in feet]
        sections = [Section(f.name, f.joints, f.sole, BASE if i == 0 else C_BUSY,
                            free_contact_twists(len(f.joints), rectangle, f.name))
                    for i, (f, rectangle) in enumerate(zip(feet, rectangles))]
        extra_sections = [s._replace(axes=(0, 1, 2)) if s.role == C_BUSY and len(s.joints) < 6 else s
                          for s in extra_sections]  # a limb of fewer than six joints follows its target's position
        self.resolver = EmbeddedMotionResolver(robot, sections + list(extra_sections), self.kinematics)
        self.extra = {s.name: s for s in extra_sections}
        self.governor = ComGovernor(config.support_margin, config.max_com_speed, config.max_com_acceleration)
        cartesian = {s.name: (s.joints, s.end_frame) for s in extra_sections if s.role == C_BUSY}
        self.pose_targets = PoseTargets(robot, cartesian, config.pose_gain, config.max_limb_speed,
                                        config.max_limb_acceleration, config.max_limb_angular_speed)
        busy = [s for s in extra_sections if s.role == J_BUSY]
        self.limb_preview = LimbPreview(TrajectoryClock({s.name: [robot.output_names.index(j) for j in s.joints]
                                                         for s in busy},
                                                        {s.name: robot.velocity_limits(s.joints) for s in busy},
                                                        {s.name: robot.position_limits(s.joints) for s in busy}),
                                        {s.name: len(s.joints) for s in busy})
        self.leg_reach = float(np.mean([limb_reach(robot, f.joints, f.sole)[1] for f in feet]))
        self.hip_ids = [robot.model.getJointId(f.joints[0]) for f in feet]
        self.ground = None        # height of the floor under the feet in contact, world frame [m]
        self.sole_support = SoleSupport([rectangle.corners() for rectangle in rectangles], config.support_margin,
                                        config.min_foot_load)
        torque_length = (LEVER_TORQUE_FRACTION * min(min(r.x_max - r.x_min, r.y_max - r.y_min) for r in rectangles)
                         if self.lever_rule else None)  # None: the least wrenches
        self.distribution = WrenchDistribution(rectangles, config.friction, config.f_min,
                                               stance_cop_margin=config.stance_cop_margin,
                                               cop_margin=config.cop_margin, tolerance=WRENCH_TOLERANCE,
                                               torque_length=torque_length, tipping=self.tipping)
        lower, upper = robot.position_limits(robot.output_names)
        velocity, effort = robot.velocity_limits(robot.output_names), robot.effort_limits(robot.output_names)
        joint_limits = JointLimits(robot, config.limit_margin, config.limit_com_weight)
        self.integrator = CommandIntegrator(np.array([lower, -velocity, -effort]), np.array([upper, velocity, effort]),
                                            config.max_tracking_error, joint_limits if config.respect_limits else None)
        self.height = ComHeightRange(self.leg_reach, leg_limits(
            robot, self.chain.output_velocity_map(robot.reference_q), [f.joints for f in feet], joint_limits.names))
        self.reference_shift = np.zeros(3)  # the CoM reference's displacement with the soles a mode moved [m]
        self.swing_limited = set()  # the joints and actuators at a limit during the swing of the step under way
        self.held = set()           # ... and of the last step that landed
        self.computed_share = 1.0   # of the ticks its gains were tuned for it computes on (loop.starvation)
        self.stepping = Stepping(feet, rectangles, config, None, self.return_turn_rate) if self.steps else None
        self.floor = Floor(rectangles)  # the floor's normal the soles stand flat on
        self.largest_sole_tilt, self.tipping_feet, self.tipping_updates = 0.0, (), 0  # the stance soles' (status)

    @property
    def support(self):
        """The feet in contact (indices) and the soles' placements (pin.SE3) at the last update."""
        return self.sole_support.standing

    @property
    def position_command(self):
        """The outputs' position command of the last update (None: the next starts from the measured posture)."""
        return self.integrator.position

    @position_command.setter
    def position_command(self, position):
        self.integrator.position = position

    @property
    def restarts(self):
        """Position commands restarted from the measured posture (max_tracking_error) since the start."""
        return self.integrator.restarts

    @property
    def limited(self):
        """Updates whose motion a joint's or actuator's limit changed since the start."""
        return self.integrator.limited

    @property
    def height_cap(self):
        """The CoM height the joint limits stopped a rise at (None: none), world frame [m]."""
        return self.height.cap

    @property
    def supported(self):
        """Whether a foot was in contact at the last update (None before the first)."""
        return self.sole_support.supported

    def check_trajectory(self, limb, trajectory, now):
        """Unfollowable unless the J-busy limb can follow ``trajectory`` (a LimbTrajectory) taken up at ``now`` [s on
        its stamps' clock] from the last update's position command (before the first: its positions' ranges, its
        end; :func:`~humanoid_balance.control.joint_trajectory.check`)."""
        joints = self.extra[limb].joints
        clock = self.limb_preview.clock
        position = None if self.position_command is None else self.position_command[clock.columns[limb]]
        check_trajectory(trajectory, joints, *clock.position_limits[limb], now - trajectory.start, position)

    def check_pose(self, limb, position):
        """OutOfReach unless ``position`` (world frame [m]) is within the C-busy limb's reach of its root, at the last
        update's configuration (no check before the first: the update ignores what is out of reach)."""
        if self.kinematics.q is not None:
            self.pose_targets.check(limb, position, self.kinematics)

    def com_height(self, q):
        """Height of the CoM above the mean sole height [m]: c_z of the inverted pendulum (ω_n = √(g/c_z))."""
        kinematics = self.kinematics.update(q)
        soles = [kinematics.placement(i).translation[2] for i in self.sole_ids]
        return float(kinematics.com[2] - np.mean(soles))

    def check(self, q, gains=None):
        """Refuse gains outside the stability conditions at configuration q (GainError / ValueError, with why)."""
        check_gains(self.config.zmp_com if gains is None else gains, self.com_height(q))

    def hold(self, state):
        """Restart from the measured posture (after a timeout or on activation), the CoM reference at rest at the
        measured CoM."""
        self.position_command = state.q[self.robot.output_q].copy()
        self.governor.reset(self.kinematics.update(state.q).com)
        if self.stepping is not None:
            self.stepping.abort()

    def retune(self, zmp_com):
        """Take the ZmpComGains ``zmp_com`` from the next update on (check them first: :meth:`check`)."""
        self.config = replace(self.config, zmp_com=zmp_com)

    @property
    def busy(self):
        """What the mode is doing that another mode could not take over (a step, a jump's phase), or None."""
        if self.stepping is not None and self.stepping.step is not None:
            return f"a step ({self.stepping.phase})"
        return None

    def request_step(self, foot, target):
        """Ask for a step of ``foot`` to its sole's ``target`` (pin.SE3, world); Refused when the mode does not step,
        or the robot cannot take it now or reach it (the reason)."""
        if self.stepping is None:
            raise Refused(f"mode '{self.mode}' does not step")
        if self.stepping.region is None:
            raise Refused("not standing yet")
        active, placements = self.support
        try:
            self.stepping.request(foot, target, placements, active)
        except StepRequestError as error:
            raise Refused(str(error)) from None

    @property
    def phase(self):
        """The mode's vertical phase ("n/a": none)."""
        return "n/a"

    def jump(self):
        """Request a jump; Refused here: the mode does not jump."""
        raise Refused(f"mode '{self.mode}' does not jump")

    # -- the mode's part ------------------------------------------------------------------------------
    def plan(self, tick):
        """The :class:`Plan` of the tick: what the soles are to exert and how the robot moves."""
        raise NotImplementedError

    def distribute(self, tick, wrench):
        """The soles' wrenches (a DistributionResult) that exert the CoM ``wrench`` (world axes, at the CoM) from the
        feet in contact: the one QP of every mode (Garofalo et al. eq. 38, control.momentum_balance), a tipping
        sole's CoP kept off the edge it rolls over."""
        edge_tilts = ([self.floor.edge_tilts(placement.rotation) for placement in tick.placements]
                      if self.distribution.tipping_gain else None)
        return self.distribution.solve(tick.wrench_maps, wrench, tick.active, self.mass, edge_tilts)

    def efforts(self, tick, plan, distribution):
        """Output efforts that go with the soles' wrenches and the planned motion (n_out,) [N·m or N]: by default
        the quasi-static torques that hold the wrenches (Kangaroo eq. 44)."""
        return self._static_torques(distribution.wrenches, tick.active)

    def kept(self, limits):
        """Told which part of the planned motion the joint limits kept (a JointLimits result)."""

    # -- the tick -------------------------------------------------------------------------------------
    def update(self, state, dt):
        """One control tick: the JointCommand for ``state`` [SI], ``dt`` [s] after the last. In order: the state's
        kinematics and ground, the support, the step, the CoM reference granted within the support and the heights
        the legs reach, the limbs' twists and rates, the mode's plan, the soles' wrenches and the efforts, the
        command kept within the joint limits and integrated, the status."""
        if self.position_command is None:
            self.hold(state)
        kinematics = self.kinematics.update(state.q)
        com, R_base = kinematics.com, kinematics.base_rotation
        placements = [kinematics.placement(i) for i in self.sole_ids]
        active = tuple(i for i, touching in enumerate(state.contacts) if touching)
        G = [contact_wrench_map(M, com) for M in placements]
        if active or self.ground is None:  # the floor under the feet on it; in the air, the one they left
            heights = [placements[i].translation[2] for i in (active or range(len(placements)))]
            self.ground = float(sum(heights) / len(heights))  # their mean (np.mean costs ~4 µs on two numbers)
        ground = self.ground
        self.floor.update(placements, active, state.sole_wrenches, dt)
        omega = math.sqrt(GRAVITY / max(com[2] - ground, 0.05 * self.leg_reach))
        support = self.sole_support.support(active, placements)
        com_velocity = kinematics.J_com @ state.v
        step = self._step(state, dt, com, com_velocity, omega, placements, active, support)
        if step.active != active:
            active = step.active
            support = self.sole_support.support(active, placements)
        region = support if step.over is None else self.sole_support.support(step.over, placements, current=False)
        granted = self.governor.update(state.com_reference + step.shift + self.reference_shift,
                                       None if region is None else region.com,
                                       self.height.range(com[2], ground, self._hip_height), omega, dt)
        zmp_reference = granted.position[:2] - granted.acceleration[:2] / omega ** 2  # LIPM, Choi–Kim eq. 23
        twists, pose_limitations = self.pose_targets.twists(state.poses, kinematics, dt)
        twists.update(step.twists)
        rates, rate_limitations = self.limb_preview.rates(
            state.trajectories, state.time, self.position_command,
            lambda: pin.computeCentroidalMap(self.model, self.centroidal.data, state.q) @ kinematics.T,
            self.mass, com[2] - ground, zmp_reference, None if support is None else support.limbs, state.zmp, dt)
        if active:
            roles = support_roles(self.foot_names, self.resolver.base_section.name, active)
            if roles is not None:
                self.resolver.set_roles(roles)
        tick = Tick(state, dt, com, R_base, placements, active, granted, zmp_reference, twists, rates, omega,
                    support, G, com_velocity)
        plan = self.plan(tick)
        distribution = self.distribute(tick, plan.wrench) if plan.distribution is None else plan.distribution
        effort = self.efforts(tick, plan, distribution)
        command, limits = self.integrator.update(
            plan.motion, effort, state.q, state.q[self.robot.output_q], kinematics.T, dt,
            lambda: (kinematics.com_jacobian(), [kinematics.frame_jacobian(self.sole_ids[i]) for i in active]))
        if limits is not None:
            self.height.update_cap(limits.limited, lambda: self._rise(plan.motion, limits.velocity), com[2],
                                   state.com_reference[2], dt)
            self.kept(limits)
        step_limitations = self._step_limitations(limits)
        self.sole_support.stood(active, placements)
        self._observe_tilts(placements, active)
        return JointCommand(command[0], command[1], command[2], distribution.wrenches, com.copy(),
                            self._status(state, granted, plan, distribution, limits),
                            granted.limitations + pose_limitations + rate_limitations + step_limitations,
                            granted.position, step.capture_point, step.target,
                            () if self.stepping is None else self.stepping.lifted)

    def _status(self, state, granted, plan, distribution, limits):
        """The tick's :class:`BalanceStatus`."""
        stepping, integrator, momentum = self.stepping, self.integrator, plan.momentum
        return BalanceStatus(
            mode=self.mode, vertical_phase=self.phase, qp_status=distribution.status,
            qp_solve_time=distribution.solve_time, wrench_residual=float(np.abs(distribution.residual).max()),
            linear_momentum=math.hypot(momentum[0], momentum[1], momentum[2]),
            angular_momentum=math.hypot(momentum[3], momentum[4], momentum[5]),
            clamped_values=integrator.clamped, restarts=integrator.restarts,
            joint_limits=None if limits is None else limits.status,
            joint_limits_solver_flag=0 if limits is None else limits.solver_flag,
            joints_at_a_limit=() if limits is None else limits.limited, updates_limited=integrator.limited,
            com_height_out_of_reach=max(0.0, float(state.com_reference[2] - granted.target[2])),
            limb_time_scale=self.limb_preview.clock.scale,
            step_phase=None if stepping is None else stepping.phase,
            steps_taken=0 if stepping is None else stepping.taken,
            steps_cut_short=0 if stepping is None else stepping.cut_short,
            largest_sole_tilt=self.largest_sole_tilt, tipping_feet=self.tipping_feet,
            tipping_updates=self.tipping_updates)

    def _observe_tilts(self, placements, active):
        """The stance soles' tilts from the floor (control.floor): the largest, the feet tipping (beyond
        TIPPING_TILT), counted."""
        tilts = [self.floor.tilt(placements[i].rotation[:, 2]) for i in active]
        self.largest_sole_tilt = max(tilts, default=0.0)
        self.tipping_feet = tuple(self.foot_names[i] for i, tilt in zip(active, tilts) if tilt > TIPPING_TILT)
        self.tipping_updates += bool(self.tipping_feet)

    def zmp_margin(self, zmp):
        """Distance [m] of ``zmp`` inside the nearest edge of the last update's support polygon (negative outside;
        NaN without contact or ZMP) — for diagnostics, away from the control path."""
        return self.sole_support.zmp_margin(zmp)

    def soles_margin(self, point):
        """Distance [m] of ``point`` inside the hull of every sole at the last update (negative outside; NaN before
        one) — for the plausibility of a measured ZMP (control.support.SoleSupport.soles_margin)."""
        return self.sole_support.soles_margin(point)

    def _step(self, state, dt, com, com_velocity, omega, placements, active, support):
        """The tick's StepTick (control.stepping): the feet to stand on, the swing sole's twist, the CoM reference's
        shift; standing still when the mode does not step."""
        stepping = self.stepping
        if stepping is None:
            return StepTick(active, {}, np.zeros(3), capture_point(com, com_velocity, omega), None, False, None)
        if stepping.region is None:
            stepping.region = step_region(self.config, self.leg_reach, placements)
        step = stepping.update(dt, com, com_velocity, omega, placements, active,
                               None if support is None else support.polygon, state.com_reference)
        if step.reset_reference:
            self.governor.reset(com)
        return step

    def _step_limitations(self, limits):
        """A step that landed short of its target (the swing leg could not follow), once its sole stands still, as a
        Limitation naming the joints and actuators at a limit during its swing; () otherwise."""
        stepping = self.stepping
        if stepping is None:
            return ()
        if stepping.step is not None:
            self.swing_limited.update(limits.limited if limits is not None else ())
        elif self.swing_limited:  # the step has landed: what held its swing
            self.held, self.swing_limited = self.swing_limited, set()
        short = stepping.landed_short
        if short is None:
            return ()
        held = (f", held by {', '.join(sorted(self.held))} at their limits" if self.held else
                ", with no joint or actuator at a limit (it lagged)")
        return (Limitation(f"{short.foot}/step", f"{LANDED_SHORT}{held}", tuple(map(float, short.target)),
                           tuple(map(float, short.landing))),)

    # -- helpers --------------------------------------------------------------------------------------
    def _hip_height(self):
        """The hips' mean height at the configuration of ``self.kinematics``, world frame [m]."""
        heights = [self.kinematics.data.oMi[i].translation[2] for i in self.hip_ids]
        return sum(heights) / len(heights)

    def _rise(self, motion, kept):
        """The CoM's vertical speed of ν_o ``motion`` and of ``kept``, at the configuration of ``self.kinematics``
        [m/s]."""
        J_z = self.kinematics.com_jacobian()[2]
        return J_z @ motion, J_z @ kept

    def _range_rates(self, sections, dt):
        """Section → (lowest, highest) rates [rad/s] that keep its output joints in their ranges this tick, from the
        position command (a joint already outside may stay or come back)."""
        if not dt > 0.0 or not sections:
            return {}
        return {name: self.integrator.range_rates(self.resolver.columns[name] - 6, dt) for name in sections}

    def _move_reference(self, offset):
        """The CoM reference, the user's wish and the point the governor grants alike, moves by ``offset`` [m] with
        the soles a mode moved it with (a jump's landing)."""
        self.reference_shift = self.reference_shift + offset
        self.governor.move(offset)

    def _dynamic_torques(self, tick, plan, distribution):
        """τ_o = Λ_q (q̈_d + Q M_o⁻¹ (h_o − Σ J_oᵀ w)) (Garofalo et al., section 5 and eq. 15) in output coordinates,
        M_o = Tᵀ M T, h_o = Tᵀ (h + M b), J_o = J T: the torques that give the outputs ``plan.acceleration`` while the
        soles exert ``distribution``'s wrenches (the quasi-static torques of the wrenches alone without an
        acceleration)."""
        active = tick.active
        if not active:
            return np.zeros(len(self.robot.output_names))
        J = [self.kinematics.frame_jacobian(self.sole_ids[i], pin.LOCAL) for i in active]
        wrenches = distribution.wrenches[list(active)]
        if plan.acceleration is None:
            return joint_torques(self.centroidal.output_mass_matrix(tick.state.q, self.kinematics.T), J, wrenches)
        dynamics = output_dynamics(self.chain, tick.state.q, tick.state.v)
        return joint_torques(dynamics.M, J, wrenches, accelerations=plan.acceleration, bias=dynamics.h)

    def _static_torques(self, wrenches, active):
        """τ_o = [Tᵀ (g − Σ J_iᵀ w_i)]_joints at the configuration of ``self.kinematics``: the output torques that hold
        the sole wrenches still (Kangaroo eq. 44 with the outputs as coordinates; the loop forces drop out since
        J_l T = 0)."""
        kinematics = self.kinematics
        generalized = gravity_from_com_jacobian(self.model, self.mass, kinematics.J_com)
        for i in active:
            J_sole = pin.getFrameJacobian(self.model, kinematics.data, self.sole_ids[i], pin.LOCAL)
            generalized -= J_sole.T @ wrenches[i]
        return (kinematics.T.T @ generalized)[6:]
