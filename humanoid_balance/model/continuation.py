"""Closing the loops far from a known configuration: Newton, then continuation along a straight path.

Newton from a configuration far from the target may not converge or, worse, converge to the other assembly
branch (a full-rotation crank-rocker 150° from its reference does both). So the held coordinates (the actuators,
or the mapper's outputs) follow the straight path from a closed configuration to the target: each step predicts
with the tangent ∂θ_free/∂θ_held at the last closed configuration and corrects by Newton; a step whose correction
fails is halved, a successful one lets the next double. The first step is the whole path — plain Newton from the
start's first-order prediction — so a near target costs no more than Newton.

A correction is accepted only if it contracts, Θ = ‖J_k⁻¹ e(θ_k+1)‖ / ‖J_k⁻¹ e(θ_k)‖ ≤ ``max_contraction``
(Deuflhard's affine-invariant nonlinearity estimate), and stays within ``max_correction`` of the prediction, so
that it never lands on another branch. Units: rad, m (step sizes are max-norms over the joints).
"""
from typing import Callable, NamedTuple

import numpy as np

from humanoid_balance.model.closed_chain import Linearization, PassiveSolution
from humanoid_balance.model.errors import ClosureError, SingularConfigurationError

__all__ = ["close_loops", "continue_closure"]

ROUNDOFF_STEP = 1e-8
"""Newton steps below this [rad or m] are not tested for contraction: round-off, never a change of branch."""
MAX_CONTRACTION = 0.25
"""Largest Θ accepted (Deuflhard's choice for continuation correctors)."""
MAX_CORRECTION = 0.1
"""Farthest a correction may move a joint from its prediction [rad or m], well inside the distance between
assembly branches."""


class _Held(NamedTuple):
    names: tuple          # the held joints, for messages
    held_q: np.ndarray    # coordinates set along the path
    free_q: np.ndarray    # coordinates Newton solves for
    solve: Callable       # (Linearization, rhs) → J_free⁻¹ rhs
    tangent: Callable     # Linearization → ∂θ_free/∂θ_held (n_free, n_held)


def _held(chain, which):
    robot = chain.robot
    if which == "actuated":
        return _Held(robot.actuated_names, robot.actuated_q, robot.passive_q, Linearization.solve_passive,
                     lambda lin: lin.J_m)
    if which == "outputs":
        return _Held(robot.output_names, robot.output_q, chain.solved_v + (robot.nq - robot.nv),
                     Linearization.solve_solved, lambda lin: lin.output_map[chain.solved_joints])
    raise ValueError(f"held must be 'actuated' or 'outputs', got {which!r}")


def _correct(chain, q, held, tolerance, max_iterations, max_contraction, max_correction):
    """Newton on the free coordinates from ``q``, the held ones fixed: (q, its Linearization, iterations).

    Raises:
        ClosureError: no contraction, a singular Jacobian, a correction beyond ``max_correction``, or ‖e_l‖ still
            above ``tolerance`` after ``max_iterations``.
    """
    lin = chain.linearize(q)
    initial = q[held.free_q]
    for iteration in range(max_iterations + 1):
        if np.linalg.norm(lin.residual) <= tolerance:
            return q, lin, iteration
        if iteration == max_iterations:
            break
        try:
            step = held.solve(lin, -lin.residual)
        except SingularConfigurationError:
            break
        size = np.abs(step).max()
        if not np.isfinite(size):
            break
        q = q.copy()
        q[held.free_q] += step
        previous, lin = lin, chain.linearize(q)
        if size > ROUNDOFF_STEP and not np.abs(held.solve(previous, lin.residual)).max() <= max_contraction * size:
            break  # Θ = ‖J_k⁻¹ e(θ_k+1)‖ / ‖Δθ_k‖ too large: the linear model does not hold over this step
        if not np.abs(q[held.free_q] - initial).max() <= max_correction:
            break  # heading for a solution this far from the prediction: maybe on another branch
    norms = chain.loop_residual_norms(lin.residual)
    worst = max(norms, key=norms.get) if norms else ""
    error = float(np.linalg.norm(lin.residual))
    raise ClosureError(f"Newton stopped at ‖e_l‖ = {error:.3e} (tolerance {tolerance:.1e})", error, worst, iteration)


def continue_closure(chain, start, target, held="actuated", tolerance=1e-12, max_iterations=20, max_steps=64,
                     min_step=2.0 ** -12, max_contraction=MAX_CONTRACTION, max_correction=MAX_CORRECTION):
    """Close the loops with the ``held`` coordinates (``"actuated"`` or ``"outputs"``) at ``target`` [rad or m],
    following them along the straight path from their values in ``start``: (q, its Linearization, iterations).

    ``start``: a (nearly) closed configuration on the wanted assembly branch, first closed at its own values.
    Steps are fractions of the path: the first 1 (plain Newton), halved on failure down to ``min_step``, doubled
    after a success; at most ``max_steps`` are tried in all.

    Raises:
        ClosureError: ``start`` does not close, or the path cannot be followed to ``target`` (beyond reach, or a
            singularity on the way); the message names the coordinates, how far the loops stayed closed and the
            last residual.
    """
    spec = _held(chain, held)
    newton = tolerance, max_iterations, max_contraction, max_correction
    target = np.asarray(target, dtype=float)
    try:
        q, lin, iterations = _correct(chain, np.array(start, dtype=float), spec, *newton)
    except ClosureError as error:
        raise ClosureError(f"the start configuration does not close: {error}", error.residual_norm,
                           error.worst_loop, error.iterations) from None
    origin = q[spec.held_q].copy()
    delta = target - origin
    s, h, steps, failure = 0.0, 1.0, 0, ClosureError("none tried (max_steps = 0)", float("nan"), "", 0)
    while s < 1.0:
        if steps == max_steps or h < min_step:
            moving = np.flatnonzero(delta) if delta.any() else range(len(delta))
            values = ", ".join(f"{spec.names[i]} = {target[i]:.6g} (from {origin[i]:.6g})" for i in moving)
            raise ClosureError(f"cannot close the loops at {held} {values}: they stay closed only {s:.1%} of the "
                               f"straight path ({steps} steps, down to {h:.1e} of it): beyond reach, or a singularity "
                               f"on the way; last correction: {failure}, worst loop '{failure.worst_loop}'",
                               failure.residual_norm, failure.worst_loop, iterations)
        steps += 1
        s_next = 1.0 if s + h >= 1.0 - 1e-12 else s + h
        predicted = q.copy()
        predicted[spec.free_q] += spec.tangent(lin) @ ((s_next - s) * delta)
        predicted[spec.held_q] = target if s_next == 1.0 else origin + s_next * delta
        try:
            q_next, lin_next, used = _correct(chain, predicted, spec, *newton)
        except ClosureError as error:
            failure, h, iterations = error, h / 2.0, iterations + error.iterations
            continue
        q, lin, s, h, iterations = q_next, lin_next, s_next, 2.0 * h, iterations + used
    return q, lin, iterations


def close_loops(chain, actuated, start=None, tolerance=1e-12, max_steps=64, max_condition=1e6):
    """θ with every loop closed at the actuator values θ_a [rad or m], on the assembly branch of ``start``.

    Plain Newton from ``start``'s first-order prediction first; if it fails (or would leave the branch), the
    actuators are followed along the straight path from their ``start`` values to θ_a (:func:`continue_closure`).
    ``start``: a closed configuration on the wanted branch, e.g. the last estimate; by default, or if it does not
    close, ``robot.reference_q``.

    Raises:
        ClosureError: θ_a cannot be reached; the message names the actuators, their values and the residual.
        SingularConfigurationError: cond(J_l,u) > ``max_condition`` at the solution.
    """
    robot = chain.robot
    if not chain.loops:
        q = np.array(robot.reference_q if start is None else start, dtype=float)
        q[robot.actuated_q] = actuated
        return PassiveSolution(q, 0.0, 0, 1.0)
    if start is not None:
        try:
            start = _correct(chain, np.array(start, dtype=float), _held(chain, "actuated"), tolerance, 20,
                             MAX_CONTRACTION, MAX_CORRECTION)[0]
        except ClosureError:
            start = None
    q, lin, iterations = continue_closure(chain, robot.reference_q if start is None else start, actuated,
                                          tolerance=tolerance, max_steps=max_steps)
    condition = float(np.linalg.cond(lin.J_lu))
    if not condition <= max_condition:
        values = ", ".join(f"{name} = {value:.6g}" for name, value in zip(robot.actuated_names, q[robot.actuated_q]))
        raise SingularConfigurationError(f"closed-chain singularity at {values}: cond(J_l,u) = {condition:.3e} "
                                         f"exceeds {max_condition:.1e}", condition, max_condition)
    return PassiveSolution(q, float(np.linalg.norm(lin.residual)), iterations, condition)
