"""The capture point (DCM) as the feedback variable: the desired ZMP of the linear inverted pendulum (Englsberger,
Ott, Albu-Schäffer 2015, "Three-dimensional bipedal walking control based on divergent component of motion",
eq. 35's horizontal part; Kajita et al. 2010, eq. 9; the LIPM stabilizer of mc_rtc).

The capture point ξ = c + ċ/ω runs away from the ZMP, ξ̇ = ω (ξ − p). The ZMP

    p_d = p_ref + (1 + k_ξ/ω) (ξ − ξ_ref) + (k_i/ω) ē                                    (DCM feedback)

with ξ_ref = c_ref + ċ_ref/ω and p_ref = c_ref − c̈_ref/ω² the reference's, makes its error decay at the rate k_ξ,
ξ̇ − ξ̇_ref = −k_ξ (ξ − ξ_ref); ē, the error's exponential moving average over ``integral_window`` seconds (saturated
at ``max_average_error``), takes out a steady offset (a model's CoM error, a lean). The wrench that realises p_d on
the pendulum is the force m ω² (c − p_d) horizontally and m g vertically through the CoM, without moment about it.
Units: SI (m, s, N).
"""
import math

import numpy as np

from humanoid_balance.control.zmp_com import GRAVITY

__all__ = ["DcmFeedback", "zmp_wrench"]


def zmp_wrench(mass, com, zmp, omega):
    """The CoM wrench [f; τ] (world axes, at the CoM) of the pendulum whose ZMP is ``zmp`` (2,): f = [m ω² (c − p);
    m g], τ = 0 [N, N·m]."""
    wrench = np.zeros(6)
    wrench[:2] = mass * omega ** 2 * (np.asarray(com)[:2] - zmp)
    wrench[2] = mass * GRAVITY
    return wrench


class DcmFeedback:
    """The DCM feedback law of the module, with its error's moving average kept between ticks."""

    def __init__(self, gain, integral_gain, integral_window, max_average_error):
        self.gain, self.integral_gain = gain, integral_gain
        self.integral_window, self.max_average_error = integral_window, max_average_error
        self.average_error = np.zeros(2)  # ē [m]

    def reset(self):
        self.average_error[:] = 0.0

    def desired_zmp(self, capture_point, reference_capture_point, reference_zmp, omega, dt):
        """p_d (2,) [m] for the measured capture point ξ, the reference's ξ_ref and p_ref (2,) [m], ω [1/s], after
        ``dt`` [s]."""
        error = np.asarray(capture_point) - reference_capture_point
        if self.integral_gain:
            blend = 1.0 - math.exp(-dt / self.integral_window)
            self.average_error += blend * (error - self.average_error)
            np.clip(self.average_error, -self.max_average_error, self.max_average_error, out=self.average_error)
        return reference_zmp + (1.0 + self.gain / omega) * error + (self.integral_gain / omega) * self.average_error
