"""The viip mode (Sugihara–Nakamura): the vertical force reference with the phase's impedance (eqs. 8–15) and the ZMP
reference give the COG acceleration (eqs. 16–19), integrated into the strict referential velocity (SRV) and resolved
with the feet, attitude and posture constraints by weighted least norm (eq. 23); the COG rows are dropped in the
aerial phase, where the attitude and posture are controlled instead (section 3). The ZMP reference brings the COG
back over the middle of the support (:func:`~humanoid_balance.control.viip.regulated_zmp`); the soles in contact are
turned flat onto the floor, so that a foot that lands on its heel or toe does not stay rocked. The efforts are the
quasi-static torques of the wrench the VIIP asks for, m (ref p̈_G + g) (eqs. 8, 16–19), the braking of the landing
included. A jump (:meth:`ViipBalance.jump`) runs the phases of Fig. 2; while it is under way no other mode can take
over.

A jump lands where it took off, upright:

- the stoop and the lift-off keep the centroidal angular momentum at zero instead of the trunk upright (Kajita et
  al.'s resolved momentum control): legs that stretch under an upright trunk turn the whole body, which the flight
  cannot undo and the ground only by tipping the soles. The trunk leans forward as the robot crouches and comes back
  as it pushes, along the same path;
- the push is fed the inverse dynamics of its motion (:meth:`BalanceController._dynamic_torques`): zero angular
  momentum is a cancellation of large terms, which position drives lagging a fast motion by a few per cent break;
- the lift-off ends once the commanded posture, TAKEOFF_BRAKING ahead, is back at the one the stoop started from (or
  the commanded COG at the spring's rest height), and in the air the legs come to rest within TAKEOFF_BRAKING rather
  than at once (which kicks the soles off the floor by a toe or a heel), then return to that posture, so that the
  robot lands as it stood;
- heights are taken from the standing COG reference, and the CoM reference moves with the soles while the robot
  stands and, after a landing, from where the lift-off left them to where the landing put them (where the base
  estimate, which the flight moved, sees them).

Units: SI.
"""
import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from humanoid_balance.control.balance_controller import BalanceController, Plan, Refused
from humanoid_balance.control.joint_limits import LimitStatus
from humanoid_balance.control.tunables import tunable
from humanoid_balance.control.viip import (GRAVITY, Constraint, JumpSchedule, cog_reference_acceleration,
                                           joint_constraint, regulated_zmp, resolve_srv, standing_impedance,
                                           vertical_force)

__all__ = ["ViipBalance", "ViipGains", "TAKEOFF_BRAKING", "LANDING_POSTURE_GAIN"]

TAKEOFF_BRAKING = 0.0035  # [s] the legs come to rest after the lift-off with this time constant (on kangaroo_like, 5 ms
                         # lands 5 mm short of the apex, 2.5 ms pitches the landing by 2°)
LANDING_POSTURE_GAIN = 10.0  # [1/s] in the air the legs return to the posture the stoop started from


@dataclass(frozen=True)
class ViipGains:
    """The viip mode's gains and jump."""

    standing_frequency: float = tunable(8.0, "standing impedance ω (eq. 13)", "rad/s")
    standing_damping: float = tunable(1.0, "standing impedance ζ ≥ 1 (eq. 14)")
    cog_frequency: float = tunable(4.0, "horizontal COG regulation ω_c, critically damped", "rad/s")
    sole_level_gain: float = tunable(10.0, "soles in contact turned flat onto the floor", "1/s")
    posture_gain: float = tunable(2.0, "joints not in a leg return to their reference posture", "1/s")
    jump_height: float = tunable(0.05, "planned apex above the lift-off COG height z_H", "m")
    stoop_depth: float = tunable(0.05, "stoop before the lift-off, and landing depth z_d", "m")
    touchdown_clearance: float = tunable(0.005, "the touchdown begins when a sole comes this close to the floor", "m")


class ViipBalance(BalanceController):
    """Sugihara–Nakamura's variable impedant inverted pendulum, standing and jumping (see the module)."""

    mode = "viip"
    Gains = ViipGains
    steps = False  # its vertical phases switch on the contacts: a step would read as a landing

    def __init__(self, robot, config, extra_sections=()):
        super().__init__(robot, config, extra_sections)
        self.posture = robot.reference_q[robot.output_q].copy()  # where the joints outside the legs return
        self.srv = None           # the strict referential velocity of the COG [m/s]
        self.cog_height = None    # the COG height it commands during lift-off [m]
        gains = self.gains
        self.schedule = JumpSchedule(standing_impedance(gains.standing_frequency, gains.standing_damping),
                                     gains.jump_height, gains.stoop_depth,
                                     touchdown_clearance=gains.touchdown_clearance)
        self.standing_height = None  # the COG reference's height the schedule's heights are measured from [m]
        self.standing_posture = None  # the outputs' position command when the stoop began
        self.crouched_posture = None  # ... and when the lift-off began
        self.soles_at = None         # the soles' mean position when they last carried the robot, world frame [m]
        self.leg_rates = None        # the legs' rates at the end of the lift-off, brought to rest in the air [rad/s]
        self.last_motion = None      # the last tick's motion, for the lift-off's accelerations
        self.leg_columns = np.array(sorted({robot.output_names.index(j) for foot in config.feet for j in foot.joints}))

    def check(self, q, gains=None):
        super().check(q, gains)
        standing_impedance(self.gains.standing_frequency, self.gains.standing_damping)

    def hold(self, state):
        super().hold(state)
        self.srv = None

    @property
    def busy(self):
        return None if self.schedule.name == "standing" else f"a jump is under way ({self.schedule.name})"

    @property
    def phase(self):
        return self.schedule.name

    def jump(self):
        """Request a jump: stoop, lift off, fly, absorb the landing (Sugihara–Nakamura Fig. 2).

        Raises:
            Refused: a jump under way, or not standing on every foot.
        """
        if self.busy:
            raise Refused(self.busy)
        if len(self.support[0]) < len(self.config.feet):
            raise Refused("not standing on every foot")
        self.schedule.jump()

    def plan(self, tick):
        motion, force = self._motion(tick)
        pushing = self.schedule.name == "liftoff" and self.last_motion is not None
        acceleration = (motion[6:] - self.last_motion[6:]) / tick.dt if pushing else None
        self.last_motion = motion
        return Plan(np.r_[force, 0.0, 0.0, 0.0], motion, np.zeros(6), acceleration)

    def efforts(self, tick, plan, distribution):
        """The quasi-static torques of the wrenches; during the lift-off, the inverse dynamics of its motion."""
        if plan.acceleration is None:
            return super().efforts(tick, plan, distribution)
        return self._dynamic_torques(tick, plan, distribution)

    def kept(self, limits):
        if limits.status is LimitStatus.LIMITED and self.schedule.name == "standing":
            # the COG velocity commanded is now the kept motion's: the SRV follows it (anti-windup)
            self.srv = self.kinematics.com_jacobian() @ limits.velocity

    def _motion(self, tick):
        """ν_o of the SRV's resolution (eqs. 20–24) and the COG force it asks for, m (ref p̈_G + g) [N]."""
        config, robot, kinematics = self.config, self.robot, self.kinematics
        state, granted, com, R_base, active, soles, dt = (tick.state, tick.granted, tick.com, tick.R_base,
                                                           tick.active, tick.placements, tick.dt)
        T = kinematics.T
        com_velocity = kinematics.J_com @ state.v
        if self.standing_height is None:
            self.standing_height = granted.position[2]
        offset = granted.position[2] - self.standing_height  # the schedule's heights are the reference's first ones
        before = self.schedule.name
        height = com[2] if before != "liftoff" else self.cog_height  # the push ends at the commanded COG's rest
        phase = self.schedule.update(bool(active), height - offset, com_velocity[2],
                                     min(M.translation[2] for M in soles) - offset)
        self._follow_soles(phase.name, soles)
        z_ref = phase.z_ref + offset
        if self.srv is None:
            self.srv = com_velocity.copy()
        if phase.name == "aerial":  # the COG is not controllable: the legs land; the SRV follows the estimate's
            active, self.srv = (), np.r_[self.srv[:2], com_velocity[2]]  # fall, its horizontal velocity cannot change
            # (the estimate's can: it drifts at lift-off, and a landing that started from it walked the COG away)
        if phase.name != "liftoff":  # the commanded COG height starts from the measured one
            self.cog_height = com[2]
        # ż_G of eq. 8 is the SRV's: on position drives it is the COG velocity being commanded, and damping the
        # estimated one instead (differentiated leg kinematics, a tick late) made standing bounce off the floor;
        # so is z_G during lift-off: the measured COG lags the commanded one on position drives, and a spring
        # that reads the lagging height releases more than the energy of eqs. 10–11
        f_z = vertical_force(self.mass, phase.impedance, z_ref, self.cog_height, 0.0, self.srv[2], bool(active),
                             config.f_min)
        acceleration = np.array([0.0, 0.0, -GRAVITY])
        constraints = []
        if active:  # eqs. 16–19 integrated into the strict referential velocity
            ground = np.mean([soles[i].translation[2] for i in active])  # the floor under the feet on it
            corners = self.sole_support.corners(active, soles)
            support = corners.min(axis=0), corners.max(axis=0)
            zmp_ref = regulated_zmp(self.mass, com, self.srv, (support[0] + support[1]) / 2, f_z, ground,
                                    self.gains.cog_frequency, support)
            acceleration = cog_reference_acceleration(self.mass, com, zmp_ref, f_z)
            self.cog_height += dt * self.srv[2]
            self.srv = self.srv + dt * acceleration
            constraints.append(Constraint("cog", kinematics.com_jacobian(), self.srv))
        for i, (foot, sole) in enumerate(zip(config.feet, soles)):
            if i in active:  # held on the floor, turned flat onto it (roll and pitch; the heading stays)
                level = np.zeros(6)
                level[3:5] = -self.gains.sole_level_gain * (sole.rotation @ pin.log3(sole.rotation))[:2]
                constraints.append(Constraint(f"{foot.name} on the floor", kinematics.frame_jacobian(self.sole_ids[i]),
                                              level))
        if phase.name in ("stoop", "liftoff") and active:  # the trunk leans as the legs bend and stretch
            A = pin.computeCentroidalMap(self.model, self.centroidal.data, state.q)
            constraints.append(Constraint("angular momentum", A[3:] @ T, np.zeros(3)))
        else:
            attitude = np.zeros((3, T.shape[1]))
            attitude[:, 3:6] = R_base
            constraints.append(Constraint("attitude", attitude, -config.attitude_gain * (R_base @ pin.log3(R_base))))
        legs = set(self.leg_columns)
        limbs = self._limb_motions(tick) if phase.name == "standing" else {}
        constraints += limbs.values()
        moving = {k - 6 for name in limbs for k in self.resolver.columns[name]}
        others = [k for k in range(len(robot.output_names)) if k not in legs and k not in moving]
        if others:
            q_out = state.q[robot.output_q]
            constraints.append(joint_constraint("posture", 6 + np.array(others), T.shape[1],
                                                self.gains.posture_gain * (self.posture[others] - q_out[others])))
        if phase.name == "aerial" and self.standing_posture is not None:  # it lands in the posture it stood in
            columns = self.leg_columns
            constraints.append(joint_constraint("landing posture", 6 + columns, T.shape[1], LANDING_POSTURE_GAIN * (
                self.standing_posture[columns] - self.position_command[columns])))
        weights = np.r_[np.full(6, 10.0), np.ones(len(robot.output_names))]
        motion = resolve_srv(constraints, weights)
        if phase.name == "aerial" and self.leg_rates is not None:  # the legs come to rest after the push
            self.leg_rates *= math.exp(-dt / TAKEOFF_BRAKING)
            motion[6 + self.leg_columns] += self.leg_rates
        self._end_push(phase.name, motion, dt)
        return motion, self.mass * (acceleration + [0.0, 0.0, GRAVITY])

    def _end_push(self, phase, motion, dt):
        """Take off once the commanded posture, TAKEOFF_BRAKING ahead, is back at the one the stoop started from: its
        progress along the way from the crouched posture to the standing one reaches 1."""
        if phase == "standing":
            self.standing_posture, self.leg_rates = None, None
        elif phase == "stoop":
            if self.standing_posture is None:
                self.standing_posture = self.position_command.copy()
            self.crouched_posture = self.position_command.copy()
        elif phase == "liftoff":
            self.leg_rates = motion[6 + self.leg_columns].copy()
            way = self.standing_posture - self.crouched_posture
            ahead = self.position_command + (dt + TAKEOFF_BRAKING) * motion[6:]
            if (ahead - self.crouched_posture) @ way >= way @ way:
                self.schedule.take_off()

    def _follow_soles(self, phase, soles):
        """The CoM reference moves with the soles while the robot stands, and after a jump from where the lift-off
        left them to where the landing put them (and where the base estimate, which the flight moved, sees them)."""
        where = np.mean([M.translation for M in soles], axis=0)
        if phase == "standing" and self.soles_at is not None:
            self._move_reference(where - self.soles_at)
        if phase in ("standing", "stoop"):  # from the push to the landing the base estimate is not anchored on them
            self.soles_at = where

    def _limb_motions(self, tick):
        """While standing, the embedded limb motions as constraints of eq. 24 (limb → Constraint): a J-busy limb that
        was given a trajectory follows its rates, a C-busy limb that was given a pose its end's twist (the rows it
        follows); the other limbs return to the posture."""
        width = 6 + len(self.robot.output_names)
        constraints = {}
        for name, rates in tick.rates.items():
            if name in self.limb_preview.followed:
                constraints[name] = joint_constraint(f"{name} trajectory", self.resolver.columns[name], width, rates)
        for name, twist in tick.twists.items():
            axes = list(self.resolver.sections[name].axes)
            J_end = self.kinematics.frame_jacobian(self.resolver.frames[name])
            constraints[name] = Constraint(f"{name} pose", J_end[axes], np.asarray(twist, dtype=float)[axes])
        return constraints
