"""Initial calibration of relative actuator encoders (Kangaroo paper, section VI-A, eqs. 41–42).

Relative encoders read θ_a,raw = θ_a − offset. Absolute encoders on some passive joints measure θ_j,m.
Augmenting the loop equations with the measurement rows E (a single 1 at each measured joint),

    J̃ = [J_l; E]  (eq. 41),     ẽ = [e_l(θ); e_m],  e_m,i = θ_j,m − θ_j  (eq. 42),

and iterating J̃ Δθ = [−e_l; e_m] until ‖ẽ‖ < tolerance reconstructs the whole mechanism; the offsets
are then θ_a − θ_a,raw. With as many measured passive joints as actuators, J̃ is square (n × n).
"""
import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import NamedTuple

import numpy as np
import yaml

from humanoid_balance.model.continuation import close_loops
from humanoid_balance.model.errors import ClosureError, ModelError, ModelFileError, SingularConfigurationError

__all__ = ["CalibrationResult", "calibrate_actuator_offsets", "load_offsets", "save_offsets"]


class CalibrationResult(NamedTuple):
    offsets: np.ndarray     # add to raw actuator readings to get absolute positions [m or rad]
    q: np.ndarray           # the calibrated configuration
    error_norm: float       # ‖ẽ‖ at the last iterate [m, rad]
    iterations: int
    converged: bool


def calibrate_actuator_offsets(chain, theta_a_raw, measured_passive, initial_q=None, tolerance=1e-10,
                               max_iterations=20, max_step=0.05):
    """Solve eqs. 41–42 for the actuator offsets.

    Each Newton step on J̃ Δθ = [−e_l; e_m] is scaled to at most ``max_step`` [rad or m] and halved until
    ‖ẽ‖ decreases, so the iteration stays on the assembly branch it starts on.

    Args:
        theta_a_raw: relative actuator readings, in ``robot.actuated_names`` order [m or rad].
        measured_passive: absolute readings of ``robot.measured_names`` [rad or m].
        initial_q: starting configuration — best the closed configuration tracking the raw readings, as the
            passive-state estimator provides (default: the reference one). The iteration starts from the loops
            closed at ``theta_a_raw`` on its branch (:func:`~humanoid_balance.model.continuation.close_loops`),
            or, if they cannot be, from it with the actuated joints at ``theta_a_raw``.
    """
    robot = chain.robot
    measured_v = np.array([robot.joint_v_index(name) for name in robot.measured_names], dtype=int)
    measured_q = np.array([robot.joint_q_index(name) for name in robot.measured_names], dtype=int)
    joints_v = np.flatnonzero(chain.relative_support.any(axis=0))  # joints on a loop; direct drives keep 0
    joints_v = joints_v[joints_v >= robot.base_nv]
    joints_q = joints_v + (robot.nq - robot.nv)  # 1-DOF joints follow the (quaternion) base
    if chain.m + len(measured_v) < len(joints_v):
        raise ModelError(f"calibration needs at least {len(joints_v) - chain.m} measured passive joints "
                         f"(one per loop actuator), the loop file lists {len(measured_v)}")
    E = np.zeros((len(measured_v), robot.nv))
    E[np.arange(len(measured_v)), measured_v] = 1.0
    measured_passive = np.asarray(measured_passive, dtype=float)

    def augmented_error(q):  # ẽ of eq. 42
        return np.concatenate([chain.residual(q), q[measured_q] - measured_passive])

    try:
        q = close_loops(chain, theta_a_raw, start=initial_q).q
    except (ClosureError, SingularConfigurationError):
        q = np.array(robot.reference_q if initial_q is None else initial_q, dtype=float)
        q[robot.actuated_q] = theta_a_raw
    error_norm = float(np.linalg.norm(augmented_error(q)))
    iterations = 0
    while error_norm >= tolerance and iterations < max_iterations:
        iterations += 1
        lin = chain.linearize(q)
        J_tilde = np.vstack([lin.J_l, E])[:, joints_v]  # eq. 41, joint columns only
        step = np.linalg.lstsq(J_tilde, np.concatenate([-lin.residual, measured_passive - q[measured_q]]),
                               rcond=None)[0]
        step *= min(1.0, max_step / np.abs(step).max())
        for _ in range(30):
            candidate = q.copy()
            candidate[joints_q] += step
            candidate_norm = float(np.linalg.norm(augmented_error(candidate)))
            if candidate_norm < error_norm:
                break
            step *= 0.5
        else:
            break
        q, error_norm = candidate, candidate_norm
    offsets = q[robot.actuated_q] - np.asarray(theta_a_raw, dtype=float)
    return CalibrationResult(offsets, q, error_norm, iterations, error_norm < tolerance)


def save_offsets(path, actuator_names, offsets):
    """Write actuator offsets [m or rad] to a YAML file without ever losing a file that is there: the new one is
    written beside it and moved into place atomically (a crash mid-write leaves the old file whole), the old one is
    kept as ``<name>.previous``, and a read-only one (no write permission bit, whoever runs the node) is not
    replaced.

    Raises:
        OSError: the file is read-only, or it or its folder cannot be written; the old file is untouched.
    """
    path = Path(path)
    if path.is_file() and not path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise PermissionError(errno.EACCES, "the file is read-only; not replaced", str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"actuator_offsets": {name: float(value) for name, value in zip(actuator_names, offsets)}}
    handle = tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", delete=False)
    try:
        with handle:
            yaml.safe_dump(document, handle, sort_keys=False)
            handle.flush()
            os.fsync(handle.fileno())
        if path.is_file():
            shutil.copy2(path, path.with_name(f"{path.name}.previous"))
        os.replace(handle.name, path)
    except OSError:
        os.unlink(handle.name)  # the new file, half written or not moved: the old one is untouched
        raise


def load_offsets(path, actuator_names):
    """Read offsets saved by :func:`save_offsets`, in ``actuator_names`` order.

    Raises:
        ModelFileError: unreadable file, wrong layout, or a missing actuator.
    """
    try:
        document = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as error:
        raise ModelFileError(path, None, f"cannot read actuator offsets: {error}") from None
    table = document.get("actuator_offsets") if isinstance(document, dict) else None
    if not isinstance(table, dict):
        raise ModelFileError(path, "actuator_offsets", "missing or not a mapping")
    missing = [name for name in actuator_names if name not in table]
    if missing:
        raise ModelFileError(path, "actuator_offsets", f"no offset for {missing}")
    return np.array([float(table[name]) for name in actuator_names])
