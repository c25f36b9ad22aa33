"""Serial-equivalent joint commands → linear-actuator commands (Kangaroo paper, eqs. 2, 22–23, 47).

- positions: with the outputs q fixed, the loop equations e_l(θ) = 0 give the other joints θ_s (the actuated
  ones and the passive non-outputs). A command close to the last one is predicted from the last sensitivity
  ∂θ_s/∂q = −J_l,s⁻¹ J_l,o and corrected by one Newton step with the LU of J_l,s at the prediction, the same
  factorisation that gives the velocity and effort maps: one kinematics pass and one factorisation per command.
  Newton converges quadratically, so a prediction within ``prediction_tolerance`` closes the loops to its
  square. Farther commands go through Newton from the last solution, continued along the straight output path
  when it does not converge (:func:`~humanoid_balance.model.continuation.continue_closure`);
- velocities: θ̇_a = (P J_m)⁻¹ q̇ (eq. 22), the actuated rows of ∂θ/∂q;
- efforts: τ_a = J_mᵀ Pᵀ τ_j (eq. 23 inverted), then ball-screw force → motor torque τ_m = τ̄ L / (2π η) (eq. 47)
  for actuators configured so;
- limits: actuator stroke, velocity and force limits clamp the result (counted); near a singularity,
  cond(P J_m) above ``max_condition``, the map refuses and the caller keeps its last safe command.
Directly driven outputs (an actuated joint that is its own output) pass through unchanged.
Units: m, rad, s, N, N·m.
"""
from typing import NamedTuple

import numpy as np
from scipy.linalg import lapack

from humanoid_balance.model.actuators import ballscrew_motor_torque
from humanoid_balance.model.closed_chain import ClosedChain
from humanoid_balance.model.continuation import continue_closure
from humanoid_balance.model.errors import SingularConfigurationError

__all__ = ["ActuatorCommand", "ActuatorMap"]

LIMITED = ("position", "velocity", "effort")


class ActuatorCommand(NamedTuple):
    position: np.ndarray   # θ_a, robot.actuated_names order [m or rad]
    velocity: np.ndarray   # θ̇_a [m/s or rad/s]
    effort: np.ndarray     # actuator force/torque, or motor torque for ball-screws so configured [N, N·m]
    clamped: tuple         # names of the limits applied this update, e.g. ("left_knee_actuator velocity",)
    condition_number: float


class ActuatorMap:
    """Eqs. 22–23 and the position closure for one robot; keeps the last solution as warm start."""

    def __init__(self, robot, max_condition=200.0, efforts_as_motor_torques=False, tolerance=1e-12, max_iterations=20,
                 prediction_tolerance=1e-6):
        self.robot = robot
        self.chain = ClosedChain(robot)
        self.max_condition = max_condition
        self.tolerance, self.max_iterations = tolerance, max_iterations
        self.prediction_tolerance = prediction_tolerance
        self.solved_q = self.chain.solved_v + (robot.nq - robot.nv)  # 1-DOF joints: q follows v past the base
        self.q = robot.reference_q.copy()
        self._sensitivity = (None, None)  # (the q it belongs to, the linearization whose ∂θ/∂q_o predicts from it)
        lower, upper = robot.position_limits(robot.actuated_names)
        velocity, effort = robot.velocity_limits(robot.actuated_names), robot.effort_limits(robot.actuated_names)
        self.torque_per_force = np.ones(len(robot.actuated_names))
        for i, name in enumerate(robot.actuated_names):
            spec = robot.spec.actuators.get(name)
            if spec is not None and np.isfinite(spec.force_limit):
                effort[i] = min(effort[i], spec.force_limit)
            if efforts_as_motor_torques and spec is not None and spec.kind == "ballscrew":
                self.torque_per_force[i] = ballscrew_motor_torque(1.0, spec.lead, spec.efficiency)
        self.limits = (np.array([lower, -velocity, -effort]), np.array([upper, velocity, effort]))  # (LIMITED, n_a)

    def positions(self, outputs):
        """θ_a realising the outputs q (eq. 2 with q fixed), and the linearization it was found with.

        Near the last command, prediction and one Newton correction; otherwise Newton from the last solution,
        continued along the straight output path in smaller steps when a command jumps far (a first command, lost
        messages), so that the closure stays on the assembly branch.

        Raises:
            ClosureError: the loops cannot be closed for these outputs.
        """
        outputs = np.asarray(outputs, dtype=float)
        q, lin = self._predict_and_correct(outputs)
        if q is None:
            q, lin, _ = continue_closure(self.chain, self.q, outputs, held="outputs", tolerance=self.tolerance,
                                         max_iterations=self.max_iterations)
        self.q = q
        self._sensitivity = (q, lin)
        return q[self.robot.actuated_q].copy(), lin

    def _predict_and_correct(self, outputs):
        last_q, last = self._sensitivity
        if last_q is not self.q:
            return None, None
        q = self.q.copy()
        q[self.solved_q] += last.output_map[self.chain.solved_joints] @ (outputs - q[self.robot.output_q])
        q[self.robot.output_q] = outputs
        lin = self.chain.linearize(q)
        if not np.abs(lin.residual).max(initial=0.0) <= self.prediction_tolerance:
            return None, None
        q[self.solved_q] += lin.closing_step
        return q, lin

    def update(self, outputs, output_velocities, output_torques):
        """One command: positions, velocities (eq. 22) and efforts (eq. 23), clamped to the actuator limits.

        Raises:
            ClosureError, SingularConfigurationError: nothing safe to output; keep the last command.
        """
        positions, lin = self.positions(outputs)
        inverse_PJ_m = lin.output_map[self.chain.actuated_joints]  # (P J_m)⁻¹ (n_a, n_out)
        sigma = lapack.dgesdd(inverse_PJ_m, compute_uv=0)[1]
        condition = float(sigma[0] / sigma[-1]) if sigma[-1] > 0.0 else float("inf")  # = cond(P J_m)
        if not condition <= self.max_condition:
            raise SingularConfigurationError(f"near a singularity: cond(P·J_m) = {condition:.3g} above "
                                             f"{self.max_condition:.3g}", condition, self.max_condition)
        command = np.array([positions, inverse_PJ_m @ output_velocities,                   # eq. 22
                            lapack.dgesv(inverse_PJ_m.T, output_torques)[2]])           # eq. 23 inverted: (P J_m)ᵀ τ_j
        lower, upper = self.limits
        outside = (command < lower) | (command > upper)
        clamped = ()
        if outside.any():
            clamped = tuple(f"{self.robot.actuated_names[i]} {label}" for label, row in zip(LIMITED, outside)
                            for i in np.flatnonzero(row))
            np.clip(command, lower, upper, out=command)
        return ActuatorCommand(command[0], command[1], command[2] * self.torque_per_force, clamped, condition)
