"""The viip mode (Sugihara–Nakamura): the vertical force reference with the phase's impedance (eqs. 8–15) and the ZMP
reference give the COG acceleration (eqs. 16–19), integrated into the strict referential velocity (SRV) and resolved
with the feet, attitude and posture constraints by weighted least norm (eq. 23); the COG rows are dropped in the
aerial phase. The ZMP reference brings the COG back over the middle of the support
(:func:`~humanoid_balance.control.viip.regulated_zmp`); the soles in contact are turned flat onto the floor, so that
a foot that lands on its heel or toe does not stay rocked; during lift-off the base attitude gives way to zero
centroidal angular momentum (Kajita et al.'s resolved momentum control): legs that extend with the trunk held upright
turn the whole body, which the ground can then only stop by tipping the soles, and which the flight could not undo.
The efforts are the quasi-static torques of the wrench the VIIP asks for, m (ref p̈_G + g) (eqs. 8, 16–19): the push
of the lift-off and the braking of the landing included. A jump (:meth:`ViipBalance.jump`) runs the phases of
Fig. 2; while it is under way no other mode can take over. Units: SI.
"""
import numpy as np
import pinocchio as pin

from humanoid_balance.control.balance_controller import BalanceController, Plan, Refused
from humanoid_balance.control.joint_limits import LimitStatus
from humanoid_balance.control.viip import (GRAVITY, Constraint, JumpSchedule, cog_reference_acceleration,
                                           regulated_zmp, resolve_srv, standing_impedance, vertical_force)

__all__ = ["ViipBalance"]


class ViipBalance(BalanceController):
    """Sugihara–Nakamura's variable impedant inverted pendulum, standing and jumping (see the module)."""

    mode = "viip"
    steps = False  # its vertical phases switch on the contacts: a step would read as a landing

    def __init__(self, robot, config, extra_sections=()):
        super().__init__(robot, config, extra_sections)
        self.posture = robot.reference_q[robot.output_q].copy()  # where the joints outside the legs return
        self.srv = None           # the strict referential velocity of the COG [m/s]
        self.cog_height = None    # the COG height it commands during lift-off [m]
        self.schedule = JumpSchedule(standing_impedance(config.viip_frequency, config.viip_damping),
                                     config.jump_height, config.stoop_depth,
                                     touchdown_clearance=config.touchdown_clearance)

    def check(self, q, gains=None):
        super().check(q, gains)
        standing_impedance(self.config.viip_frequency, self.config.viip_damping)

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
        return Plan(np.r_[force, 0.0, 0.0, 0.0], motion, np.zeros(6))

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
        phase = self.schedule.update(bool(active), com[2], com_velocity[2], min(M.translation[2] for M in soles))
        z_ref = granted.position[2] + phase.z_ref - self.schedule.z_0  # the schedule's offsets on the reference
        if self.srv is None:
            self.srv = com_velocity.copy()
        if phase.name == "aerial":  # the COG is not controllable: the legs hold; the SRV follows the estimate's
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
            corners = self._support_corners(active, soles)
            support = corners.min(axis=0), corners.max(axis=0)
            zmp_ref = regulated_zmp(self.mass, com, self.srv, (support[0] + support[1]) / 2, f_z, ground,
                                    config.cog_frequency, support)
            acceleration = cog_reference_acceleration(self.mass, com, zmp_ref, f_z)
            self.cog_height += dt * self.srv[2]
            self.srv = self.srv + dt * acceleration
            constraints.append(Constraint("cog", kinematics.com_jacobian(), self.srv))
        for i, (foot, sole) in enumerate(zip(config.feet, soles)):
            if i in active:  # held on the floor, turned flat onto it (roll and pitch; the heading stays)
                level = np.zeros(6)
                level[3:5] = -config.sole_level_gain * (sole.rotation @ pin.log3(sole.rotation))[:2]
                constraints.append(Constraint(f"{foot.name} on the floor", kinematics.frame_jacobian(self.sole_ids[i]),
                                              level))
        if phase.name == "liftoff" and active:
            A = pin.computeCentroidalMap(self.model, self.centroidal.data, state.q)
            constraints.append(Constraint("angular momentum", A[3:] @ T, np.zeros(3)))
        else:
            attitude = np.zeros((3, T.shape[1]))
            attitude[:, 3:6] = R_base
            constraints.append(Constraint("attitude", attitude, -config.attitude_gain * (R_base @ pin.log3(R_base))))
        legs = {robot.output_names.index(j) for foot in config.feet for j in foot.joints}
        limbs = self._limb_motions(tick) if phase.name == "standing" else {}
        constraints += limbs.values()
        moving = {k - 6 for name in limbs for k in self.resolver.columns[name]}
        others = [k for k in range(len(robot.output_names)) if k not in legs and k not in moving]
        if others:
            posture = np.zeros((len(others), T.shape[1]))
            posture[np.arange(len(others)), 6 + np.array(others)] = 1.0
            q_out = state.q[robot.output_q]
            constraints.append(Constraint("posture", posture,
                                          config.posture_gain * (self.posture[others] - q_out[others])))
        weights = np.r_[np.full(6, 10.0), np.ones(len(robot.output_names))]
        return resolve_srv(constraints, weights), self.mass * (acceleration + [0.0, 0.0, GRAVITY])

    def _limb_motions(self, tick):
        """While standing, the embedded limb motions as constraints of eq. 24 (limb → Constraint): a J-busy limb that
        was given a trajectory follows its rates, a C-busy limb that was given a pose its end's twist (the rows it
        follows); the other limbs return to the posture."""
        width = 6 + len(self.robot.output_names)
        constraints = {}
        for name, rates in tick.rates.items():
            if name in self.followed:
                columns = self.resolver.columns[name]
                J = np.zeros((len(columns), width))
                J[np.arange(len(columns)), columns] = 1.0
                constraints[name] = Constraint(f"{name} trajectory", J, rates)
        for name, twist in tick.twists.items():
            axes = list(self.resolver.sections[name].axes)
            J_end = self.kinematics.frame_jacobian(self.resolver.frames[name])
            constraints[name] = Constraint(f"{name} pose", J_end[axes], np.asarray(twist, dtype=float)[axes])
        return constraints
