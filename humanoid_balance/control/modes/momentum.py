"""The momentum mode (Garofalo et al.), for torque-controlled robots: the desired CoM wrench of eqs. 38–39 from the
measured centroidal momentum, distributed over the soles by the QP (eqs. 41–43) and mapped to the output torques
τ_o = Λ_q (q̈_d + Q M_o⁻¹ (h_o − Σ J_oᵀ w)) (section 5, with the decoupled joint dynamics of eq. 15), sent through
the joint impedance with the motion as its position and velocity targets.

The motion embeds the limbs' as in the kinematic mode (Choi–Kim eqs. 14–20; Kim–Choi–Kim): J-busy trajectories and
C-busy poses, the support legs resolved so that the posture the joints are commanded to keeps its CoM on the
reference the wrench pulls the robot to, and the base level. That posture is seen standing where the robot stands
(a first-order step from the measured one), so the targets do not chase a push the wrench answers. The momentum the
motion carries, h_d = A ν_d, is the one eq. 38 damps about, and its rate is fed forward: a dance is not a
disturbance. Units: SI.
"""
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from humanoid_balance.control.balance_controller import BalanceController, Plan
from humanoid_balance.control.foot_damping import (EDGE_TILT_DEADBAND, LEVEL_PER_TICK, FootDampingGains,
                                                   levelling_twists)
from humanoid_balance.control.momentum_balance import MomentumGains, desired_com_wrench
from humanoid_balance.control.tunables import tunable
from humanoid_balance.control.zmp_com import GRAVITY

__all__ = ["MomentumBalance", "MomentumBalanceGains"]

STANDING_TILT_DEADBAND = 0.0314  # [rad] 1.8°: the soles' tilts sensor noise and biases show (bench robustness (b), (d))


@dataclass(frozen=True)
class MomentumBalanceGains:
    """The momentum mode's gains: the motion's, and the diagonals (x, y, z) of eqs. 38–39's matrices."""

    posture_com_gain: float = tunable(5.0, "the commanded posture's CoM to the reference", "1/s")
    com_stiffness: tuple = tunable((800.0, 800.0, 800.0), "K_P, the CoM's stiffness (eqs. 38–39), diagonal", "N/m")
    linear_damping: tuple = tunable((4.0, 4.0, 4.0), "K_D, the linear momentum's damping (eqs. 38–39), diagonal", "1/s")
    orientation_stiffness: tuple = tunable((300.0, 300.0, 300.0), "K_R, the base orientation's spring (eqs. 38–39), "
                                                                  "diagonal", "N·m")
    angular_damping: tuple = tunable((4.0, 4.0, 4.0), "D, the angular momentum's damping (eqs. 38–39), diagonal", "1/s")
    tipping_cop_gain: float = tunable(3.0, "a sole sharing the load, tilted from the floor beyond tipping_deadband, "
                                           "has the CoP bound of the edge it rolls over moved inwards by this much "
                                           "per radian: its ankle torque eases and lets it down (0: off)", "m/rad")
    tipping_deadband: float = tunable(0.01, "... a tilt this small does not count", "rad")
    sole_level_gain: float = tunable(100.0, "a stance sole tilted off the floor turns back flat in the posture the "
                                            "joint impedance holds at this rate per radian of tilt (0: off), at most "
                                            f"{LEVEL_PER_TICK:g} of the tilt per tick: its ankle yields as far as it "
                                            "rolled, instead of levelling the body on the tilted sole and pressing it "
                                            "further onto its edge (TALOS pushed sideways at 90 % of its feet's LIPM "
                                            "bound: 6.9° without, 1.8° at 100 /s)", "1/s")
    sole_tilt_deadband: float = tunable(STANDING_TILT_DEADBAND, "the tilt a stance sole keeps without levelling: on "
                                                                "torque drives the QP holds each CoP inside its sole, "
                                                                "so a tilt is the estimate's error (sensor noise and "
                                                                "biases: up to 1.8°; at 1.25° the levelling fought "
                                                                "them and a push never settled, bench robustness "
                                                                "(b), (d))", "rad")
    edge_tilt_deadband: float = tunable(EDGE_TILT_DEADBAND, "the same while the robot may be rolling over an edge: a "
                                                            "foot that no step lifted has left the floor, or a stance "
                                                            "sole carries less than rolling_load_share", "rad")
    rolling_load_share: float = tunable(0.25, "a stance sole carrying less of the robot's weight than this (its "
                                              "measured normal force) leaves the other rolling over its edge (TALOS "
                                              "pushed sideways at 90 %: 2.3° at 0, 1.8° at 0.25; the measured CoPs "
                                              "near an edge did not tell a roll from sensor noise)")

    @property
    def momentum(self):
        """The MomentumGains of eqs. 38–39 (3, 3) each."""
        return MomentumGains(np.diag(self.com_stiffness), np.diag(self.linear_damping),
                             np.diag(self.orientation_stiffness), np.diag(self.angular_damping))


class MomentumBalance(BalanceController):
    """Garofalo et al.'s momentum-based balance on the joint impedance, with embedded limb motions (see the
    module)."""

    mode = "momentum"
    Gains = MomentumBalanceGains

    def __init__(self, robot, config, extra_sections=()):
        super().__init__(robot, config, extra_sections)
        gains = self.gains
        self.momentum_gains = gains.momentum
        self.levelling = FootDampingGains(cop_admittance=0.0, force_difference_admittance=0.0, height_damping=0.0,
                                          max_tilt_rate=0.0, max_lift_rate=0.0, level_gain=gains.sole_level_gain,
                                          tilt_deadband=gains.sole_tilt_deadband,
                                          edge_deadband=gains.edge_tilt_deadband)  # the levelling alone
        self.limb_columns = np.concatenate([self.resolver.columns[name] for name in self.extra] or [np.zeros(0, int)])
        self.commanded = None  # (limb rates, angular momentum) the last tick's motion asked for, for their rates

    @property
    def tipping(self):
        return self.gains.tipping_cop_gain, self.gains.tipping_deadband

    def hold(self, state):
        super().hold(state)
        self.commanded = None

    def plan(self, tick):
        state, dt = tick.state, tick.dt
        momentum = self.centroidal.momentum(state.q, state.v)
        if not tick.active:  # nothing to move against: the posture is held
            self.commanded = None
            return Plan(self._wrench(tick, momentum), None, momentum)
        resolution = self._motion(tick)
        limbs = np.zeros_like(resolution.output_velocity)  # the limbs' motion (a swing leg's too), the rest still
        columns = self.limb_columns
        swinging = [self.resolver.columns[foot.name] for foot in self.config.feet if foot.name in tick.twists]
        if swinging:
            columns = np.concatenate([columns, *swinging])
        limbs[columns] = resolution.output_velocity[columns]
        angular = self.centroidal.momentum(state.q, self.kinematics.T @ limbs)[3:]  # l_d = A_l T ν_limbs
        acceleration, angular_rate = np.zeros(len(limbs) - 6), np.zeros(3)
        if self.commanded is not None and dt > 0.0:
            acceleration = (limbs[6:] - self.commanded[0]) / dt
            angular_rate = (angular - self.commanded[1]) / dt
        self.commanded = (limbs[6:], angular)
        return Plan(self._wrench(tick, momentum, angular, angular_rate), resolution.output_velocity, momentum,
                    acceleration)

    def efforts(self, tick, plan, distribution):
        """The torques of section 5 (eq. 15), directly in output coordinates: the same as in actuated coordinates
        mapped by eq. 23, since the change of coordinates leaves the base alone (τ_o = Aᵀ τ_a, A = (P J_m)⁻¹)."""
        return self._dynamic_torques(tick, plan, distribution)

    def _wrench(self, tick, momentum, angular=None, angular_rate=None):
        """w_d of eqs. 38–39 about the granted CoM reference, the motion's angular momentum and its rate."""
        granted = tick.granted
        return desired_com_wrench(self.mass, tick.com, granted.position, tick.R_base, np.eye(3), momentum,
                                  self.momentum_gains, granted.velocity, granted.acceleration, angular, angular_rate)

    def _motion(self, tick):
        """The Resolution of the reference's velocity, corrected by ``posture_com_gain`` towards the reference from
        the CoM of the commanded posture, and of the base's return to level, with the limbs' twists and rates
        (eqs. 14–20)."""
        config, state, granted, R_base = self.config, tick.state, tick.granted, tick.R_base
        displacement = self.position_command - state.q[self.robot.output_q]
        com_shift, attitude_shift = self.resolver.standing_displacement(state.q, displacement)
        u = granted.velocity + self.gains.posture_com_gain * (granted.position - (tick.com + com_shift))
        omega = -config.attitude_gain * (R_base @ pin.log3(R_base) + attitude_shift)  # the posture back to level
        return self.resolver.resolve(state.q, u, omega, twists=self._levelled(tick), joint_rates=tick.rates,
                                     rate_bounds=self._range_rates(tick.twists, tick.dt))

    def _levelled(self, tick):
        """The tick's twists with the tilted stance soles turning back flat (control.foot_damping's levelling; none
        while a step is under way: its stance sole's CoP goes to the edge towards the capture point), beyond the
        smaller deadband while the robot may be rolling (:meth:`_may_be_rolling`). A CoP near an edge, measured or
        distributed, did not tell a roll from the estimate's noise on torque drives (bench robustness (b), (d): at
        0.75° then, the pushes never settled)."""
        if not self.levelling.level_gain or (self.stepping is not None and self.stepping.step is not None):
            return tick.twists
        stance = [foot for foot in tick.active if self.foot_names[foot] not in tick.twists]
        levelling = levelling_twists(tick.placements, stance, self.levelling, tick.dt, self.floor.normal,
                                     rolling=self._may_be_rolling(tick))
        if not levelling:
            return tick.twists
        return {**tick.twists, **{self.foot_names[foot]: twist for foot, twist in levelling.items()}}

    def _may_be_rolling(self, tick):
        """Whether the robot may be rolling over an edge of the sole that carries it: a foot that no step lifted is
        off the floor, or a stance sole carries less than ``rolling_load_share`` of the weight (measured)."""
        measured, light = tick.state.sole_wrenches, self.gains.rolling_load_share * self.mass * GRAVITY
        return len(tick.active) < len(self.foot_names) or bool(measured) and any(
            measured[foot] is not None and measured[foot][2] < light for foot in tick.active)
