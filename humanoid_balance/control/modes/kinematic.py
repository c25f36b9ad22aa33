"""The kinematic mode (Choi–Kim): the CoM command of eq. 24 horizontally (and a CoM height P term) resolved through
the CoM Jacobian with the embedded motions (eqs. 14–20) into serial-equivalent joint rates, integrated into position
targets for stiff drives; the efforts are the quasi-static torques of the distributed wrench (gravity compensation,
Kangaroo eq. 44). Eq. 24 feeds the measured ZMP back: without a fresh one, or without a foot on the ground, the
posture is held. Units: SI.
"""
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from humanoid_balance.control.balance_controller import BalanceController, Plan
from humanoid_balance.control.tunables import tunable
from humanoid_balance.control.zmp_com import GRAVITY, balancing_input

__all__ = ["KinematicBalance", "KinematicGains"]


@dataclass(frozen=True)
class KinematicGains:
    """The kinematic mode's gains (its ZMP and CoM gains k_p, k_c are the robot's, shared: BalancerConfig.zmp_com)."""

    com_height_gain: float = tunable(5.0, "the CoM height's P term", "1/s")


class KinematicBalance(BalanceController):
    """Choi–Kim's CoM/ZMP control with embedded limb motions, on position drives (see the module)."""

    mode = "kinematic"
    Gains = KinematicGains

    def plan(self, tick):
        state = tick.state
        wrench = np.array([0.0, 0.0, self.mass * GRAVITY, 0.0, 0.0, 0.0])
        if not tick.active or state.zmp is None:
            return Plan(wrench, np.zeros(6 + len(self.robot.output_names)), np.zeros(6))
        return Plan(wrench, self._motion(tick), np.zeros(6))

    def _motion(self, tick):
        """ν_o: the base twist and output rates of the CoM command's resolution (eqs. 14–20, 24), tracking the
        granted reference: eq. 24 with c_d, ċ_d its position and velocity and p_d its LIPM ZMP."""
        config, state, granted, com, R_base = self.config, tick.state, tick.granted, tick.com, tick.R_base
        u = np.zeros(3)
        u[:2] = balancing_input(granted.velocity, tick.zmp_reference, state.zmp, granted.position, com,
                                config.zmp_com)
        u[2] = granted.velocity[2] + self.gains.com_height_gain * (granted.position[2] - com[2])
        omega = -config.attitude_gain * (R_base @ pin.log3(R_base))  # back to level, world axes
        resolution = self.resolver.resolve(state.q, u, omega, twists=tick.twists, joint_rates=tick.rates,
                                           rate_bounds=self._range_rates(tick.twists, tick.dt))
        return resolution.output_velocity
