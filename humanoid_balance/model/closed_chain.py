"""Closed-chain kinematics of serial-parallel hybrid mechanisms (Kangaroo paper, section III-A and
appendix A).

Every loop l is cut at one joint; its residual e_l(θ) ∈ R^{m_l} is the pose of frame_b relative to
frame_a, expressed in frame_a — translation and rotation by the log map — on the constrained axes
(eq. 2). Stacked over the loops, e(θ) = 0 holds exactly when the mechanism is assembled, and

    J_l(θ) θ̇ = [J_l,u  J_l,a] [θ̇_u; θ̇_a] = 0                     (eqs. 3–6)
    θ̇_u = −J_l,u⁻¹ J_l,a θ̇_a = J_m θ̇_a                           (eq. 7)
    θ̈_u = J_m θ̈_a − J_l,u⁻¹ J̇_l θ̇                                 (eq. 10)

Units: translations in m, rotations in rad, joint positions in rad (revolute) or m (prismatic).
"""
from typing import NamedTuple

import numpy as np
import pinocchio as pin
from scipy.linalg import lu_factor, lu_solve

from humanoid_balance.model.errors import ClosureError, SingularConfigurationError

__all__ = ["ClosedChain", "Linearization", "PassiveSolution", "jlog3_batch", "log3_batch", "skew_batch"]

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


_SKEW_ROWS, _SKEW_COLS = np.array([0, 0, 1, 1, 2, 2]), np.array([1, 2, 0, 2, 0, 1])
_SKEW_COMPONENT, _SKEW_SIGN = np.array([2, 1, 2, 0, 1, 0]), np.array([-1.0, 1.0, 1.0, -1.0, -1.0, 1.0])


def skew_batch(vectors):
    """[v]× for each row of ``vectors`` (k, 3) → (k, 3, 3)."""
    result = np.zeros((len(vectors), 3, 3))
    result[:, _SKEW_ROWS, _SKEW_COLS] = vectors[:, _SKEW_COMPONENT] * _SKEW_SIGN
    return result


def log3_batch(rotations):
    """log3 of each rotation (k, 3, 3) → (k, 3) [rad]; pinocchio.log3 where the angle nears π."""
    cos_angle = np.clip((rotations[:, 0, 0] + rotations[:, 1, 1] + rotations[:, 2, 2] - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(cos_angle)
    antisymmetric = rotations[:, (2, 0, 1), (1, 2, 0)] - rotations[:, (1, 2, 0), (2, 0, 1)]
    if angle.max(initial=0.0) < 1e-4:
        return (0.5 + angle ** 2 / 12.0)[:, None] * antisymmetric  # series of θ / (2 sin θ)
    scale = np.where(angle < 1e-4, 0.5 + angle ** 2 / 12.0, angle / (2.0 * np.sin(np.maximum(angle, 1e-4))))
    result = scale[:, None] * antisymmetric
    for i in np.flatnonzero(angle > np.pi - 1e-3):
        result[i] = pin.log3(rotations[i])
    return result


def jlog3_batch(log_vectors):
    """Jlog3 (inverse right Jacobian of SO(3), as pinocchio.Jlog3) at each log vector (k, 3) → (k, 3, 3)."""
    angle = np.linalg.norm(log_vectors, axis=1)
    small = angle < 1e-4
    safe = np.where(small, 1.0, angle)
    coefficient = np.where(small, 1.0 / 12.0 + angle ** 2 / 720.0,
                           1.0 / safe ** 2 - (1.0 + np.cos(safe)) / (2.0 * safe * np.sin(safe)))
    K = skew_batch(log_vectors)
    return np.eye(3) + 0.5 * K + coefficient[:, None, None] * (K @ K)


class Linearization(NamedTuple):
    """The loop equations at one configuration."""

    residual: np.ndarray  # e_l(θ)   (m,)
    J_l: np.ndarray       # ∂e/∂v    (m, nv) — base columns are zero: loops are internal
    J_lu: np.ndarray      # passive columns  (m, m)
    J_la: np.ndarray      # actuated columns (m, n_a)


class PassiveSolution(NamedTuple):
    """Result of closing the loops for given actuated positions."""

    q: np.ndarray             # configuration with θ_u solved
    residual_norm: float      # ‖e_l‖ at the solution
    iterations: int           # Newton iterations
    condition_number: float   # cond₂(J_l,u) at the solution


class ClosedChain:
    """Loop-closure equations of a :class:`~humanoid_balance.model.robot.RobotModel`.

    Owns a pinocchio ``Data``; not thread-safe. Base columns of every Jacobian are kept so the same
    arrays serve fixed- and floating-base models.
    """

    def __init__(self, robot):
        self.robot = robot
        model = robot.model
        self.model = model
        self.data = model.createData()
        loops = robot.spec.loops
        self.loops = loops
        self.frame_a_ids = [model.getFrameId(loop.frame_a) for loop in loops]
        self.frame_b_ids = [model.getFrameId(loop.frame_b) for loop in loops]
        # Signed support: +1 on joints moving frame_b only, −1 on joints moving frame_a only; joints
        # moving both (common ancestors, the floating base) cancel in the relative motion (eq. 51).
        self.relative_support = np.zeros((len(loops), model.nv))
        for row, (fa, fb) in enumerate(zip(self.frame_a_ids, self.frame_b_ids)):
            for sign, frame in ((-1.0, fa), (1.0, fb)):
                for joint in model.supports[model.frames[frame].parentJoint][1:]:
                    j = model.joints[joint]
                    self.relative_support[row, j.idx_v:j.idx_v + j.nv] += sign
        self.rows = np.concatenate([6 * i + np.array(loop.axis_indices, dtype=int)
                                    for i, loop in enumerate(loops)]) if loops else np.zeros(0, dtype=int)
        self.rotation_loops = np.array([i for i, loop in enumerate(loops) if any(a >= 3 for a in loop.axis_indices)],
                                       dtype=int)
        self.frame_ids = self.frame_a_ids + self.frame_b_ids
        self.row_support = self.relative_support[self.rows // 6]  # (m, nv): the mask of each row's loop
        self.loop_slices = {}
        start = 0
        for loop in loops:
            self.loop_slices[loop.name] = slice(start, start + len(loop.axes))
            start += len(loop.axes)
        self.m = start

    # -- kinematics ---------------------------------------------------------------------------------
    def _frame_poses(self):
        """Rotations and positions of every frame_a and frame_b (after a kinematics pass)."""
        H = np.array([self.data.oMf[f].homogeneous for f in self.frame_ids])  # (2L, 4, 4)
        L = len(self.loops)
        return H[:L, :3, 3], H[L:, :3, 3], H[:L, :3, :3], H[L:, :3, :3]

    def _loop_errors(self, p_a, p_b, R_a, R_b):
        """Full 6-D errors [R_aᵀ(p_b − p_a); log3(R_aᵀ R_b)] of every loop (L, 6) and R_ab (L, 3, 3)."""
        R_aT = R_a.transpose(0, 2, 1)
        R_ab = R_aT @ R_b
        full = np.zeros((len(self.loops), 6))
        full[:, :3] = (R_aT @ (p_b - p_a)[:, :, None])[:, :, 0]
        full[self.rotation_loops, 3:] = log3_batch(R_ab[self.rotation_loops])
        return full, R_aT, R_ab

    def residual(self, q):
        """e_l(θ) (eq. 2): stacked constrained components of the pose of frame_b in frame_a [m, rad]."""
        if not self.loops:
            return np.zeros(0)
        pin.framesForwardKinematics(self.model, self.data, q)
        return self._loop_errors(*self._frame_poses())[0].reshape(-1)[self.rows]

    def loop_residual_norms(self, residual):
        """‖e_l‖ of each loop, by name — for diagnostics and error messages."""
        return {name: float(np.linalg.norm(residual[s])) for name, s in self.loop_slices.items()}

    def linearize(self, q):
        """Residual and constraint Jacobian J_l = ∂e_l/∂θ at ``q`` (eqs. 2–5, appendix A eq. 51).

        The relative twist of frame_b w.r.t. frame_a uses the joints that move one frame but not the
        other (eq. 51); with the world-frame joint Jacobians J (6, nv) of pinocchio it is
        J_rel = J ⊙ s_l, s_l = ±1 on those joints. The translation rows are R_aᵀ(v − p_b × ω) of J_rel.
        The rotation rows use the exact derivative of the log map, Jlog3(R_ab)·R_bᵀ(ω_b − ω_a); on the
        constraint manifold (R_ab = I) this is eq. 51's R_aᵀ(ω_b − ω_a), and away from it Newton keeps
        converging quadratically. All rows come out of one product: J_l = (W J) ⊙ s, W (m, 6).
        """
        robot = self.robot
        if not self.loops:
            empty = np.zeros((0, self.model.nv))
            return Linearization(np.zeros(0), empty, empty[:, robot.passive_v], empty[:, robot.actuated_v])
        pin.computeJointJacobians(self.model, self.data, q)  # world-frame joint Jacobians + placements
        pin.updateFramePlacements(self.model, self.data)
        p_a, p_b, R_a, R_b = self._frame_poses()
        full, R_aT, R_ab = self._loop_errors(p_a, p_b, R_a, R_b)
        W = np.zeros((len(self.loops), 6, 6))
        W[:, :3, :3] = R_aT
        W[:, :3, 3:] = -R_aT @ skew_batch(p_b)
        W[:, 3:, 3:] = R_aT
        rotation = self.rotation_loops
        R_bT = R_b[rotation].transpose(0, 2, 1)
        log_vectors = full[rotation, 3:]
        # Jlog3 = I + O(θ): below 1e-8 rad the identity is exact to the precision of the Jacobian itself.
        W[rotation, 3:, 3:] = R_bT if np.abs(log_vectors).max(initial=0.0) < 1e-8 else jlog3_batch(log_vectors) @ R_bT
        J_l = (W.reshape(-1, 6)[self.rows] @ self.data.J) * self.row_support  # (m, nv)
        return Linearization(full.reshape(-1)[self.rows], J_l, J_l[:, robot.passive_v], J_l[:, robot.actuated_v])

    def constraint_jacobian(self, q):
        """J_l(θ) (m, nv)."""
        return self.linearize(q).J_l

    def mapping_jacobian(self, q, linearization=None):
        """J_m = −J_l,u⁻¹ J_l,a (eq. 7): passive velocities from actuated ones, (m, n_a)."""
        lin = linearization if linearization is not None else self.linearize(q)
        if not self.loops:
            return np.zeros((0, len(self.robot.actuated_v)))
        return -np.linalg.solve(lin.J_lu, lin.J_la)

    def bias(self, q, v):
        """J̇_l(θ, θ̇) θ̇ (appendix A-B, eqs. 54–57), the acceleration of the loop error at θ̈ = 0 [m/s², rad/s²].

        Evaluated with the relative-acceleration formulas of the paper, exact on the constraint manifold.
        """
        if not self.loops:
            return np.zeros(0)
        model, data = self.model, self.data
        pin.forwardKinematics(model, data, q, v, np.zeros(model.nv))
        pin.updateFramePlacements(model, data)
        full = np.zeros((len(self.loops), 6))
        for i, (fa, fb) in enumerate(zip(self.frame_a_ids, self.frame_b_ids)):
            R_a = data.oMf[fa].rotation
            p_ab = data.oMf[fb].translation - data.oMf[fa].translation
            va = pin.getFrameVelocity(model, data, fa, LWA)
            vb = pin.getFrameVelocity(model, data, fb, LWA)
            aa = pin.getFrameClassicalAcceleration(model, data, fa, LWA)
            ab = pin.getFrameClassicalAcceleration(model, data, fb, LWA)
            w_a, v_ab = va.angular, vb.linear - va.linear
            full[i, :3] = R_a.T @ (ab.linear - aa.linear - np.cross(aa.angular, p_ab) - 2.0 * np.cross(w_a, v_ab)
                                   + np.cross(w_a, np.cross(w_a, p_ab)))           # eq. 56–57
            full[i, 3:] = R_a.T @ (ab.angular - aa.angular - np.cross(w_a, vb.angular))  # eqs. 54–55
        return full.reshape(-1)[self.rows]

    # -- closing the loops ----------------------------------------------------------------------------
    def solve_passive(self, q_guess, tolerance=1e-12, max_iterations=50, max_step=0.2, max_condition=1e6):
        """θ_u(θ_a): close every loop by damped Newton on e_l with θ_a (and the base) fixed.

        Each step solves J_l,u Δθ_u = −e_l, is scaled to at most ``max_step`` (rad or m) so that the
        solution stays on the assembly branch of ``q_guess``, and is halved until ‖e_l‖ decreases.

        Raises:
            ClosureError: ‖e_l‖ did not reach ``tolerance``.
            SingularConfigurationError: cond(J_l,u) > ``max_condition`` at the solution.
        """
        passive = self.robot.passive_q
        q = np.array(q_guess, dtype=float)
        if not self.loops:
            return PassiveSolution(q, 0.0, 0, 1.0)
        lin = self.linearize(q)
        error = np.linalg.norm(lin.residual)
        iterations = 0
        while error > tolerance and iterations < max_iterations:
            iterations += 1
            try:
                step = -lu_solve(lu_factor(lin.J_lu, check_finite=False), lin.residual)
            except (ValueError, np.linalg.LinAlgError):
                step = -np.linalg.lstsq(lin.J_lu, lin.residual, rcond=None)[0]
            step_norm = np.max(np.abs(step))
            if step_norm > max_step:
                step *= max_step / step_norm
            for _ in range(30):
                candidate = q.copy()
                candidate[passive] += step
                candidate_error = np.linalg.norm(self.residual(candidate))
                if candidate_error < error:
                    break
                step *= 0.5
            else:
                break
            q, error = candidate, candidate_error
            lin = self.linearize(q)
        residual = lin.residual
        if error > tolerance:
            norms = self.loop_residual_norms(residual)
            worst = max(norms, key=norms.get)
            raise ClosureError(f"loops not closed after {iterations} Newton iterations: ‖e_l‖ = {error:.3e} "
                               f"(tolerance {tolerance:.1e}), worst loop '{worst}' at {norms[worst]:.3e}",
                               error, worst, iterations)
        condition = float(np.linalg.cond(lin.J_lu))
        if not condition <= max_condition:
            raise SingularConfigurationError(f"closed-chain singularity: cond(J_l,u) = {condition:.3e} "
                                             f"exceeds {max_condition:.1e}", condition, max_condition)
        return PassiveSolution(q, float(error), iterations, condition)

    def condition_number(self, q):
        """cond₂(J_l,u): the distance to a closed-chain singularity (∞ at a singularity)."""
        if not self.loops:
            return 1.0
        return float(np.linalg.cond(self.linearize(q).J_lu))

    # -- actuated ↔ full and output maps (eqs. 21–23) -----------------------------------------------
    def joint_velocity_map(self, q, linearization=None):
        """G_j = ∂θ/∂θ_a (n × n_a): J_m on the passive rows, identity on the actuated rows."""
        robot = self.robot
        n_joints = robot.nv - robot.base_nv
        G = np.zeros((n_joints, len(robot.actuated_v)))
        G[robot.passive_v - robot.base_nv] = self.mapping_jacobian(q, linearization)
        G[robot.actuated_v - robot.base_nv, np.arange(len(robot.actuated_v))] = 1.0
        return G

    def velocity_map(self, q, linearization=None):
        """G = ∂ν/∂ν_a ((nv) × (base_nv + n_a)): full velocity from base and actuated velocities."""
        robot = self.robot
        b = robot.base_nv
        G = np.zeros((robot.nv, b + len(robot.actuated_v)))
        G[:b, :b] = np.eye(b)
        G[b:, b:] = self.joint_velocity_map(q, linearization)
        return G

    def output_jacobian(self, q, linearization=None):
        """P·J_m (eq. 22, generalised to directly driven outputs): output velocities from θ̇_a, (n_out, n_a)."""
        rows = self.robot.output_v - self.robot.base_nv
        return self.joint_velocity_map(q, linearization)[rows]

    def output_velocity_map(self, q, linearization=None):
        """T = ∂ν/∂ν_o ((nv) × (base_nv + n_out)): full velocity from base and serial-equivalent output rates,
        G_j (P J_m)⁻¹ on the joints (eqs. 7, 22). A tree Jacobian J becomes J T in output coordinates."""
        robot = self.robot
        b = robot.base_nv
        lin = linearization if linearization is not None else self.linearize(q)
        G_joints = self.joint_velocity_map(q, lin)
        T = np.zeros((robot.nv, b + len(robot.output_v)))
        T[:b, :b] = np.eye(b)
        T[b:, b:] = G_joints @ np.linalg.inv(G_joints[robot.output_v - b])
        return T

    def actuator_velocities(self, q, output_velocities):
        """θ̇_a = (P J_m)⁻¹ q̇_d (eq. 22) [rad/s or m/s]."""
        return np.linalg.solve(self.output_jacobian(q), output_velocities)

    def output_torques(self, q, actuator_efforts):
        """τ_j = (J_mᵀ Pᵀ)⁻¹ τ (eq. 23): the output-joint torques equivalent to actuator efforts [N·m]."""
        return np.linalg.solve(self.output_jacobian(q).T, actuator_efforts)

    def actuator_efforts(self, q, output_torques):
        """τ = J_mᵀ Pᵀ τ_j: the actuator efforts [N or N·m] that produce output torques τ_j (inverse of eq. 23)."""
        return self.output_jacobian(q).T @ output_torques
