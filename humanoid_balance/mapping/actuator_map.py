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
- joint impedance, when the outputs' stiffness and damping are set: per-actuator gains, the diagonals of
  Jᵀ K_q J and Jᵀ D_q J with J = P J_m (:mod:`~humanoid_balance.mapping.joint_impedance`), from the same
  factorisation, bounded per actuator;
- limits: actuator stroke, velocity and force limits clamp the result (counted); near a singularity,
  cond(P J_m) above ``max_condition``, the map refuses and the caller keeps its last safe command;
- compliance compensation, for position drives of known stiffness K and damping D (a position loop
  τ = K (θ_c − θ) − D θ̇): the position command is advanced by the drive's deflection under the command's effort
  and velocity, θ_c = θ_a + (τ_a + D θ̇_a) / K, so that the loaded, moving actuator is where the command wants it
  and carries its effort (a dynamic motion, such as a jump, otherwise lags by that deflection).
Directly driven outputs (an actuated joint that is its own output) pass through unchanged.
Units: m, rad, s, N, N·m.
"""
from typing import NamedTuple

import numpy as np
from scipy.linalg import lapack

from humanoid_balance.mapping.joint_impedance import actuator_gains, coupling
from humanoid_balance.model.actuators import ballscrew_motor_torque
from humanoid_balance.model.closed_chain import ClosedChain
from humanoid_balance.model.continuation import continue_closure
from humanoid_balance.model.errors import SingularConfigurationError

__all__ = ["ActuatorCommand", "ActuatorMap"]

LIMITED = ("position", "velocity", "effort", "stiffness", "damping")


class ActuatorCommand(NamedTuple):
    position: np.ndarray   # θ_a, robot.actuated_names order [m or rad]
    velocity: np.ndarray   # θ̇_a [m/s or rad/s]
    effort: np.ndarray     # actuator force/torque, or motor torque for ball-screws so configured [N, N·m]
    clamped: tuple         # names of the limits applied this update, e.g. ("left_knee_actuator velocity",)
    condition_number: float
    stiffness: np.ndarray = None  # joint impedance per actuator [N/m or N·m/rad] (None: no impedance set)
    damping: np.ndarray = None    # [N·s/m or N·m·s/rad]


class ActuatorMap:
    """Eqs. 22–23 and the position closure for one robot; keeps the last solution as warm start."""

    def __init__(self, robot, max_condition=200.0, efforts_as_motor_torques=False, tolerance=1e-12, max_iterations=20,
                 prediction_tolerance=1e-6, impedance=None, max_gains=(np.inf, np.inf), drive_compliance=None):
        """``impedance``: the outputs' (stiffness, damping) [N/m, N·m/rad; per second], each (n_out,) or a
        [prismatic, revolute] pair; ``max_gains``: the actuators' largest (stiffness, damping), each a scalar,
        (n_a,) or a [prismatic, revolute] pair; ``drive_compliance``: the position drives' (stiffness, damping),
        each (n_a,) or a [prismatic, revolute] pair, to compensate their deflection (None: no compensation)."""
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
        zero = np.zeros(len(robot.actuated_names))
        self.limits = (np.array([lower, -velocity, -effort, zero, zero]),  # (LIMITED, n_a)
                       np.array([upper, velocity, effort, zero, zero]))
        self.set_gain_limits(*max_gains)
        self.identity = np.eye(len(robot.output_names))
        self.output_gains = None   # (K_q, D_q), each (n_out,)
        self.jacobian = None       # J = P J_m of the last update with impedance (n_out, n_a)
        if impedance is not None:
            self.set_impedance(*impedance)
        self.drive_compliance = None  # (1/K, D/K) of the position drives, (n_a,) each
        if drive_compliance is not None:
            stiffness, damping = (robot.per_kind(robot.actuated_names, values) for values in drive_compliance)
            if not (np.all(stiffness > 0.0) and np.all(np.isfinite(stiffness)) and np.all(damping >= 0.0)):
                raise ValueError(f"drive stiffness must be > 0 and damping ≥ 0, got {stiffness.tolist()}, "
                                 f"{damping.tolist()}")
            self.drive_compliance = (1.0 / stiffness, damping / stiffness)

    def set_impedance(self, stiffness, damping):
        """The outputs' joint impedance: (n_out,) arrays or [prismatic, revolute] pairs [N/m, N·m/rad; N·s/m,
        N·m·s/rad]. Raises ValueError on negative or non-finite gains."""
        gains = []
        for label, values in (("stiffness", stiffness), ("damping", damping)):
            try:
                values = self.robot.per_kind(self.robot.output_names, values)
            except ValueError as error:
                raise ValueError(f"impedance_{label}: {error}") from None
            if not np.all(np.isfinite(values)) or np.any(values < 0.0):
                raise ValueError(f"impedance_{label} must be finite and ≥ 0, got {values.tolist()}")
            gains.append(values)
        self.output_gains = tuple(gains)

    def set_gain_limits(self, max_stiffness, max_damping):
        """The actuators' largest stiffness and damping: scalars, (n_a,) arrays or [prismatic, revolute] pairs."""
        for row, bound in zip((3, 4), (max_stiffness, max_damping)):
            self.limits[1][row] = self.robot.per_kind(self.robot.actuated_names, bound)

    def coupling(self):
        """What the per-actuator stiffness of the last update drops (:func:`joint_impedance.coupling`)."""
        if self.jacobian is None:
            return float("nan")
        return coupling(self.jacobian, self.output_gains[0])

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
        """One command: positions, velocities (eq. 22), efforts (eq. 23) and, with an impedance set, the
        actuators' stiffness and damping, clamped to the actuator limits.

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
        lu, pivots, _ = lapack.dgetrf(inverse_PJ_m)
        rows = [positions, inverse_PJ_m @ output_velocities,                                 # eq. 22
                lapack.dgetrs(lu, pivots, output_torques, trans=1)[0]]                       # eq. 23: (P J_m)ᵀ τ_j
        if self.output_gains is not None:
            self.jacobian = lapack.dgetrs(lu, pivots, self.identity)[0]                      # P J_m
            rows += actuator_gains(self.jacobian, *self.output_gains)
        command = np.array(rows)
        lower, upper = (bound[:len(rows)] for bound in self.limits)
        outside = (command < lower) | (command > upper)
        clamped = ()
        if outside.any():
            clamped = tuple(f"{self.robot.actuated_names[i]} {label}" for label, row in zip(LIMITED, outside)
                            for i in np.flatnonzero(row))
            np.clip(command, lower, upper, out=command)
        if self.drive_compliance is not None:
            compliance, damping = self.drive_compliance
            command[0] = np.clip(command[0] + compliance * command[2] + damping * command[1], lower[0], upper[0])
        gains = (command[3], command[4]) if self.output_gains is not None else (None, None)
        return ActuatorCommand(command[0], command[1], command[2] * self.torque_per_force, clamped, condition, *gains)
