"""The momentum mode (Garofalo et al.), for torque-controlled robots: the desired CoM wrench of eqs. 38–39 from the
measured centroidal momentum, distributed over the soles by the QP (eqs. 41–43) and mapped to the output torques
τ_o = −Λ_q Q M_o⁻¹ Σ J_oᵀ w (section 5), sent through the joint impedance with the posture held as its position
target. Units: SI.
"""
import numpy as np
import pinocchio as pin

from humanoid_balance.control.balance_controller import BalanceController, Plan
from humanoid_balance.control.momentum_balance import desired_com_wrench, joint_torques

__all__ = ["MomentumBalance"]


class MomentumBalance(BalanceController):
    """Garofalo et al.'s momentum-based balance on the joint impedance (see the module)."""

    mode = "momentum"

    def plan(self, tick):
        state, granted = tick.state, tick.granted
        momentum = self.centroidal.momentum(state.q, state.v)
        wrench = desired_com_wrench(self.mass, tick.com, granted.position, tick.R_base, np.eye(3), momentum,
                                    self.config.momentum, granted.velocity, granted.acceleration)
        return Plan(wrench, None, momentum)

    def efforts(self, tick, distribution):
        """τ_o = −Λ_q Q M_o⁻¹ Σ J_oᵀ w (Garofalo et al., section 5) directly in output coordinates, M_o = Tᵀ M T and
        J_o = J T: the same torques as in actuated coordinates mapped by eq. 23, since the change of coordinates
        leaves the base alone (τ_o = Aᵀ τ_a with A = (P J_m)⁻¹ = eq. 23)."""
        active = tick.active
        if not active:
            return np.zeros(len(self.robot.output_names))
        kinematics = self.kinematics
        J = [kinematics.frame_jacobian(self.sole_ids[i], pin.LOCAL) for i in active]
        return joint_torques(self.centroidal.output_mass_matrix(tick.state.q, kinematics.T), J,
                             distribution.wrenches[list(active)])
