"""Joint impedance through the loops: serial-equivalent output gains → per-actuator gains.

The outputs q move with the actuators θ_a as q̇ = J θ̇_a, J = P J_m (Kangaroo eq. 22 inverted), and power is the
same on both sides, so τ_a = Jᵀ τ_q (eq. 23). An impedance on the outputs, τ_q = K_q (q_d − q) + D_q (q̇_d − q̇)
+ τ_ff, seen from the actuators and linearised at the commanded configuration (q_d − q ≈ J (θ_d − θ)), is

    τ_a = Jᵀ K_q J (θ_d − θ) + Jᵀ D_q J (θ̇_d − θ̇) + Jᵀ τ_ff,

the congruence transformation of stiffness between coordinates (Salisbury 1980; Chen & Kao 2000, who add the term
(∂Jᵀ/∂θ) τ_ff for a loaded mechanism; it is left out here, as in joint-impedance drivers, since it needs the
Jacobian's derivative at every command). A per-actuator impedance (ros2_control's stiffness and damping command
interfaces: one gain per actuator) holds the diagonal, K_a,ii = Σ_k K_q,k J_ki²: exactly ∂τ_a,i/∂θ_i, the restoring
force an actuator feels when it alone is displaced. The couplings K_a,ij between actuators of one parallel joint
(the two ball screws of an ankle) cannot be expressed per actuator; :func:`coupling` measures what is lost. A
serial robot (J = I) gets its gains back unchanged. Units: K_q in N·m/rad or N/m per output, K_a in N/m for
ball screws and N·m/rad for rotary actuators; D alike per second.
"""
import numpy as np

__all__ = ["COMMAND_FIELDS", "IMPEDANCE_FIELDS", "actuator_gains", "coupling"]

IMPEDANCE_FIELDS = ("position", "velocity", "effort", "stiffness", "damping")
"""A joint-impedance command per actuator, in this order (ros2_control command interfaces of these names)."""
COMMAND_FIELDS = {"position": ("position",), "velocity": ("velocity",), "effort": ("effort",),
                  "impedance": IMPEDANCE_FIELDS}
"""Actuator command interface → the fields it sends per actuator, one row of values each."""


def actuator_gains(jacobian, output_stiffness, output_damping):
    """Per-actuator (stiffness, damping): the diagonals of Jᵀ K_q J and Jᵀ D_q J for diagonal output gains.

    Args:
        jacobian: J = ∂q/∂θ_a (n_out, n_a), P J_m of eq. 22.
        output_stiffness, output_damping: (n_out,) the outputs' gains.
    """
    squared = jacobian * jacobian
    return output_stiffness @ squared, output_damping @ squared


def coupling(jacobian, output_stiffness):
    """The largest coupling of the actuator stiffness Jᵀ K_q J that a per-actuator impedance drops, relative to
    its diagonal: max over i ≠ j of |K_ij| / √(K_ii K_jj) (0: decoupled, 1: as strong as the diagonal)."""
    full = jacobian.T @ (output_stiffness[:, None] * jacobian)
    diagonal = np.sqrt(np.maximum(np.diag(full), 1e-300))
    relative = np.abs(full) / np.outer(diagonal, diagonal)
    np.fill_diagonal(relative, 0.0)
    return float(relative.max(initial=0.0))
