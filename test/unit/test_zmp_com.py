"""ZMP–CoM controller (Choi–Kim eqs. 22–31) on the linear inverted pendulum of eq. 23."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from humanoid_balance.control.zmp_com import (GainError, ZmpComGains, balancing_input, check_gains, lyapunov,
                                              natural_frequency)

HEIGHT = 0.687  # Mahru's CoM height in the paper's experiment [m]


def closed_loop(gains, c0, c_dot0, duration=4.0):
    """Integrate the LIPM c̈ = ω²(c − p) (eq. 22) driven by ċ = u (eq. 23, ε = 0) with u from eq. 24 around the
    rest point c_d = p_d = 0. The law gives ċ = k_p p − k_c c, hence p = (ċ + k_c c)/k_p and the closed loop
    c̈ = ω²(c − (ċ + k_c c)/k_p), integrated by scipy; returns times, c, p."""
    omega2 = natural_frequency(HEIGHT) ** 2
    k_p, k_c = gains.k_p[0], gains.k_c[0]

    def dynamics(_, state):
        c, c_dot = state
        return [c_dot, omega2 * (c - (c_dot + k_c * c) / k_p)]

    solution = solve_ivp(dynamics, (0.0, duration), [c0, c_dot0], rtol=1e-10, atol=1e-12, dense_output=True)
    t = np.linspace(0.0, duration, 2000)
    c, c_dot = solution.sol(t)
    return t, c, (c_dot + k_c * c) / k_p


def test_error_converges_and_lyapunov_function_decreases_inside_the_bounds():
    omega = natural_frequency(HEIGHT)
    for k_c, k_p in [(1.5 * omega, 0.5 * omega), (1.1 * omega, 0.8 * omega), (3.0 * omega, 0.3 * omega)]:
        gains = ZmpComGains(np.array([k_p, k_p]), np.array([k_c, k_c]))
        check_gains(gains, HEIGHT)
        t, c, p = closed_loop(gains, c0=0.03, c_dot0=-0.05)
        # The law itself: u from eq. 24 equals the plant's ċ = k_p p − k_c c at every sample.
        u = [balancing_input([0, 0], [0, 0], [pi, 0], [0, 0], [ci, 0], gains)[0] for ci, pi in zip(c, p)]
        np.testing.assert_allclose(u, gains.k_p[0] * p - gains.k_c[0] * c, atol=1e-12)
        values = np.array([lyapunov(-ci, -pi, gains, HEIGHT) for ci, pi in zip(c, p)])
        assert np.all(np.diff(values) < 0)
        assert max(abs(c[-1]), abs(p[-1])) < 1e-3 * max(abs(c[0]), abs(p[0]))


def test_outside_the_lyapunov_bound_v_is_not_monotone():
    """k_c > ω_n and k_p < ω_n (Remark 2) but k_p k_c > ω_n²: the loop is stable (k_c > k_p) yet V of eq. 30
    grows at times — why check_gains also requires k_p k_c < ω_n²."""
    omega = natural_frequency(HEIGHT)
    gains = ZmpComGains(np.array([0.9 * omega] * 2), np.array([2.0 * omega] * 2))
    t, c, p = closed_loop(gains, c0=0.03, c_dot0=-0.05)
    values = np.array([lyapunov(-ci, -pi, gains, HEIGHT) for ci, pi in zip(c, p)])
    assert np.any(np.diff(values) > 0)
    assert abs(c[-1]) < 1e-3 * abs(c[0])


@pytest.mark.parametrize("k_c, k_p, message", [
    (0.9, 0.5, "k_c,x = "), (1.5, 0.0, "must lie in (0, ω_n"), (1.5, 1.2, "must lie in (0, ω_n"),
    (1.9, 0.9, "for the Lyapunov function of eq. 30 to decrease")])
def test_gains_outside_the_bounds_are_refused_with_the_reason(k_c, k_p, message):
    omega = natural_frequency(HEIGHT)
    with pytest.raises(GainError, match=message.replace("(", r"\(")):
        check_gains(ZmpComGains(np.array([k_p * omega] * 2), np.array([k_c * omega] * 2)), HEIGHT)
