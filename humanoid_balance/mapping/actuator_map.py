"""Serial-equivalent joint commands → linear-actuator commands (Kangaroo paper, eqs. 2, 22–23, 47).

- positions: with the outputs q fixed, Newton on the loop equations e_l(θ) = 0 over the other joints (the
  actuated ones and the passive non-outputs), warm-started from the last solution, gives θ_a;
- velocities: θ̇_a = (P J_m)⁻¹ q̇ (eq. 22);
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
from humanoid_balance.model.errors import ClosureError, SingularConfigurationError

__all__ = ["ActuatorCommand", "ActuatorMap"]


class ActuatorCommand(NamedTuple):
    position: np.ndarray   # θ_a, robot.actuated_names order [m or rad]
    velocity: np.ndarray   # θ̇_a [m/s or rad/s]
    effort: np.ndarray     # actuator force/torque, or motor torque for ball-screws so configured [N, N·m]
    clamped: tuple         # names of the limits applied this update, e.g. ("left_knee_actuator velocity",)
    condition_number: float


class ActuatorMap:
    """Eqs. 22–23 and the position closure for one robot; keeps the last solution as warm start."""

    def __init__(self, robot, max_condition=200.0, efforts_as_motor_torques=False, tolerance=1e-12, max_iterations=20):
        self.robot = robot
        self.chain = ClosedChain(robot)
        self.max_condition = max_condition
        self.tolerance, self.max_iterations = tolerance, max_iterations
        outputs = set(robot.output_names)
        self.solved_q = np.array([robot.joint_q_index(n) for n in robot.joint_names if n not in outputs], dtype=int)
        self.solved_v = np.array([robot.joint_v_index(n) for n in robot.joint_names if n not in outputs], dtype=int)
        self.q = robot.reference_q.copy()
        lower, upper = robot.position_limits(robot.actuated_names)
        self.limits = {"position": (lower, upper), "velocity": robot.velocity_limits(robot.actuated_names),
                       "effort": robot.effort_limits(robot.actuated_names)}
        self.torque_per_force = np.ones(len(robot.actuated_names))
        for i, name in enumerate(robot.actuated_names):
            spec = robot.spec.actuators.get(name)
            if spec is not None and np.isfinite(spec.force_limit):
                self.limits["effort"][i] = min(self.limits["effort"][i], spec.force_limit)
            if efforts_as_motor_torques and spec is not None and spec.kind == "ballscrew":
                self.torque_per_force[i] = ballscrew_motor_torque(1.0, spec.lead, spec.efficiency)

    def positions(self, outputs, substeps=(1, 8, 32)):
        """θ_a realising the outputs q (eq. 2 with q fixed), by damped Newton from the last solution.

        When a command jumps far from the last one (a first command, lost messages), the closure continues
        along the straight output path in more and more substeps, so it stays on the assembly branch.

        Raises:
            ClosureError: the loops cannot be closed for these outputs.
        """
        start = self.q[self.robot.output_q].copy()
        for count in substeps:
            q = self.q.copy()
            try:
                for s in np.linspace(0.0, 1.0, count + 1)[1:]:
                    q, lin = self._close(q, start + s * (np.asarray(outputs) - start))
            except ClosureError as error:
                failure = error
                continue
            self.q = q
            return q[self.robot.actuated_q].copy(), lin
        raise failure

    def _close(self, q, outputs):
        q = q.copy()
        q[self.robot.output_q] = outputs
        error, iteration = np.inf, 0
        for iteration in range(self.max_iterations):
            lin = self.chain.linearize(q)
            error = float(np.linalg.norm(lin.residual))
            if error < self.tolerance:
                return q, lin
            _, _, step, info = lapack.dgesv(lin.J_l[:, self.solved_v], -lin.residual)
            if info != 0:
                break
            q[self.solved_q] += step.ravel() * min(1.0, 0.2 / max(np.abs(step).max(), 1e-300))
        raise ClosureError(f"outputs cannot be realised: ‖e_l‖ = {error:.3e} after Newton", error, "", iteration)

    def update(self, outputs, output_velocities, output_torques):
        """One command: positions, velocities (eq. 22) and efforts (eq. 23), clamped to the actuator limits.

        Raises:
            ClosureError, SingularConfigurationError: nothing safe to output; keep the last command.
        """
        positions, lin = self.positions(outputs)
        PJ_m = self.chain.output_jacobian(self.q, lin)  # (n_out, n_a)
        condition = float(np.linalg.cond(PJ_m))
        if not condition <= self.max_condition:
            raise SingularConfigurationError(f"near a singularity: cond(P·J_m) = {condition:.3g} above "
                                             f"{self.max_condition:.3g}", condition, self.max_condition)
        velocities = np.linalg.solve(PJ_m, output_velocities)            # eq. 22
        efforts = PJ_m.T @ output_torques                                # eq. 23 inverted
        clamped = []
        lower, upper = self.limits["position"]
        for label, values, low, high in (("position", positions, lower, upper),
                                         ("velocity", velocities, -self.limits["velocity"], self.limits["velocity"]),
                                         ("effort", efforts, -self.limits["effort"], self.limits["effort"])):
            outside = (values < low) | (values > high)
            clamped += [f"{self.robot.actuated_names[i]} {label}" for i in np.flatnonzero(outside)]
            np.clip(values, low, high, out=values)
        return ActuatorCommand(positions, velocities, efforts * self.torque_per_force, tuple(clamped), condition)
