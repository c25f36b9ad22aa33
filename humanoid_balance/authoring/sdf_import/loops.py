"""The loops of an SDF import: the kinematics of the cut joints' frames over the tree, the directions a cut joint
constrains and which of them the mechanism already satisfies (a rank test), and how well conditioned each loop is
(:mod:`humanoid_balance.authoring.sdf_import`). Units: m, rad."""
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from humanoid_balance.model.closed_chain import error_twist_map, loop_errors, relative_support
from humanoid_balance.model.kinematics import FramePlacements

__all__ = ["LoopKinematics", "ImportedLoop", "numerical_rank", "condition_number", "AXIS_ROWS"]

RANK_TOLERANCE = 1e-8     # singular values below this fraction of the largest count as zero
AXIS_ROWS = {"x": 0, "y": 1, "z": 2, "rx": 3, "ry": 4, "rz": 5}


class LoopKinematics:
    """Loop errors and relative Jacobians on the pinocchio model of the URDF (fixed base), every axis of every loop
    (:mod:`humanoid_balance.model.closed_chain`'s, before the axes and the actuation are chosen), and the rank tests
    done on closed configurations near the assembly pose."""

    def __init__(self, urdf_text, frame_pairs):
        self.model = pin.buildModelFromXML(urdf_text)
        self.data = self.model.createData()
        self.joint_names = [self.model.names[j] for j in range(1, self.model.njoints)]
        self.index = {name: self.model.joints[j].idx_v for j, name in enumerate(self.model.names) if j > 0}
        self.pairs = [(self.model.getFrameId(a), self.model.getFrameId(b)) for a, b in frame_pairs]
        self.signs = relative_support(self.model, self.pairs)  # ±1 on the joints moving one frame, not the other
        self.support = self.signs != 0.0
        self.frames = FramePlacements(self.data, [fa for fa, _ in self.pairs] + [fb for _, fb in self.pairs])
        self.twist_map = np.zeros((len(self.pairs), 6, 6))
        self.loop_columns = np.flatnonzero(self.support.any(axis=0))
        self.rows = np.zeros(0, dtype=int)
        self.jacobians = []   # (L, 6, nv) at the assembly pose, then at each closed sample

    def evaluate(self, q):
        """Full 6-D error of every loop (L, 6) [m, rad] and its Jacobian (L, 6, nv), both in frame_a
        (closed_chain.loop_errors and error_twist_map, eq. 51)."""
        model, data = self.model, self.data
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        R_T, p = self.frames.read()
        errors, R_ab = loop_errors(R_T, p, len(self.pairs))
        return errors, (error_twist_map(R_T, p, errors, R_ab, self.twist_map) @ data.J) * self.signs[:, None, :]

    def set_axes(self, axes):
        self.rows = np.concatenate([6 * i + np.array([AXIS_ROWS[a] for a in loop_axes], dtype=int)
                                    for i, loop_axes in enumerate(axes)]) if axes else np.zeros(0, dtype=int)

    def sample(self, axes, count, rng, spread=0.15):
        """The assembly pose and up to ``count`` closed configurations near it: random steps on the loop joints
        projected back onto e = 0 (``axes``) by minimum-norm Gauss–Newton."""
        self.set_axes(axes)
        columns, q0 = self.loop_columns, pin.neutral(self.model)
        configurations = [q0]
        for _ in range(3 * count if len(columns) else 0):
            q = q0.copy()
            q[columns] += rng.normal(scale=spread, size=len(columns))
            for _ in range(60):
                errors, jacobians = self.evaluate(q)
                error = errors.reshape(-1)[self.rows]
                if np.linalg.norm(error) < 1e-11:
                    configurations.append(q)
                    break
                step = -np.linalg.lstsq(jacobians.reshape(-1, self.model.nv)[self.rows][:, columns], error,
                                        rcond=None)[0]
                q[columns] += step * min(1.0, 0.2 / max(np.abs(step).max(), 1e-300))
            if len(configurations) > count:
                break
        self.jacobians = [self.evaluate(q)[1] for q in configurations]

    def block(self, at, loops, axes, columns):
        """Rows ``axes`` of loops ``loops`` (lists), columns ``columns`` of the Jacobian at sample ``at``
        (0: the assembly pose)."""
        J = self.jacobians[at]
        return np.vstack([J[i][[AXIS_ROWS[a] for a in loop_axes]] for i, loop_axes in zip(loops, axes)])[:, columns]

    def generic_rank(self, matrix_at):
        """Rank of ``matrix_at(sample)`` at a generic closed configuration: the largest over the samples (the
        assembly pose counts only when no sample was found)."""
        samples = range(1, len(self.jacobians)) if len(self.jacobians) > 1 else range(1)
        return max(numerical_rank(matrix_at(at)) for at in samples)

    def stacked(self, at):
        return self.jacobians[at].reshape(-1, self.model.nv)[self.rows]


def numerical_rank(matrix):
    if not matrix.size:
        return 0
    singular = np.linalg.svd(matrix, compute_uv=False)
    return int(np.sum(singular > RANK_TOLERANCE * max(singular[0], 1e-300)))


def condition_number(matrix):
    """2-norm condition number (∞ when rank-deficient; 1 for an empty matrix)."""
    if not matrix.size:
        return 1.0
    singular = np.linalg.svd(matrix, compute_uv=False)
    return float(singular[0] / singular[-1]) if singular[-1] > RANK_TOLERANCE * singular[0] else float("inf")


@dataclass
class ImportedLoop:
    """One loop of the import: the joint it was cut at and what the YAML says about it."""

    name: str
    cut_joint: str
    cut_kind: str
    frame_a: str
    frame_b: str
    link_a: str
    link_b: str
    axes: tuple
    dropped_axes: tuple            # nominal axes not constrained (satisfied identically, or --loop-axes)
    joints: tuple                  # tree joints moving one of its frames but not the other
    passive: tuple = ()            # its passive joints
    condition_at_assembly: float = 1.0  # cond of its constraint Jacobian (its axes × its joints) at the assembly pose
    passive_condition_at_assembly: float = 1.0  # cond of its axes × its passive joints there (∞: singular)
