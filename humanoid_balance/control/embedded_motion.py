"""CoM Jacobian with embedded motions (Choi & Kim section 3, eqs. 5–20; Kim, Choi & Kim, motion-embedded
COG Jacobian, eqs. 15–20).

The robot is split into sections (limbs). The base section is the support leg whose sole is fixed; every
other section is C-busy (its end follows a Cartesian twist), J-busy (its joints follow given rates) or idle
(held still). With the world-aligned frame Jacobian of a section's end, ẋ_i = B_i ν_b + J_i q̇_i (B_i: base
columns, J_i: the section's joints; eq. 5):

    base section fixed:    ν_b = K q̇_1,            K = −B_1⁻¹ J_1                          (eq. 11)
    C-busy section i:      q̇_i = J_i⁺ (ẋ_i − B_i ν_b)                                         (eqs. 7, 19)
    CoM:                   ċ = J_c,b ν_b + Σ_i J_c,i q̇_i                                        (eq. 8)
    ⇒  J_emb q̇_1 = ċ_emb,   J_emb = J_c,b K + J_c,1 − Σ_C J_c,i J_i⁺ B_i K                    (eqs. 15, 20)
                              ċ_emb = u − Σ_C J_c,i J_i⁺ ẋ_i − Σ_J J_c,i q̇_i                 (eqs. 17, 20, 32, 33)

with u the balancing input (eq. 24 horizontally). The motions F_i r a section's contact leaves free (a line foot's
roll about its line, on a leg of five joints) join q̇_i as extra joints: J_i ← [J_i, −F_i], so that
ẋ_i = B_i ν_b + J_i q̇_i − F_i r. Stacked with the base attitude rows ω_b = R_b K_ω q̇_1 the
support joints are resolved (eq. 16), then the other sections by eq. 19 — a C-busy section following only the rows of
its twist in ``axes`` (a limb of fewer than six joints, its end's position), and, given bounds on its rates (its
joints' ranges), the least-squares rates within them where eq. 19's would leave them. Sections are made of
serial-equivalent output joints; on a closed-chain robot every Jacobian is first projected onto them, J T with
T = ∂ν/∂ν_o (ClosedChain.output_velocity_map), so the linkages' masses count in the CoM. Units: m, rad, s.
"""
from typing import NamedTuple

import daqp
import numpy as np
from scipy.linalg import lapack

from humanoid_balance.model.closed_chain import ClosedChain
from humanoid_balance.model.kinematics import WholeBodyKinematics
from humanoid_balance.model.projected_dynamics import least_squares

__all__ = ["Section", "EmbeddedMotionResolver", "Resolution", "damped_pseudo_inverse", "BASE", "C_BUSY", "J_BUSY",
           "IDLE"]

BASE, C_BUSY, J_BUSY, IDLE = "base", "c_busy", "j_busy", "idle"


ALL_AXES = (0, 1, 2, 3, 4, 5)  # a C-busy section that follows its end's whole twist


class Section(NamedTuple):
    """A limb (Kim–Choi–Kim's section): its joints, its end frame and its role; ``free_twists``: the end's motions
    its contact leaves free, as twists [v; ω] in the end frame (a line contact's roll about its line: a leg of five
    joints holds its sole in the five others); ``axes``: the rows of its end's twist [v; ω] a C-busy section follows
    (a limb of fewer than six joints its position: (0, 1, 2))."""

    name: str
    joints: tuple
    end_frame: str
    role: str = IDLE
    free_twists: tuple = ()
    axes: tuple = ALL_AXES


def _base_solve(B_1, rhs):
    """B_1⁻¹ rhs for the support section's base Jacobian B_1 (6, 6), by LAPACK's dgesv without np.linalg's wrapper
    (~10 µs a call)."""
    *_, solution, info = lapack.dgesv(B_1, rhs)
    if info != 0:
        raise np.linalg.LinAlgError(f"the support section's base Jacobian B_1 is singular (dgesv info {info})")
    return solution


def damped_pseudo_inverse(J, threshold=0.02, max_damping=0.05):
    """J⁺ (eq. 7), damped only near a singularity: λ² = λ_max² (1 − (σ_min/ε)²) when σ_min < ε, else the exact
    Moore–Penrose inverse (Maciejewski–Klein adaptive damping), so a limb passing a singular posture gets a
    bounded, slightly inexact motion instead of an exploding one."""
    U, sigma, Vt, info = lapack.dgesdd(J, full_matrices=0)
    if info != 0:
        raise np.linalg.LinAlgError(f"dgesdd: the SVD did not converge (info {info})")
    smallest = sigma[-1]
    damping2 = max_damping ** 2 * (1.0 - (smallest / threshold) ** 2) if smallest < threshold else 0.0
    return (Vt.T * (sigma / (sigma ** 2 + damping2))) @ U.T


def bounded_least_squares(J, target, unbounded, lower, upper, damping=1e-6):
    """argmin ‖J x − target‖² + λ ‖x‖² subject to lower ≤ x ≤ upper (DAQP); ``unbounded`` when it is within the
    bounds already (or when the QP fails: the limits are then kept downstream)."""
    if np.all((unbounded >= lower) & (unbounded <= upper)):
        return unbounded
    H = J.T @ J + damping * np.eye(J.shape[1])
    solution, _, flag, _ = daqp.solve(H, -J.T @ target, np.eye(J.shape[1]), np.asarray(upper, dtype=float),
                                      np.asarray(lower, dtype=float), np.zeros(J.shape[1], dtype=np.intc))
    return solution if flag == 1 else unbounded


class Resolution(NamedTuple):
    output_velocity: np.ndarray  # ν_o: base twist (base frame) then output-joint rates, robot.output_names order
    velocity: np.ndarray         # ν = T ν_o, every joint of the tree (pinocchio convention)


class EmbeddedMotionResolver:
    """Resolves whole-body velocities from a CoM command and the sections' tasks (floating-base robot)."""

    def __init__(self, robot, sections, kinematics=None):
        if not robot.floating_base:
            raise ValueError("the embedded-motion CoM Jacobian needs the floating-base model")
        self.robot = robot
        self.kinematics = kinematics or WholeBodyKinematics(ClosedChain(robot))
        self.sections = {section.name: section for section in sections}
        for section in sections:
            missing = [j for j in section.joints if j not in robot.output_names]
            if missing:
                raise ValueError(f"section '{section.name}': {missing} are not serial-equivalent output joints")
        self.columns = {section.name: np.array([6 + robot.output_names.index(j) for j in section.joints], dtype=int)
                        for section in sections}
        self.frames = {section.name: robot.frame_id(section.end_frame) for section in sections}
        bases = [s.name for s in sections if s.role == BASE]
        if len(bases) != 1:
            raise ValueError(f"exactly one section must be the base (support) section, got {bases}")

    def set_roles(self, roles):
        """Change sections' roles together ({name: role}, e.g. swap the support leg); exactly one base must remain."""
        updated = {name: section._replace(role=roles.get(name, section.role)) for name, section in self.sections.items()}
        if [s.role for s in updated.values()].count(BASE) != 1:
            raise ValueError(f"exactly one section must stay the base (support) section, not {roles}")
        self.sections = updated

    @property
    def base_section(self):
        return next(s for s in self.sections.values() if s.role == BASE)

    def resolve(self, q, com_velocity, base_angular_velocity, twists=None, joint_rates=None, rate_bounds=None):
        """Whole-body velocity (:class:`Resolution`) meeting the CoM command, the base attitude and the tasks.

        Args:
            com_velocity: u, the CoM velocity command, world frame [m/s] (3,).
            base_angular_velocity: desired ω of the base link, world frame [rad/s] (3,).
            twists: C-busy sections → end twist [v; ω], world-aligned at the end frame [m/s, rad/s] (6,);
                missing means hold still (e.g. the other foot on the ground). The base (support) section's: its
                sole's own twist (a stance sole turned by foot damping): the base then moves by
                ν_b = K q̇_1 + B_1⁻¹ s_1 (eq. 11 with the sole moving), the tasks met all the same.
            joint_rates: J-busy sections → joint rates [rad/s] (n_i,).
            rate_bounds: C-busy sections → (lowest, highest) rates of their joints this tick [rad/s] (the joints'
                ranges): where eq. 19's rates would leave them, the section's rates are the least-squares ones within
                them (its end then stops at the edge of its workspace instead of drifting along it).
        """
        twists, joint_rates, rate_bounds = twists or {}, joint_rates or {}, rate_bounds or {}
        kinematics = self.kinematics.update(q)
        T = kinematics.T                                          # (nv, 6 + n_out)
        J_com = kinematics.com_jacobian()                         # (3, 6 + n_out)
        R_base = kinematics.base_rotation

        def frame_jacobian(name):
            return kinematics.frame_jacobian(self.frames[name])

        def section_jacobian(name):
            """B_i and J_i, the contact's free motions r appended to J_i as joints: ẋ_i = B_i ν_b + J_i q̇_i − F_i r."""
            J_end = frame_jacobian(name)
            J_i = J_end[:, self.columns[name]]
            free = self.sections[name].free_twists
            if free:
                R = kinematics.placement(self.frames[name]).rotation
                twists = np.array(free, dtype=float).reshape(-1, 2, 3) @ R.T  # world-aligned at the end frame
                J_i = np.hstack([J_i, -twists.reshape(-1, 6).T])
            return J_end[:, :6], J_i

        base = self.base_section.name
        base_joints = len(self.columns[base])
        B_1, J_1 = section_jacobian(base)
        K = self._support_map(B_1, J_1)                           # ν_b = K q̇_1 (eq. 11)
        J_emb = J_com[:, :6] @ K
        J_emb[:, :base_joints] += J_com[:, self.columns[base]]
        c_emb = np.array(com_velocity, dtype=float)
        attitude = np.array(base_angular_velocity, dtype=float)
        sole_motion = None                                        # B_1⁻¹ s_1: the base's share of its sole's twist
        if base in twists:
            sole_motion = _base_solve(B_1, np.asarray(twists[base], dtype=float))
            c_emb -= J_com[:, :6] @ sole_motion
            attitude -= R_base @ sole_motion[3:]
        cartesian = {}
        for name, section in self.sections.items():
            columns = self.columns[name]
            if section.role == C_BUSY:
                B_i, J_i = section_jacobian(name)
                if len(section.axes) < 6:  # the end's other motions are left free
                    B_i, J_i = B_i[list(section.axes)], J_i[list(section.axes)]
                J_pinv = damped_pseudo_inverse(J_i)[:len(columns)]
                twist = np.asarray(twists[name], dtype=float) if name in twists else np.zeros(6)
                if section.axes != ALL_AXES:  # (every axis: the twist as it is, not a copy through an index list)
                    twist = twist[list(section.axes)]
                cartesian[name] = (J_pinv, B_i, J_i, twist)
                J_emb -= J_com[:, columns] @ J_pinv @ B_i @ K                # eqs. 15, 20
                c_emb -= J_com[:, columns] @ J_pinv @ (twist if sole_motion is None else twist - B_i @ sole_motion)
            elif section.role == J_BUSY:
                c_emb -= J_com[:, columns] @ np.asarray(joint_rates[name], dtype=float)

        task = np.empty((6, J_emb.shape[1]))                     # (6, n_1): CoM and base attitude (eq. 16)
        task[:3], task[3:] = J_emb, R_base @ K[3:]
        q_dot_1 = least_squares(task, np.concatenate([c_emb, attitude]), rcond=1e-12)
        nu = np.zeros(T.shape[1])
        nu[:6] = K @ q_dot_1 if sole_motion is None else K @ q_dot_1 + sole_motion
        nu[self.columns[base]] = q_dot_1[:base_joints]
        for name, section in self.sections.items():
            columns = self.columns[name]
            if section.role == C_BUSY:
                J_pinv, B_i, J_i, twist = cartesian[name]
                nu[columns] = J_pinv @ (twist - B_i @ nu[:6])        # eq. 19 (Kim–Choi–Kim eq. 15)
                if name in rate_bounds:
                    nu[columns] = bounded_least_squares(J_i[:, :len(columns)], twist - B_i @ nu[:6], nu[columns],
                                                        *rate_bounds[name])
            elif section.role == J_BUSY:
                nu[columns] = joint_rates[name]
        return Resolution(nu, T @ nu)

    def standing_displacement(self, q, output_displacement):
        """First-order displacement of the CoM [m] and of the base's attitude [rad] (world frame, (3,) each) when the
        output joints move by ``output_displacement`` (n_out,) with the support section's sole fixed: the base moves
        by ν_b = K Δq_1 (eq. 11), the CoM by J_c,b ν_b + J_c,q Δq (eq. 8). A posture the joints are commanded to,
        seen standing where the robot stands."""
        kinematics = self.kinematics.update(q)
        base = self.base_section.name
        J_sole = kinematics.frame_jacobian(self.frames[base])
        base_motion = self._support_map(J_sole[:, :6], J_sole[:, self.columns[base]]) \
            @ output_displacement[self.columns[base] - 6]
        J_com = kinematics.com_jacobian()
        return J_com[:, :6] @ base_motion + J_com[:, 6:] @ output_displacement, \
            kinematics.base_rotation @ base_motion[3:]

    @staticmethod
    def _support_map(B_1, J_1):
        """K = −B_1⁻¹ J_1 (eq. 11): the base twist [v; ω] (base frame) that keeps the support sole still when its
        leg's joints move."""
        return -_base_solve(B_1, J_1)
