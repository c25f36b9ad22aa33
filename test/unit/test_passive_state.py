"""Passive-state estimator (Kangaroo eqs. 35–40) tracking sinusoidal actuator motion at 1 kHz (Fig. 19),
compared with the exact loop closure θ_u(θ̄_a) solved by Newton at every sample."""
import numpy as np
import pytest

from humanoid_balance.estimation import PassiveStateEstimator
from support.model_fixtures import load


@pytest.mark.parametrize("name", ["crank_slider", "kangaroo_like"])
def test_tracks_sinusoidal_actuators_on_the_constraint_manifold(name):
    robot, chain = load(name)
    lower, upper = robot.position_limits(robot.actuated_names)
    centre, amplitude = (lower + upper) / 2, 0.4 * (upper - lower) / 2  # inside the strokes
    frequency = np.linspace(0.5, 1.0, len(centre))  # Hz, a different one per actuator
    dt, steps = 1e-3, 600

    def measured(t):
        phase = 2 * np.pi * frequency * t
        return centre + amplitude * np.sin(phase), amplitude * 2 * np.pi * frequency * np.cos(phase)

    exact = robot.reference_q.copy()
    for s in np.linspace(0.0, 1.0, 11)[1:]:  # walk the mechanism to the centre of the strokes
        exact[robot.actuated_q] = robot.reference_q[robot.actuated_q] + s * (centre - robot.reference_q[robot.actuated_q])
        exact = chain.solve_passive(exact).q
    estimator = PassiveStateEstimator(chain, alpha=1000.0, beta=1000.0, initial_q=exact)
    for k in range(steps):
        theta_a, theta_a_dot = measured(k * dt)
        state = estimator.update(theta_a, theta_a_dot, dt)
        exact[robot.actuated_q] = measured((k + 1) * dt)[0]
        exact = chain.solve_passive(exact).q
        if k > 10:
            assert state.residual_norm < 1e-6
            assert np.all(np.abs(state.q[robot.actuated_q] - exact[robot.actuated_q]) < 3e-5 * amplitude)
            assert np.abs(state.q[robot.passive_q] - exact[robot.passive_q]).max() < 1e-4


def test_serial_robot_has_nothing_passive_and_follows_its_encoders():
    """Mahru I (no loops): the estimate is the measurement after the β correction, exactly the Euler step
    θ_k+1 = θ_k + dt (θ̄̇ + β (θ̄ − θ_k)) of eq. 38, and the velocity is the measured one."""
    robot, chain = load("mahru")
    estimator = PassiveStateEstimator(chain, alpha=1000.0, beta=100.0)
    theta, rate, dt = np.linspace(-0.2, 0.2, len(robot.actuated_names)), np.full(len(robot.actuated_names), 0.5), 1e-3
    state = estimator.update(theta, rate, dt)
    previous = robot.reference_q[robot.actuated_q]
    assert np.allclose(state.q[robot.actuated_q], previous + dt * (rate + 100.0 * (theta - previous)), atol=1e-15)
    assert np.array_equal(state.v[robot.actuated_v], rate) and state.residual_norm == 0.0
