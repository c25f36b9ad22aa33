"""Momentum-based balance (Garofalo, Henze, Englsberger, Ott, section 5, eqs. 36–39).

1. Desired CoM wrench (eq. 39) with momentum damping (eq. 38), at the CoM with world axes:
       w_d = [m g e_z − K_P (c − c_d);  R_d τ_P(δ, ε)] − diag(K_D, D) h,   τ_P = −2(δ K_R ε + ε × K_R ε)
   where (δ, ε) is the unit quaternion of R_Δ = R_dᵀ R (base orientation error) and h = [p; l] the centroidal
   momentum. By eq. 37, Σ J̄_ibᵀ w_i = Λ_h Σ_i (w_i at the CoM), so eq. 38 asks the contact wrenches to sum,
   at the CoM, to w_d.
2. Contact-wrench distribution as a QP, built apart from its solution: min ‖Σ G_i w_i − w_d‖²_W + λ‖w‖² subject to f_z ≥
   f_min, the friction pyramid |f_x|, |f_y| ≤ μ f_z, the CoP inside the sole rectangle (less ``stance_cop_margin`` of
   its length and width on each side for a foot alone, ``cop_margin`` for feet sharing the load) and |τ_z| ≤ μ_τ f_z,
   every w_i being a sole wrench in its sole frame. Solved by OSQP, warm-started. Its solution's internal forces between
   the feet (N w, N = I − G⁺G, G = [G_1 … G_k]), which do nothing for the CoM, are then taken out as far as the
   constraints allow: w becomes the least wrenches with its sum G w within the constraints, a QP of its own solved
   exactly by DAQP's active set (OSQP's next solve starts from its own iterate, which converges faster than from that
   point). Where the least wrenches of w_d meet the constraints, that is where the solution ends, so they are taken
   without calling OSQP. λ (1e-9) only keeps the QP strictly convex; without the step the internal forces stayed
   wherever the warm start had left them, up to the friction pyramid's edge (TALOS's feet squeezed sideways at μ f_z
   after a backward push, slid and rolled inwards). A foot that carries the robot alone keeps its CoP off the edges, so
   that it does not tip over one when the wrench saturates there: the joint impedance, the swing leg's reaction and the
   model's errors add their own ankle torque on top (TALOS, on its stance foot in a backward recovery step, rolled over
   its heel with the CoP on the edge and fell). Feet that share the load keep one too, for the same reason (without one,
   pushed at 90 % of what the feet allow, kangaroo_like's soles rolled 5–9°). A sole sharing the load that tilts from
   the floor all the same, rolling over an edge, has that edge's CoP bound moved inwards by a gain per radian of tilt
   beyond a deadband (``tipping``; at most TIPPING_CUT of the length or width its margins leave): its ankle torque eases
   and lets it back down, the other foot taking the load, instead of holding it on the edge at the bound (TALOS pushed
   backwards at 90 % of what its feet allow rolled 9.8°). A foot alone keeps its whole sole: cut there too,
   kangaroo_like's recovery from a 30 N·s backward push took three steps and fell.
3. Joint torques τ = −Σ J̄_iqᵀ w_i = −Λ_q Q M⁻¹ Σ J_iᵀ w_i (J̄_iq = J_i Q^{+M}); gravity needs no separate
   term because A_Q⁻ᵀ g has zero joint rows (eq. 26) — the gravity compensation travels in w (m g e_z). Joints
   that move (embedded limb motions) add their decoupled inverse dynamics: τ = Λ_q (q̈_d + Q M⁻¹ (h − Σ J_iᵀ w_i)),
   the joint rows of eq. 15's decoupled equations of motion (Λ_q q̈ + μ_q = τ + Σ J̄_iqᵀ w_i).
4. Limbs that move carry centroidal momentum h_d = A ν_d of their own: eq. 38's damping acts about it, and its rate
   ḣ_d is fed forward, so that a commanded motion is not damped as a disturbance.
Units: N, N·m, m, kg.
"""
from enum import StrEnum
from typing import NamedTuple

import daqp
import numpy as np
import osqp
import pinocchio as pin
from scipy import sparse
from scipy.linalg import lapack

__all__ = ["QpStatus", "MomentumGains", "desired_com_wrench", "contact_wrench_map", "WrenchQP", "WrenchDistribution",
           "DistributionResult", "joint_torques"]

GRAVITY = 9.81
DAQP_INFINITY = 1e30  # DAQP's bound for "none"
DAQP_EQUALITY = 5  # DAQP's sense of an equality row (active, immutable)
TIPPING_CUT = 0.45  # a tipping sole's CoP bound moves in at most this fraction of the length or width its margins leave


class MomentumGains(NamedTuple):
    K_P: np.ndarray  # CoM stiffness (3, 3) [N/m]
    K_D: np.ndarray  # linear-momentum damping (3, 3) [1/s]
    K_R: np.ndarray  # orientation spring (3, 3) [N·m]
    D: np.ndarray    # angular-momentum damping (3, 3) [1/s]


def desired_com_wrench(mass, com, com_desired, R_base, R_desired, momentum, gains, com_velocity_desired=None,
                       com_acceleration_desired=None, angular_momentum_desired=None,
                       angular_momentum_rate_desired=None):
    """w_d of eqs. 38–39 [N, N·m] at the CoM, world axes; tracking a moving reference c_d(t), the linear rows become
    m (g e_z + c̈_d) − K_P (c − c_d) − K_D (p − m ċ_d) (eq. 39's spring and eq. 38's damping about the reference's
    momentum, its acceleration fed forward); with limbs in motion the angular rows become
    R_d τ_P − D (l − l_d) + l̇_d, l_d the angular momentum the motion carries [kg m²/s] and l̇_d its rate [N·m]."""
    quaternion = pin.Quaternion(R_desired.T @ R_base)  # R_Δ
    delta, epsilon = quaternion.w, quaternion.vec()
    if delta < 0.0:  # the same rotation, on the short way round
        delta, epsilon = -delta, -epsilon
    tau_P = -2.0 * (delta * gains.K_R @ epsilon + np.cross(epsilon, gains.K_R @ epsilon))
    force = mass * GRAVITY * np.array([0.0, 0.0, 1.0]) - gains.K_P @ (np.asarray(com) - com_desired)
    linear = momentum[:3]
    if com_velocity_desired is not None:
        linear = linear - mass * np.asarray(com_velocity_desired)
    if com_acceleration_desired is not None:
        force = force + mass * np.asarray(com_acceleration_desired)
    angular = momentum[3:] if angular_momentum_desired is None else momentum[3:] - angular_momentum_desired
    torque = R_desired @ tau_P - gains.D @ angular
    if angular_momentum_rate_desired is not None:
        torque = torque + angular_momentum_rate_desired
    return np.concatenate([force - gains.K_D @ linear, torque])


def contact_wrench_map(sole_placement, com):
    """G (6, 6): a sole wrench [f; τ] (sole frame, about its origin) → the same wrench at the CoM, world axes."""
    R, p = sole_placement.rotation, sole_placement.translation
    G = np.zeros((6, 6))
    G[:3, :3] = R
    G[3:, 3:] = R
    G[3:, :3] = pin.skew(p - np.asarray(com)) @ R
    return G


def _contact_constraints(rectangle, mu, torsion):
    """Rows C w ≤ 0 for one sole wrench w = [f_x f_y f_z τ_x τ_y τ_z] (10, 6), and the f_z row."""
    rows = [
        [1, 0, -mu, 0, 0, 0], [-1, 0, -mu, 0, 0, 0],                          # |f_x| ≤ μ f_z
        [0, 1, -mu, 0, 0, 0], [0, -1, -mu, 0, 0, 0],                          # |f_y| ≤ μ f_z
        [0, 0, -rectangle.x_max, 0, -1, 0], [0, 0, rectangle.x_min, 0, 1, 0],  # x_min ≤ −τ_y/f_z ≤ x_max
        [0, 0, -rectangle.y_max, 1, 0, 0], [0, 0, rectangle.y_min, -1, 0, 0],  # y_min ≤ τ_x/f_z ≤ y_max
        [0, 0, -torsion, 0, 0, 1], [0, 0, -torsion, 0, 0, -1],                 # |τ_z| ≤ μ_τ f_z
    ]
    return np.array(rows, dtype=float)


class WrenchQP(NamedTuple):
    """min ½ xᵀ P x + qᵀ x  s.t.  l ≤ A x ≤ u, with x the stacked sole wrenches."""

    P: np.ndarray
    q: np.ndarray
    A: np.ndarray
    l: np.ndarray
    u: np.ndarray


class QpStatus(StrEnum):
    """How the wrench distribution was found: by the QP, or by a fallback when it failed."""

    SOLVED = "solved"
    NO_CONTACT = "no contact"                   # nothing to distribute over: every wrench zero
    LAST_FEASIBLE = "fallback: last feasible"
    GRAVITY_ONLY = "fallback: gravity only"

    @property
    def fallback(self):
        return self in (QpStatus.LAST_FEASIBLE, QpStatus.GRAVITY_ONLY)


class DistributionResult(NamedTuple):
    wrenches: np.ndarray  # (contacts, 6) sole wrenches, sole frames [N, N·m]
    status: QpStatus
    residual: np.ndarray  # Σ G_i w_i − w_d (6,)
    solve_time: float     # OSQP solve time [s] (0: not called)
    iterations: int = 0   # OSQP's ADMM iterations (0: the least wrenches met the constraints, OSQP not called)


class WrenchDistribution:
    """The QP of eq. 38 for a fixed set of sole rectangles, rebuilt when the contact set changes."""

    def __init__(self, rectangles, mu=0.7, f_min=10.0, regularization=1e-9, weights=None, torsion=None,
                 stance_cop_margin=0.0, cop_margin=0.0, torque_length=None, tolerance=1e-10, tipping=(0.0, 0.0)):
        self.rectangles = list(rectangles)
        self.tipping_gain, self.tipping_deadband = tipping  # [m/rad], [rad]
        self.torque_length = torque_length
        self.tolerance = tolerance  # OSQP's absolute and relative tolerance
        self.stance_rectangles = [rectangle.inset(stance_cop_margin) for rectangle in self.rectangles]
        self.shared_rectangles = [rectangle.inset(cop_margin) for rectangle in self.rectangles]
        self.mu, self.f_min, self.regularization = mu, f_min, regularization
        self.weights = np.ones(6) if weights is None else np.asarray(weights, dtype=float)
        self.torsion = [mu * min(r.x_max - r.x_min, r.y_max - r.y_min) / 4 if torsion is None else torsion
                        for r in self.rectangles]
        self.solver = None
        self._regularizers = {}  # 6 k → λ I (6 k, 6 k)
        self._lever_scales = {}  # 6 k → S^-1/2 (6 k,), the lever rule's
        self._internal_qps = {}  # 6 k → (S, DAQP's senses of its rows: 6 equalities, then the constraints)
        self.active = None
        self.last_feasible = None

    def objective(self, G, w_d):
        """P, q of ‖Σ G_i w_i − w_d‖²_W + λ‖w‖² over the active contacts, G = [G_1 … G_k] (6, 6k)."""
        GtW = G.T * self.weights
        n = G.shape[1]
        if n not in self._regularizers:
            self._regularizers[n] = self.regularization * np.eye(n)  # λ I, once per number of contacts
        return 2.0 * (GtW @ G + self._regularizers[n]), -2.0 * GtW @ w_d

    def build(self, G_list, w_d, active):
        """The QP for the active contacts (indices into the rectangles) — inspectable, solver-free."""
        P, q = self.objective(_stacked(G_list, active), w_d)
        n = P.shape[0]
        rectangles = self._cop_rectangles(active)
        blocks = [_contact_constraints(rectangles[i], self.mu, self.torsion[i]) for i in active]
        A = np.zeros((11 * len(active), n))
        for k, block in enumerate(blocks):
            A[11 * k:11 * k + 10, 6 * k:6 * k + 6] = block
            A[11 * k + 10, 6 * k + 2] = 1.0  # f_z row
        l = np.tile(np.r_[np.full(10, -np.inf), self.f_min], len(active))
        u = np.tile(np.r_[np.zeros(10), np.inf], len(active))
        return WrenchQP(P, q, A, l, u)

    def solve(self, G_list, w_d, active, mass, edge_tilts=None):
        """Distribute ``w_d`` over the active contacts; fall back (and say so) when OSQP fails. ``edge_tilts``: per
        foot, how its sole leans towards its edges (control.floor.Floor.edge_tilts; None: flat).

        The least wrenches of the sum ``w_d`` (:meth:`_least_wrenches`) are where the QP's solution ends after its
        internal forces are taken out whenever they meet the constraints (from any feasible x the straight path to
        them stays feasible), so then they are the distribution and OSQP is not called (iterations 0): standing and
        in moderate motions, most ticks."""
        active = tuple(active)
        wrenches = np.zeros((len(self.rectangles), 6))
        if not active:
            return DistributionResult(wrenches, QpStatus.NO_CONTACT, -w_d, 0.0)
        G = _stacked(G_list, active)
        built = active != self.active
        if built:
            qp = self.build(G_list, w_d, active)
            self.solver = osqp.OSQP()
            upper = sparse.csc_matrix(np.triu(np.ones_like(qp.P)))  # dense upper triangle, CSC order
            self.upper_index = (upper.indices, np.repeat(np.arange(upper.shape[1]), np.diff(upper.indptr)))
            P_upper = sparse.csc_matrix((qp.P[self.upper_index], upper.indices, upper.indptr), shape=qp.P.shape)
            A = self._constraint_matrix(qp.A, len(active))
            self.solver.setup(P_upper, qp.q, A, qp.l, qp.u, verbose=False,
                              eps_abs=self.tolerance, eps_rel=self.tolerance, max_iter=10000, polishing=False,
                              warm_starting=True, check_termination=5)  # warm-started, a tick converges in ~26
                              # iterations: stop at 30
            self.active, self.last_feasible, self.constraints = active, None, (qp.A, qp.l, qp.u)
            self.bounds = qp.A[self.bound_cells].tolist()  # as built: the rectangles' own
            self.A_data = A.data
        if self.tipping_gain > 0.0:
            self._tip(active, edge_tilts)
        least = self._least_wrenches(G, w_d)
        A, lower, upper = self.constraints
        at = A @ least
        if (at >= lower).all() and (at <= upper).all():  # (NaN fails both: the solver's fallbacks then)
            self.solver.warm_start(x=least)
            self.last_feasible = least
            return self._result(wrenches, active, least, QpStatus.SOLVED, G, w_d, 0.0, 0)
        if not built:
            P, q = self.objective(G, w_d)
            self.solver.update(Px=P[self.upper_index], q=q)
        result = self.solver.solve(raise_error=False)
        solve_time = float(result.info.solve_time)
        if result.info.status in ("solved", "solved inaccurate") and np.isfinite(result.x).all():
            x = self._without_internal_forces(result.x, G)
            status = QpStatus.SOLVED
            self.last_feasible = x.copy()
        elif self.last_feasible is not None:
            x, status = self.last_feasible, QpStatus.LAST_FEASIBLE
        else:
            x = np.zeros(6 * len(active))
            x[2::6] = mass * GRAVITY / len(active)
            status = QpStatus.GRAVITY_ONLY
        return self._result(wrenches, active, x, status, G, w_d, solve_time, int(result.info.iter))

    @staticmethod
    def _result(wrenches, active, x, status, G, w_d, solve_time, iterations):
        """The DistributionResult of the stacked wrenches ``x`` of the ``active`` contacts."""
        for k, i in enumerate(active):
            wrenches[i] = x[6 * k:6 * k + 6]
        return DistributionResult(wrenches, status, G @ x - w_d, solve_time, iterations)

    def _cop_rectangles(self, active):
        """Per foot, the rectangle its CoP keeps to for the contact set ``active``: less ``cop_margin`` when the feet
        share the load, less ``stance_cop_margin`` for a foot alone."""
        return self.shared_rectangles if len(active) > 1 else self.stance_rectangles

    def _constraint_matrix(self, A, contacts):
        """A in CSC with the CoP bounds' coefficients (each sole's f_z column, rows 4–7) stored even where zero, and
        their places in its data (``bound_index``), for :meth:`_tip` to update."""
        structure = A != 0.0
        rows = (11 * np.arange(contacts)[:, None] + np.arange(4, 8)).ravel()
        columns = np.repeat(6 * np.arange(contacts) + 2, 4)
        structure[rows, columns] = True
        A_csc = sparse.csc_matrix(structure.astype(float))
        A_csc.data = A.T[structure.T]  # column by column, rows ascending: CSC's order
        self.bound_cells = (rows, columns)
        starts, indices = A_csc.indptr, A_csc.indices
        self.bound_index = np.array([starts[c] + np.searchsorted(indices[starts[c]:starts[c + 1]], r)
                                     for r, c in zip(rows, columns)])
        return A_csc

    def _cop_bounds(self, active, edge_tilts):
        """The CoP rows' f_z coefficients (−x_max, x_min, −y_max, y_min per active sole, stacked), each sole's
        rectangle less the cut its tilt asks on the edge it rolls over when the feet share the load (see the
        module)."""
        rectangles = self._cop_rectangles(active)
        gain, deadband = self.tipping_gain, self.tipping_deadband
        sharing = edge_tilts is not None and len(active) > 1  # a foot alone keeps its whole sole
        bounds = []
        for i in active:
            x_min, x_max, y_min, y_max = rectangles[i]
            if sharing and edge_tilts[i] is not None:
                towards_x, towards_y = edge_tilts[i]
                cut_x = min(gain * max(0.0, abs(towards_x) - deadband), TIPPING_CUT * (x_max - x_min))
                cut_y = min(gain * max(0.0, abs(towards_y) - deadband), TIPPING_CUT * (y_max - y_min))
                x_min, x_max = (x_min + cut_x, x_max) if towards_x > 0.0 else (x_min, x_max - cut_x)
                y_min, y_max = (y_min + cut_y, y_max) if towards_y > 0.0 else (y_min, y_max - cut_y)
            bounds += (-x_max, x_min, -y_max, y_min)
        return bounds

    def _tip(self, active, edge_tilts):
        """The CoP bounds of the tick's tilts into the QP (OSQP's A and the copy the internal forces' step reads),
        when they changed."""
        bounds = self._cop_bounds(active, edge_tilts)
        if bounds != self.bounds:
            self.bounds = bounds
            self.constraints[0][self.bound_cells] = bounds
            self.A_data[self.bound_index] = bounds
            self.solver.update(Ax=self.A_data)

    def _least_wrenches(self, G, total):
        """The least wrenches (6 k,) whose sum at the CoM is ``total`` (6,): G⁺ total, the least in ‖w‖²; with a
        ``torque_length`` ℓ, the least in ‖f‖² + ‖τ/ℓ‖², S⁻¹Gᵀ(G S⁻¹Gᵀ)⁻¹ total with S = diag(1, 1, 1, ℓ⁻², ℓ⁻², ℓ⁻²)
        per sole: an ankle torque costs as much as a force at ℓ, so the feet's loads follow the ZMP (the lever rule)
        and their CoPs stay near their centres (Caron et al. 2019's ankle-torque minimisation; a foot on position
        drives is pushed onto an edge by a CoP asked there)."""
        if self.torque_length is None:
            *_, projected, info = lapack.dgesv(G @ G.T, total)  # LAPACK's solve without np.linalg's wrapper (~3 µs)
            least = G.T @ projected
        else:
            scale = self._lever_scale(G.shape[1])
            G_scaled = G * scale
            *_, projected, info = lapack.dgesv(G_scaled @ G_scaled.T, total)
            least = scale * (G_scaled.T @ projected)
        if info != 0:
            raise np.linalg.LinAlgError(f"the contact wrench map G Gᵀ is singular (dgesv info {info})")
        return least

    def _without_internal_forces(self, x, G):
        """The least wrenches (:meth:`_least_wrenches`' norm) of the solution's sum G x within the constraints:
        argmin ‖S^1/2 w‖² s.t. G w = G x, l ≤ A w ≤ u, solved exactly by DAQP's active set: as close to w_d as ``x``,
        with no internal forces the constraints do not ask for; ``x`` itself if DAQP fails."""
        A, lower, upper = self.constraints
        qp = self._internal_qps.get(G.shape[1])  # once per number of contacts
        if qp is None:
            qp = self._internal_qps[G.shape[1]] = (np.diag(self._lever_scale(G.shape[1]) ** -2.0), np.r_[
                np.full(6, DAQP_EQUALITY), np.zeros(len(lower))].astype(np.intc))
        hessian, senses = qp
        total = G @ x
        least, _, flag, _ = daqp.solve(hessian, np.zeros(len(x)), np.vstack([G, A]),
                                       np.r_[total, np.minimum(upper, DAQP_INFINITY)],
                                       np.r_[total, np.maximum(lower, -DAQP_INFINITY)], senses)
        return least if flag == 1 else x

    def _lever_scale(self, columns):
        """S^-1/2 (``columns`` = 6 k,) of the least wrenches' norm ‖f‖² + ‖τ/ℓ‖², ℓ the ``torque_length`` (1 m
        without one), once per number of contacts."""
        scale = self._lever_scales.get(columns)
        if scale is None:
            ell = 1.0 if self.torque_length is None else self.torque_length
            scale = self._lever_scales[columns] = np.tile((1.0, 1.0, 1.0, ell, ell, ell), columns // 6)
        return scale


def _stacked(G_list, active):
    """[G_i …] of the active contacts side by side (6, 6k)."""
    return np.hstack([G_list[i] for i in active])


def joint_torques(M, J_contacts, wrenches, base_nv=6, accelerations=None, bias=None):
    """τ = Λ_q (q̈_d + Q M⁻¹ (h − Σ J_iᵀ w_i)) (Garofalo, section 5 and eq. 15's joint rows), Λ_q = (Q M⁻¹ Qᵀ)⁻¹
    (eq. 17): without motion, τ = −Σ J̄_iqᵀ w_i = −Λ_q Q M⁻¹ Σ J_iᵀ w_i.

    Args:
        M: (projected) mass matrix (nb + n, nb + n) [kg, kg·m, kg·m²].
        J_contacts: per contact the 6-D LOCAL sole Jacobian in the same coordinates (6, nb + n).
        wrenches: sole wrenches (contacts, 6) exerted by the ground on the robot [N, N·m].
        accelerations: the joints' desired accelerations q̈_d (n,) [rad/s², m/s²]; None: none.
        bias: h, the Coriolis, centrifugal and gravity forces in the same coordinates (nb + n,); None: left out
            (its gravity part has no joint rows in the decoupled coordinates: eq. 26).
    """
    generalized = -sum(J.T @ w for J, w in zip(J_contacts, wrenches))
    if bias is not None:
        generalized = generalized + bias
    M_inv_Qt = np.linalg.solve(M, np.eye(M.shape[0])[:, base_nv:])   # M⁻¹ Qᵀ
    Lambda_q = np.linalg.inv(M_inv_Qt[base_nv:])                      # (Q M⁻¹ Qᵀ)⁻¹
    joint = M_inv_Qt.T @ generalized
    if accelerations is not None:
        joint = joint + accelerations
    return Lambda_q @ joint
