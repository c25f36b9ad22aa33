"""ZMP–CoM balancing controller (Choi & Kim, "Humanoid Robot Balancing", section 4).

On the rolling-sphere / linear inverted pendulum model ċ_i = u_i + ε_i, p_i = c_i − c̈_i/ω_n² (eqs. 22–23),
with ω_n = √(g / c_z), the balancing input per horizontal axis i = x, y is

    u_i = ċ_i,d − k_p,i e_p,i + k_c,i e_c,i,    e_p = p_d − p,  e_c = c_d − c           (eq. 24)

It is input-to-state stable under k_c > ω_n and 0 < k_p < ω_n (eq. 25, Remark 2). Along its error dynamics
(eqs. 26–29) the Lyapunov function V = ½[(k_c² − ω_n²) e_c² + k_p² e_p²] (eq. 30) has
V̇ = −k_c(k_c² − ω_n²) e_c² − k_p(ω_n² − k_p k_c) e_p² when ε = 0 (eq. 31), so V decreases only if also
k_p k_c < ω_n²: that bound is checked too.

A loop that computes on only a share of the ticks its gains were tuned for (a starved computer: later and coarser
feedback) takes k_p in proportion (:func:`slowed`): 0 < s·k_p ≤ k_p keeps eqs. 25 and 31, and the ZMP's loop — the
one that turns a delay into oscillation, the ZMP answering the CoM's acceleration at once — slows with its rate.
"""
from typing import NamedTuple

import numpy as np

from humanoid_balance.errors import HumanoidBalanceError

__all__ = ["GainError", "ZmpComGains", "natural_frequency", "check_gains", "balancing_input", "lyapunov",
           "slowed"]

GRAVITY = 9.81  # m/s²


class GainError(HumanoidBalanceError, ValueError):
    """Gains outside the stability conditions of eqs. 25 and 31; the message says which and why."""


class ZmpComGains(NamedTuple):
    k_p: np.ndarray  # ZMP gain per axis (x, y) [1/s]
    k_c: np.ndarray  # CoM gain per axis (x, y) [1/s]


def natural_frequency(com_height, gravity=GRAVITY):
    """ω_n = √(g / c_z) [rad/s] of the linear inverted pendulum (eq. 23)."""
    return float(np.sqrt(gravity / com_height))


def check_gains(gains, com_height):
    """Raise GainError unless k_c > ω_n, 0 < k_p < ω_n (eq. 25, Remark 2) and k_p k_c < ω_n² (eq. 31)."""
    omega = natural_frequency(com_height)
    for axis, k_p, k_c in zip("xy", np.broadcast_to(gains.k_p, 2), np.broadcast_to(gains.k_c, 2)):
        if not k_c > omega:
            raise GainError(f"k_c,{axis} = {k_c:g} must exceed ω_n = √(g/c_z) = {omega:.4g} 1/s "
                            f"(Choi–Kim eq. 25, CoM height {com_height:.3f} m)")
        if not 0.0 < k_p < omega:
            raise GainError(f"k_p,{axis} = {k_p:g} must lie in (0, ω_n = {omega:.4g}) 1/s (Choi–Kim eq. 25)")
        if not k_p * k_c < omega ** 2:
            raise GainError(f"k_p,{axis}·k_c,{axis} = {k_p * k_c:.4g} must stay below ω_n² = {omega ** 2:.4g} 1/s² "
                            "for the Lyapunov function of eq. 30 to decrease (eq. 31)")


def balancing_input(com_velocity_desired, zmp_desired, zmp, com_desired, com, gains):
    """u = ċ_d − k_p (p_d − p) + k_c (c_d − c) (eq. 24), horizontal components (x, y) [m/s]."""
    e_p = np.asarray(zmp_desired)[:2] - np.asarray(zmp)[:2]
    e_c = np.asarray(com_desired)[:2] - np.asarray(com)[:2]
    return np.asarray(com_velocity_desired)[:2] - gains.k_p * e_p + gains.k_c * e_c


def slowed(gains, share):
    """``gains`` for a loop computing on ``share`` ∈ (0, 1] of the ticks they were tuned for: k_p · share, k_c as it
    is (it must exceed ω_n, eq. 25); the gains themselves at a share of 1."""
    return gains if share >= 1.0 else ZmpComGains(gains.k_p * share, gains.k_c)


def lyapunov(e_c, e_p, gains, com_height):
    """V = ½[(k_c² − ω_n²) e_c² + k_p² e_p²] (eq. 30), summed over the axes given."""
    omega = natural_frequency(com_height)
    return float(np.sum(0.5 * ((gains.k_c ** 2 - omega ** 2) * np.square(e_c) + gains.k_p ** 2 * np.square(e_p))))
