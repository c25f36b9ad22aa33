"""Centroidal quantities of a (possibly closed-chain) floating-base robot, in actuated coordinates.

For a closed-chain robot every matrix is projected onto the loop constraints with G = ∂ν/∂ν_a
(Kangaroo paper, appendix B); for a serial robot G is the identity.

- CoM, CoM Jacobian, centroidal momentum matrix A = [A_p; A_l] (Garofalo et al. eqs. 2–5; pinocchio);
- Λ_h = (A M⁻¹ Aᵀ)⁻¹ = blockdiag(Λ_p, Λ_l), Λ_q = (Q M⁻¹ Qᵀ)⁻¹ (Garofalo et al. eqs. 16, 17, 22–24),
  with Λ_p = I/m (eq. 28);
- equivalent Cartesian inertia Λ = (J M⁻¹ Jᵀ + εI)⁻¹ at a frame, base fixed (Kangaroo eq. 31);
- CAMM axis norms, ingredients of the indices χ_j, γ_j (Kangaroo eqs. 32–34).
"""
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from humanoid_balance.model.errors import ModelError

__all__ = ["Centroidal", "InertiaDecoupling"]


class InertiaDecoupling(NamedTuple):
    """Block-diagonal inertia of the decoupled coordinates ξ = [h; q̇] (Garofalo et al. eq. 15)."""

    Lambda_h: np.ndarray  # (6, 6)  momentum inertia, eq. 16 [1/kg, 1/(kg m²)]
    Lambda_p: np.ndarray  # (3, 3)  = I/m, eq. 23 / 28
    Lambda_l: np.ndarray  # (3, 3)  eq. 24
    Lambda_q: np.ndarray  # (na, na) joint inertia seen with the momentum held, eq. 17


class Centroidal:
    """Centroidal quantities of a :class:`~humanoid_balance.model.closed_chain.ClosedChain`'s robot."""

    def __init__(self, chain):
        self.chain = chain
        self.robot = chain.robot
        self.model = chain.model
        self.data = chain.model.createData()

    def com(self, q):
        """Centre of mass in the world frame [m]."""
        return pin.centerOfMass(self.model, self.data, q).copy()

    def com_jacobian(self, q):
        """∂c/∂ν_a (3, nb+na): J_com G."""
        return pin.jacobianCenterOfMass(self.model, self.data, q) @ self.chain.velocity_map(q)

    def centroidal_momentum_matrix(self, q):
        """A G (6, nb+na): h = [p; l] = A ν at the CoM with world axes (Garofalo et al. eq. 2)."""
        A = pin.computeCentroidalMap(self.model, self.data, q)
        return A @ self.chain.velocity_map(q)

    def momentum(self, q, v):
        """h = [p; l] = A ν (6,): centroidal momentum at the CoM, world axes, of a loop-consistent velocity ν
        (Garofalo et al. eq. 2) [kg m/s, kg m²/s]."""
        return pin.computeCentroidalMomentum(self.model, self.data, q, v).np.copy()

    def output_mass_matrix(self, q, T):
        """M_o = Tᵀ M T: the mass matrix in serial-equivalent output coordinates, T = ∂ν/∂ν_o (Kangaroo appendix B
        with the outputs as coordinates) [kg, kg·m, kg·m²]."""
        return T.T @ pin.crba(self.model, self.data, q) @ T

    def mass_matrix(self, q):
        """M_m = Gᵀ M G (Kangaroo appendix B) [kg, kg·m, kg·m²]."""
        M = pin.crba(self.model, self.data, q)
        G = self.chain.velocity_map(q)
        return G.T @ M @ G

    def inertia_decoupling(self, q):
        """Λ_h, Λ_p, Λ_l, Λ_q of Garofalo et al. (eqs. 16, 17, 22–24); floating base only."""
        if not self.robot.floating_base:
            raise ModelError("the inertial decoupling of Garofalo et al. needs a floating-base model "
                             "(load_robot(..., floating_base=True))")
        M_inv = np.linalg.inv(self.mass_matrix(q))
        A = self.centroidal_momentum_matrix(q)
        Lambda_h = np.linalg.inv(A @ M_inv @ A.T)
        Lambda_p = np.linalg.inv(A[:3] @ M_inv @ A[:3].T)
        Lambda_l = np.linalg.inv(A[3:] @ M_inv @ A[3:].T)
        Q = np.hstack([np.zeros((M_inv.shape[0] - 6, 6)), np.eye(M_inv.shape[0] - 6)])
        Lambda_q = np.linalg.inv(Q @ M_inv @ Q.T)
        return InertiaDecoupling(Lambda_h, Lambda_p, Lambda_l, Lambda_q)

    def _joint_block(self, q):
        """Joint-space projected inertia M_j,m,j (eq. 72d) and G_j = ∂θ/∂θ_a, base held fixed."""
        b = self.robot.base_nv
        return self.mass_matrix(q)[b:, b:], self.chain.joint_velocity_map(q)

    def cartesian_inertia(self, q, frame, epsilon=1e-5):
        """Λ = (J M⁻¹ Jᵀ + εI)⁻¹ (Kangaroo eq. 31) at ``frame`` w.r.t. the base, in the frame's own axes.

        J and M are the projected ones (J_t,m of eq. 66b, M_j,m,j of eq. 72d), so the closed chains'
        passive links contribute their inertia. Returns (6, 6): [linear; angular] [kg, kg·m, kg·m²].
        """
        b = self.robot.base_nv
        M_joint, G_joint = self._joint_block(q)
        pin.computeJointJacobians(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        J = pin.getFrameJacobian(self.model, self.data, self.model.getFrameId(frame), pin.LOCAL)
        J = J[:, b:] @ G_joint  # (6, na)
        return np.linalg.inv(J @ np.linalg.solve(M_joint, J.T) + epsilon * np.eye(6))

    def camm_axis_norms(self, q, outputs=False):
        """‖row x, y, z of the centroidal angular momentum matrix‖ over the joint columns (Kangaroo eqs. 33–34).

        In actuated coordinates, or with ``outputs`` in the serial-equivalent output rates [rad/s] (A T, T of
        eq. 22): the coordinates in which a closed-chain robot compares with a serial one, whose columns are
        revolute joints — a ball-screw column per m/s would weigh some twenty times its joint's rad/s.
        The index γ_j of eq. 34 is the ratio of these norms between two robots.
        """
        b = self.robot.base_nv
        if outputs:
            A = pin.computeCentroidalMap(self.model, self.data, q) @ self.chain.output_velocity_map(q)
        else:
            A = self.centroidal_momentum_matrix(q)
        return np.linalg.norm(A[3:, b:], axis=1)
