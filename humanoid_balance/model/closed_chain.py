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
from functools import cached_property
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from humanoid_balance.model.errors import ClosureError, SingularConfigurationError
from humanoid_balance.model.kinematics import FramePlacements
from humanoid_balance.model.loop_lu import GroupedColumns, LoopLU

__all__ = ["ClosedChain", "Linearization", "PassiveSolution", "loop_errors", "error_twist_map", "relative_support"]

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


NEGATIVE_SKEW = -np.array([[[0, 0, 0], [0, 0, -1], [0, 1, 0]],
                           [[0, 0, 1], [0, 0, 0], [-1, 0, 0]],
                           [[0, -1, 0], [1, 0, 0], [0, 0, 0]]], dtype=float).reshape(3, 9)
"""p @ NEGATIVE_SKEW, reshaped (3, 3), is −[p]× for each row p: one product for every loop."""


def loop_errors(R_T, p, rotations):
    """Full 6-D errors [R_aᵀ(p_b − p_a); log3(R_aᵀ R_b)] of L loops (L, 6) [m, rad] (eq. 2 before the choice of
    axes) and the first ``rotations`` loops' R_ab, from their frames' world rotations transposed ``R_T`` (2 L, 3, 3)
    and positions ``p`` (2 L, 3), every frame_a then every frame_b; the rotation rows of the other loops stay 0.
    The few rotation loops go one by one through pinocchio's log3: cheaper than numpy's per-call overhead on a
    handful of 3×3 matrices."""
    L = len(p) // 2
    full = np.zeros((L, 6))
    full[:, :3] = (R_T[:L] @ (p[L:] - p[:L])[:, :, None])[:, :, 0]
    R_ab = R_T[:rotations] @ R_T[L:L + rotations].transpose(0, 2, 1)
    if rotations:
        full[:rotations, 3:] = [pin.log3(rotation) for rotation in R_ab]
    return full, R_ab


def error_twist_map(R_T, p, full, R_ab, W):
    """Fill ``W`` (L, 6, 6): each loop's error rate ė = W [v; ω] for the world twist [v; ω] (pinocchio's WORLD joint
    Jacobian columns, at the world origin) of a joint that moves frame_b relative to frame_a (eq. 51): the
    translation rows R_aᵀ(v − p_b × ω), the rotation rows the exact derivative of the log map Jlog3(R_ab) R_bᵀ ω for
    the loops of ``R_ab`` (on the constraint manifold R_bᵀ ω = R_aᵀ ω, and away from it Newton keeps converging
    quadratically), R_aᵀ ω for the others. Returns ``W``."""
    L, k = len(W), len(R_ab)
    R_aT = R_T[:L]
    W[:, :3, :3] = R_aT
    W[:, :3, 3:] = R_aT @ (p[L:] @ NEGATIVE_SKEW).reshape(L, 3, 3)
    W[:, 3:, 3:] = R_aT
    W[:k, 3:, 3:] = R_T[L:L + k]  # R_bᵀ
    if np.abs(full[:k, 3:]).max(initial=0.0) >= 1e-8:  # off the manifold: Jlog3(R_ab) R_bᵀ
        for loop, R_ab_loop in enumerate(R_ab):  # (Jlog3 = I + O(θ): below 1e-8 rad the identity is exact
            W[loop, 3:, 3:] = pin.Jlog3(R_ab_loop) @ W[loop, 3:, 3:]  # to the Jacobian's own precision)
    return W


def relative_support(model, frame_pairs):
    """(L, nv): +1 on the joints that move frame_b only, −1 on those that move frame_a only, of each (frame_a,
    frame_b) id pair; joints moving both (common ancestors, the floating base) cancel in the relative motion
    (eq. 51)."""
    support = np.zeros((len(frame_pairs), model.nv))
    for row, (fa, fb) in enumerate(frame_pairs):
        for sign, frame in ((-1.0, fa), (1.0, fb)):
            for joint in model.supports[model.frames[frame].parentJoint][1:]:
                j = model.joints[joint]
                support[row, j.idx_v:j.idx_v + j.nv] += sign
    return support


class Linearization:
    """The loop equations at one configuration and the maps that follow from them (eqs. 2–7, 21–23).

    Each factorisation and map is computed the first time it is asked for and kept, so every user of one
    configuration shares them: the LU of J_l,u (passive velocities, eq. 7) and the LU of J_l,s, the columns of
    every joint that is not an output (the joint rates that realise output rates, eq. 22).
    """

    def __init__(self, chain, residual, J_l):
        self.chain = chain
        self.residual = residual  # e_l(θ)   (m,)
        self.J_l = J_l            # ∂e/∂v    (m, nv) — base columns are zero: loops are internal

    @cached_property
    def J_lu(self):
        """Passive columns of J_l (m, m)."""
        return self.J_l[:, self.chain.robot.passive_v]

    @cached_property
    def J_la(self):
        """Actuated columns of J_l (m, n_a)."""
        return self.J_l[:, self.chain.robot.actuated_v]

    @cached_property
    def _J_lu_factors(self):
        return self.chain.passive_lu.factor(self.J_l)

    @cached_property
    def _J_ls_factors(self):
        return self.chain.solved_lu.factor(self.J_l)

    def solve_passive(self, rhs):
        """J_l,u⁻¹ rhs: passive joint quantities from loop-row ones."""
        return self.chain.passive_lu.solve(self._J_lu_factors, rhs)

    def solve_solved(self, rhs):
        """J_l,s⁻¹ rhs: quantities of the joints that are not outputs from loop-row ones."""
        return self.chain.solved_lu.solve(self._J_ls_factors, rhs)

    @cached_property
    def J_m(self):
        """J_m = −J_l,u⁻¹ J_l,a (eq. 7): passive velocities from actuated ones (m, n_a)."""
        return -self.chain.actuated_columns.solve(self._J_lu_factors, self.J_l)[0]

    @cached_property
    def joint_velocity_map(self):
        """G_j = ∂θ/∂θ_a (n × n_a): J_m on the passive rows, identity on the actuated rows."""
        chain = self.chain
        G = np.zeros((chain.n_joints, len(chain.actuated_joints)))
        G[chain.passive_joints] = self.J_m
        G[chain.actuated_joints, np.arange(len(chain.actuated_joints))] = 1.0
        return G

    @cached_property
    def _solved_columns(self):
        """J_l,s⁻¹ J_l,o and J_l,s⁻¹ e_l: the output sensitivities and the outputs-fixed Newton step in one
        back-substitution."""
        return self.chain.output_columns.solve(self._J_ls_factors, self.J_l, self.residual)

    @cached_property
    def output_map(self):
        """∂θ/∂q_o (n × n_out): every joint's rate from the output rates, loops closed (eqs. 7 and 22: on the
        actuated rows this is (P J_m)⁻¹). The joints that are not outputs follow from J_l,s θ̇_s = −J_l,o q̇_o."""
        chain = self.chain
        T = np.zeros((chain.n_joints, len(chain.output_joints)))
        T[chain.output_joints, np.arange(len(chain.output_joints))] = 1.0
        T[chain.solved_joints] = -self._solved_columns[0]
        return T

    @cached_property
    def closing_step(self):
        """Δθ_s = −J_l,s⁻¹ e_l: the Newton step on the joints that are not outputs that closes the loops with the
        outputs held (n − n_out,)."""
        return -self._solved_columns[1]


class PassiveSolution(NamedTuple):
    """Result of closing the loops for given actuated positions."""

    q: np.ndarray             # configuration with θ_u solved
    residual_norm: float      # ‖e_l‖ at the solution
    iterations: int           # Newton iterations
    condition_number: float   # cond₂(J_l,u) at the solution


class ClosedChain:
    """Loop-closure equations of a :class:`~humanoid_balance.model.robot.RobotModel`.

    Owns a pinocchio ``Data``; not thread-safe. Base columns of every Jacobian are kept so the same
    arrays serve fixed- and floating-base models. The last linearization is kept: asking again at the same
    configuration returns it, with whatever it has already factorised.
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
        self.relative_support = relative_support(model, list(zip(self.frame_a_ids, self.frame_b_ids)))
        self.rows = np.concatenate([6 * i + np.array(loop.axis_indices, dtype=int)
                                    for i, loop in enumerate(loops)]) if loops else np.zeros(0, dtype=int)
        self.row_support = self.relative_support[self.rows // 6]  # (m, nv): the mask of each row's loop
        self.loop_slices = {}
        start = 0
        for loop in loops:
            self.loop_slices[loop.name] = slice(start, start + len(loop.axes))
            start += len(loop.axes)
        self.m = start
        b = robot.base_nv
        self.n_joints = robot.nv - b
        outputs = set(robot.output_v)
        self.solved_v = np.array([v for v in range(b, robot.nv) if v not in outputs], dtype=int)
        self.base_and_actuated_v = np.concatenate([np.arange(b), robot.actuated_v]).astype(int)  # ν_a's columns
        self.passive_joints, self.actuated_joints = robot.passive_v - b, robot.actuated_v - b
        self.output_joints, self.solved_joints = robot.output_v - b, self.solved_v - b
        self.passive_lu = LoopLU(self.row_support, robot.passive_v, "J_l,u")
        self.solved_lu = LoopLU(self.row_support, self.solved_v, "J_l,s (the outputs as coordinates)")
        self.actuated_columns = GroupedColumns(self.passive_lu, self.row_support, robot.actuated_v)
        self.output_columns = GroupedColumns(self.solved_lu, self.row_support, robot.output_v)
        self._linearized = (None, None)  # (q, Linearization) of the last linearize
        # Inside linearize the loops that constrain a rotation come first, so that slices, not index lists, pick
        # them out; _error_rows takes the constrained rows back in the order of the loops.
        order = sorted(range(len(loops)), key=lambda i: max(loops[i].axis_indices) < 3)
        self._rotation_count = sum(max(loop.axis_indices) >= 3 for loop in loops)
        self._frames = FramePlacements(self.data, [self.frame_a_ids[i] for i in order]
                                       + [self.frame_b_ids[i] for i in order])
        self._error_rows = np.argsort(order)[self.rows // 6] * 6 + self.rows % 6
        self._W = np.zeros((len(loops), 6, 6))  # per loop: error rows ← world twist [v; ω] (filled per linearize)
        self._other_frames = None  # the FramePlacements of a Data given to linearize as ``computed``

    # -- kinematics ---------------------------------------------------------------------------------
    def _loop_errors(self, R_T, p):
        """:func:`loop_errors` of every loop, the rotation loops first."""
        return loop_errors(R_T, p, self._rotation_count)

    def residual(self, q):
        """e_l(θ) (eq. 2): stacked constrained components of the pose of frame_b in frame_a [m, rad]."""
        if not self.loops:
            return np.zeros(0)
        pin.framesForwardKinematics(self.model, self.data, q)
        return self._loop_errors(*self._frames.read())[0].reshape(-1).take(self._error_rows)

    def loop_residual_norms(self, residual):
        """‖e_l‖ of each loop, by name — for diagnostics and error messages."""
        return {name: float(np.linalg.norm(residual[s])) for name, s in self.loop_slices.items()}

    def linearize(self, q, kinematics=False, computed=None):
        """Residual and constraint Jacobian J_l = ∂e_l/∂θ at ``q`` (eqs. 2–5, appendix A eq. 51); with
        ``kinematics``, the chain's ``data`` is left holding the world joint Jacobians and every frame placement at
        ``q`` for the caller to read (a kept linearization does not otherwise touch it). ``computed``: another Data
        of the model that holds them at ``q`` already (a WholeBodyKinematics' pass), read instead of computing them
        again in the chain's own.

        The relative twist of frame_b w.r.t. frame_a uses the joints that move one frame but not the
        other (eq. 51); with the world-frame joint Jacobians J (6, nv) of pinocchio it is
        J_rel = J ⊙ s_l, s_l = ±1 on those joints. The translation rows are R_aᵀ(v − p_b × ω) of J_rel.
        The rotation rows use the exact derivative of the log map, Jlog3(R_ab)·R_bᵀ(ω_b − ω_a); on the
        constraint manifold (R_ab = I) this is eq. 51's R_aᵀ(ω_b − ω_a), and away from it Newton keeps
        converging quadratically. All rows come out of one product: J_l = (W J) ⊙ s, W (m, 6).
        """
        last_q, last = self._linearized
        kept = last_q is not None and last_q.tobytes() == np.asarray(q, dtype=float).tobytes()
        if kinematics or (self.loops and not kept and computed is None):  # world joint Jacobians, frame placements
            pin.computeJointJacobians(self.model, self.data, q)
            pin.updateFramePlacements(self.model, self.data)
        if kept:
            return last
        if not self.loops:
            linearization = Linearization(self, np.zeros(0), np.zeros((0, self.model.nv)))
        else:
            data, frames = (self.data, self._frames) if computed is None else self._computed(computed)
            R_T, p = frames.read()  # every frame_a, then every frame_b, the rotation loops first
            full, R_ab = self._loop_errors(R_T, p)
            W = error_twist_map(R_T, p, full, R_ab, self._W)
            J_l = W.reshape(-1, 6).take(self._error_rows, axis=0) @ data.J
            J_l *= self.row_support  # (m, nv)
            linearization = Linearization(self, full.reshape(-1).take(self._error_rows), J_l)
        self._linearized = (np.array(q, dtype=float), linearization)
        return linearization

    def _computed(self, data):
        """``data`` and the FramePlacements of the loops' frames in it (made once per Data)."""
        if self._other_frames is None or self._other_frames.data is not data:
            self._other_frames = FramePlacements(data, self._frames.frame_ids)
        return data, self._other_frames

    def constraint_jacobian(self, q):
        """J_l(θ) (m, nv)."""
        return self.linearize(q).J_l

    def mapping_jacobian(self, q, linearization=None):
        """J_m = −J_l,u⁻¹ J_l,a (eq. 7): passive velocities from actuated ones, (m, n_a)."""
        return (linearization or self.linearize(q)).J_m

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
                step = -lin.solve_passive(lin.residual)
            except SingularConfigurationError:
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
        condition = float(np.linalg.cond(lin.J_lu)) if self.m else 1.0
        if not condition <= max_condition:
            raise SingularConfigurationError(f"closed-chain singularity: cond(J_l,u) = {condition:.3e} "
                                             f"exceeds {max_condition:.1e}", condition, max_condition)
        return PassiveSolution(q, float(error), iterations, condition)

    def condition_number(self, q):
        """cond₂(J_l,u): the distance to a closed-chain singularity (∞ at a singularity)."""
        return float(np.linalg.cond(self.linearize(q).J_lu)) if self.m else 1.0

    # -- actuated ↔ full and output maps (eqs. 21–23) -----------------------------------------------
    def joint_velocity_map(self, q, linearization=None):
        """G_j = ∂θ/∂θ_a (n × n_a): J_m on the passive rows, identity on the actuated rows."""
        return (linearization or self.linearize(q)).joint_velocity_map

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
        return self.joint_velocity_map(q, linearization)[self.output_joints]

    def actuated_output_map(self, q, linearization=None):
        """(P·J_m)⁻¹ (n_a, n_out): actuator velocities from output velocities (eq. 22)."""
        return (linearization or self.linearize(q)).output_map[self.actuated_joints]

    def output_velocity_map(self, q, linearization=None):
        """T = ∂ν/∂ν_o ((nv) × (base_nv + n_out)): full velocity from base and serial-equivalent output rates,
        G_j (P J_m)⁻¹ on the joints (eqs. 7, 22). A tree Jacobian J becomes J T in output coordinates."""
        robot = self.robot
        b = robot.base_nv
        T = np.zeros((robot.nv, b + len(robot.output_v)))
        T[:b, :b] = np.eye(b)
        T[b:, b:] = (linearization or self.linearize(q)).output_map
        return T

    def actuator_velocities(self, q, output_velocities):
        """θ̇_a = (P J_m)⁻¹ q̇_d (eq. 22) [rad/s or m/s]."""
        return self.actuated_output_map(q) @ output_velocities

    def output_torques(self, q, actuator_efforts):
        """τ_j = (J_mᵀ Pᵀ)⁻¹ τ (eq. 23): the output-joint torques equivalent to actuator efforts [N·m]."""
        return self.actuated_output_map(q).T @ actuator_efforts

    def actuator_efforts(self, q, output_torques):
        """τ = J_mᵀ Pᵀ τ_j: the actuator efforts [N or N·m] that produce output torques τ_j (inverse of eq. 23)."""
        return self.output_jacobian(q).T @ output_torques
