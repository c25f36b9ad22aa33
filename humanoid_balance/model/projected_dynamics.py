"""Floating-base dynamics projected onto the loop-closure constraints (Kangaroo paper, section III-B,
appendix B) and its quasi-static special case for contact-force estimation (section VI-B).

With ν_a = [base twist; θ̇_a] and G = ∂ν/∂ν_a (J_m on the passive rows), the constrained velocities
are ν = G ν_a and ν̇ = G ν̇_a + b with b = [0; −J_l,u⁻¹ J̇_l ν; 0] (eq. 10). Premultiplying
M ν̇ + h = Sτ + J_cᵀF + J_lᵀλ by Gᵀ removes λ (J_l G = 0) and gives

    M_m ν̇_a + h_m = [0; τ] + J_c,mᵀ F,   M_m = Gᵀ M G,   h_m = Gᵀ (h + M b),   J_c,m = J_c G

whose base rows are eqs. 62–63 and joint rows eqs. 71–73 (M_j,m, h_j,m). The same projection onto the
serial-equivalent outputs, ν = T ν_o with T = ∂ν/∂ν_o and b = [0; −J_l,s⁻¹ J̇_l ν on the joints that are not outputs;
0], gives the dynamics in output coordinates, whose generalized forces are the output torques of eq. 23.
Units: SI (kg, m, s, N, N·m).
"""
from typing import NamedTuple

import numpy as np
import pinocchio as pin
from scipy.linalg import lapack

__all__ = ["ProjectedDynamics", "projected_dynamics", "output_dynamics", "quasi_static_actuator_efforts",
           "contact_forces_from_actuator_efforts", "generalized_gravity", "gravity_from_com_jacobian",
           "gravity_from_joint_jacobians", "least_squares"]


class ProjectedDynamics(NamedTuple):
    """Equations of motion in the actuated coordinates ν_a (appendix B)."""

    M: np.ndarray  # M_m = Gᵀ M G   (nb+na, nb+na); joint rows = M_j,m (eq. 72)
    h: np.ndarray  # h_m = Gᵀ(h + M b)   (nb+na,); joint rows = h_j,m (eq. 73)
    G: np.ndarray  # ∂ν/∂ν_a   (nv, nb+na)


def projected_dynamics(chain, q, v):
    """M_m(q), h_m(q, ν) of appendix B at a closed configuration ``q`` with consistent velocity ``v``."""
    return _projected(chain, q, v, outputs=False)


def output_dynamics(chain, q, v):
    """M_o(q), h_o(q, ν) in serial-equivalent output coordinates at a closed configuration ``q`` with consistent
    velocity ``v``: M_o = Tᵀ M T, h_o = Tᵀ (h + M b) (appendix B with the outputs as coordinates); ``G`` holds T."""
    return _projected(chain, q, v, outputs=True)


def _projected(chain, q, v, outputs):
    """Gᵀ M G and Gᵀ (h + M b), G the velocity map onto the actuated coordinates or onto the outputs, b the
    acceleration the loops give the joints that follow them (eq. 10)."""
    model, data = chain.model, chain.data
    lin = chain.linearize(q)
    if outputs:
        G, following, solve = chain.output_velocity_map(q, lin), chain.solved_v, lin.solve_solved
    else:
        G, following, solve = chain.velocity_map(q, lin), chain.robot.passive_v, lin.solve_passive
    M = pin.crba(model, data, q)
    h = pin.nonLinearEffects(model, data, q, v)
    b = np.zeros(model.nv)
    if chain.m:
        b[following] = -solve(chain.bias(q, v))
    return ProjectedDynamics(G.T @ M @ G, G.T @ (h + M @ b), G)


def generalized_gravity(chain, q):
    """g(q) = ∂V/∂q for every joint of the tree (N, N·m)."""
    return pin.computeGeneralizedGravity(chain.model, chain.data, q)


def gravity_from_com_jacobian(model, mass, J_com):
    """g(q) = −m J_comᵀ g₀ (N, N·m): the gravity's generalized force from the CoM Jacobian J_com (3, nv) at q and the
    total mass m [kg] (its power is m g₀·ċ)."""
    return (-mass * model.gravity.linear) @ J_com


def gravity_from_joint_jacobians(model, data):
    """g(q) from the CoM Jacobian read from the joint Jacobians and placements ``data`` holds after
    ``computeJointJacobians`` at q — a third of the cost of the RNEA in :func:`generalized_gravity`, for a caller that
    has made that pass anyway."""
    J_com = pin.jacobianCenterOfMass(model, data, False)  # sets data.mass[0] as well
    return gravity_from_com_jacobian(model, data.mass[0], J_com)


def _projected_statics(chain, q, J_c, support=1.0, gravity=None):
    """Gᵀ g = [g_b; g_a + J_mᵀ g_u] and J_c G = [J_c,b  J_c,a + J_c,u J_m] (eq. 66b, with the base rows of eq. 26a),
    G = ∂ν/∂ν_a with the linearization's J_m (eq. 7); ``gravity``: g(q) when the caller has it."""
    robot = chain.robot
    J_m = chain.mapping_jacobian(q)
    g = (generalized_gravity(chain, q) if gravity is None else gravity) * support
    b = robot.base_nv
    g_m = g.take(chain.base_and_actuated_v)
    g_m[b:] += J_m.T @ g.take(robot.passive_v)
    J_cm = J_c.take(chain.base_and_actuated_v, axis=1)
    J_cm[:, b:] += J_c.take(robot.passive_v, axis=1) @ J_m
    return g_m, J_cm


def quasi_static_actuator_efforts(chain, q, J_c, F):
    """τ = g_a + J_mᵀ g_u − J_c,mᵀ F (eq. 44): actuator efforts holding the robot still under contact forces F.

    Args:
        J_c: stacked contact Jacobians (3c or 6c, nv), matching the components of ``F``.
        F: contact forces or wrenches [N, N·m] exerted by the environment on the robot.
    """
    b = chain.robot.base_nv
    g_m, J_cm = _projected_statics(chain, q, J_c)
    return g_m[b:] - J_cm[:, b:].T @ F


def contact_forces_from_actuator_efforts(chain, q, J_c, tau, include_base=True, rcond=1e-10, support=1.0,
                                         gravity=None):
    """F = (J_c,mᵀ)† (g_a + J_mᵀ g_u − τ̄) (eqs. 45–46): contact forces from measured actuator efforts.

    With ``include_base`` (floating base only) the six base rows of the quasi-static equations,
    g_b = J_c,bᵀ F (eq. 26a with ν = ν̇ = 0), are stacked above eq. 45: the actuators alone rarely
    determine every contact component, the base balance does. ``support``: the share of the weight the supports
    carry (estimation/support_load.py), which scales g: 1 standing, 0 in the air, where the base rows would
    otherwise make the soles carry the weight. ``gravity``: g(q) when the caller has it.
    """
    b = chain.robot.base_nv
    rhs, J_cm = _projected_statics(chain, q, J_c, support, gravity)
    rhs[b:] -= tau
    first = 0 if include_base else b  # the rows kept: the base's (eq. 26a), then eq. 45's
    return least_squares(J_cm[:, first:].T, rhs[first:], rcond)


def least_squares(A, b, rcond=1e-10):
    """argmin ‖A x − b‖ with the least norm among the solutions, rank determined at ``rcond`` (LAPACK dgelsy:
    QR with column pivoting, several times cheaper than numpy's SVD-based lstsq on these small systems)."""
    rows, columns = A.shape
    rhs = np.zeros(max(rows, columns))
    rhs[:rows] = b
    x, info = lapack.dgelsy(A, rhs[:, None], np.zeros(columns, dtype=np.int32), rcond,
                            lwork=max(4 * columns + 1, 2 * min(rows, columns) + 1, 64))[1::3]
    if info < 0:
        raise ValueError(f"dgelsy: argument {-info} is invalid")
    return x[:columns, 0]
