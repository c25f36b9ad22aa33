"""Passive-state estimator of closed chains (Kangaroo paper, section VI-A, eqs. 35–40).

From measured actuated positions θ̄_a and velocities θ̄̇_a, track the full joint state θ = [θ_u; θ_a]:

    θ̇_a,k  = θ̄̇_a + β (θ̄_a − θ_a,k)                         measurement correction (eq. 38)
    θ̇*_u   = J_m(θ_k) θ̇_a,k − α J_l,u(θ_k)⁻¹ e_l(θ_k)         constraint correction (eqs. 37–38)
    θ_k+1  = θ_k + dt [θ̇*_u; θ̇_a,k]                           Euler step (eqs. 39–40)
    θ̇_k+1  = [J_m(θ_k) θ̄̇_a; θ̄̇_a]                            velocity estimate (eqs. 35–36)

The constraint term makes the loop error obey ė_l = −α e_l. The gains α, β [1/s] are bounded by the loop
rate (the paper): each step uses min(α, 1/dt) and min(β, 1/dt), so a slower or jittery stream never turns
the corrections into an overshooting, diverging iteration. Tracking from the previous state keeps the
estimate on its assembly branch.
"""
import math
from typing import NamedTuple

import numpy as np

__all__ = ["PassiveStateEstimator", "PassiveState"]


class PassiveState(NamedTuple):
    q: np.ndarray              # configuration (full pinocchio vector; base part untouched)
    v: np.ndarray              # joint velocities (full velocity vector; base part untouched)
    residual_norm: float       # ‖e_l(θ_k)‖ before the step [m, rad]


class PassiveStateEstimator:
    """Eqs. 35–40 on a :class:`~humanoid_balance.model.closed_chain.ClosedChain`."""

    def __init__(self, chain, alpha=1000.0, beta=1000.0, initial_q=None):
        self.chain = chain
        self.robot = chain.robot
        self.alpha = alpha
        self.beta = beta
        self.q = np.array(self.robot.reference_q if initial_q is None else initial_q, dtype=float)
        self.v = np.zeros(self.robot.nv)
        self._rates = np.zeros((self.robot.nv, 2))  # [θ̇_a,k, θ̄̇_a] on the actuated rows, zero elsewhere

    def update(self, theta_a, theta_a_dot, dt):
        """One estimator step with measured θ̄_a [m or rad], θ̄̇_a [m/s or rad/s] and time step dt [s]."""
        robot = self.robot
        lin = self.chain.linearize(self.q)
        alpha, beta = min(self.alpha, 1.0 / dt), min(self.beta, 1.0 / dt)
        theta_a_rate = theta_a_dot + beta * (theta_a - self.q[robot.actuated_q])
        residual_norm = math.sqrt(lin.residual @ lin.residual)
        if self.chain.m:
            # θ̇*_u = −J_l,u⁻¹ (J_l,a θ̇_a,k + α e_l) and θ̇_u = −J_l,u⁻¹ J_l,a θ̄̇_a: one LU, two right-hand sides.
            rates = self._rates
            rates[robot.actuated_v, 0] = theta_a_rate
            rates[robot.actuated_v, 1] = theta_a_dot
            rhs = lin.J_l @ rates
            rhs[:, 0] += alpha * lin.residual
            solved = lin.solve_passive(rhs)  # SingularConfigurationError where J_l,u is singular
            self.q[robot.passive_q] -= dt * solved[:, 0]
            self.v[robot.passive_v] = -solved[:, 1]
        self.q[robot.actuated_q] += dt * theta_a_rate  # (a serial robot: the actuators are the whole state)
        self.v[robot.actuated_v] = theta_a_dot
        return PassiveState(self.q.copy(), self.v.copy(), residual_norm)
