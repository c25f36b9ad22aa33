"""A balance tick's motion made into the joint command (:class:`CommandIntegrator`): the joint limits keep the motion
(:mod:`~humanoid_balance.control.joint_limits`, Kangaroo eq. (IV)), its rates are integrated into the position
command, which restarts from the measured posture when the robot does not follow (the anti-windup of the position
command), and position, velocity and effort are clamped to the URDF limits before leaving. Units: SI.
"""
from typing import NamedTuple, Optional

import numpy as np

from humanoid_balance.control.joint_limits import LimitedMotion, LimitStatus

__all__ = ["CommandIntegrator", "IntegratedCommand"]


class IntegratedCommand(NamedTuple):
    command: np.ndarray              # (3, n_out): position [rad or m], velocity, effort [N·m or N], within the limits
    limits: Optional[LimitedMotion]  # what the joint limits did to the motion (None: not applied)


class CommandIntegrator:
    """The serial-equivalent outputs' command, integrated tick by tick.

    Args:
        lower, upper: (3, n_out) the outputs' position, velocity and effort limits the command is clamped to.
        max_tracking_error: [rad or m] a position command this far from the measured output restarts from the
            measured posture.
        joint_limits: the JointLimits a motion keeps (None: the motion is only clamped, output by output).
    """

    def __init__(self, lower, upper, max_tracking_error, joint_limits=None):
        self.lower, self.upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        self.max_tracking_error, self.joint_limits = max_tracking_error, joint_limits
        self.position = None  # the outputs' position command (None: to be taken from the measured posture)
        self.limited = 0      # updates whose motion a joint's or actuator's limit changed
        self.restarts = 0     # position commands restarted from the measured posture
        self.clamped = 0      # command values clamped to the limits

    def update(self, motion, effort, q, measured, T, dt, tasks):
        """The :class:`IntegratedCommand` of ν_o ``motion`` (6 + n_out; None: the posture held still) and the
        outputs' ``effort``, ``dt`` [s] after the last; ``measured``: the outputs' measured position. ``q``, ``T``
        and ``tasks``: the configuration, ∂ν/∂ν_o and the Jacobians the joint limits ask for (JointLimits.apply)."""
        limits = None
        if motion is None:
            velocity = np.zeros(self.lower.shape[1])
        elif self.joint_limits is None:
            velocity = motion[6:]
        else:
            limits = self.joint_limits.apply(motion, T, q, self.position, dt, tasks)
            velocity = limits.velocity[6:]
            self.limited += limits.status is LimitStatus.LIMITED
        position = self.position + dt * velocity
        if motion is not None and np.abs(position - measured).max() > self.max_tracking_error:
            position = measured  # the robot does not follow (anti-windup): start again from where it is
            self.restarts += 1
        command = np.array([position, velocity, effort])
        outside = (command < self.lower) | (command > self.upper)
        if outside.any():
            self.clamped += int(np.count_nonzero(outside))
            np.clip(command, self.lower, self.upper, out=command)
        self.position = command[0]
        return IntegratedCommand(command, limits)

    def range_rates(self, columns, dt):
        """(lowest, highest) rates [rad/s, m/s] that keep the outputs ``columns`` in their ranges this tick from the
        position command (one already outside may stay or come back)."""
        return (np.minimum((self.lower[0][columns] - self.position[columns]) / dt, 0.0),
                np.maximum((self.upper[0][columns] - self.position[columns]) / dt, 0.0))
