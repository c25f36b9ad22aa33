"""Full robot state from actuator encoders and an IMU: the state_estimator node's core.

Per joint-state sample: relative encoders + calibrated offsets → θ̄_a; the passive-state estimator
(Kangaroo eqs. 35–40) tracks θ = [θ_u; θ_a]; the floating-base estimator adds the base pose and twist.
The first sample, or one after a gap longer than ``max_dt``, re-closes the loops (Newton, continued from the last
estimate or the reference when the actuators are far from it) instead of integrating across the gap.
"""
from typing import NamedTuple, Optional

import numpy as np

from humanoid_balance.estimation.calibration import calibrate_actuator_offsets
from humanoid_balance.estimation.floating_base import FloatingBaseEstimator
from humanoid_balance.estimation.passive_state import PassiveStateEstimator
from humanoid_balance.model.closed_chain import ClosedChain
from humanoid_balance.model.continuation import close_loops

__all__ = ["RobotState", "RobotStateEstimator", "ImuSample", "floating_state"]


class ImuSample(NamedTuple):
    quaternion_xyzw: np.ndarray   # orientation of the IMU frame in the world
    angular_velocity: np.ndarray  # IMU-frame angular rate [rad/s]
    specific_force: Optional[np.ndarray] = None  # accelerometer, IMU frame, mean since the last sample [m/s²]


LEVEL_IMU = ImuSample(np.array([0.0, 0.0, 0.0, 1.0]), np.zeros(3))


def floating_state(base_pose, base_twist, q, v):
    """The floating-base configuration and velocity of a floating-base RobotModel: ``base_pose`` (position, quaternion
    xyzw) (7,) [m], ``base_twist`` (linear, angular) in the base frame (6,) [m/s, rad/s] — an odom message's pose
    and twist (REP-105) — and every joint's ``q``, ``v`` (robot.joint_names order; ``v`` None: at rest)."""
    return np.concatenate([base_pose, q]), np.concatenate([base_twist, np.zeros(len(q)) if v is None else v])


class RobotState(NamedTuple):
    q: np.ndarray           # every joint, robot.joint_names order [rad or m]
    v: np.ndarray           # every joint velocity [rad/s or m/s]
    base: object            # floating_base.BaseEstimate
    residual_norm: float    # ‖e_l‖ of the loop equations [m, rad]

    def base_pose(self):
        """Position and quaternion xyzw of the base (7,) [m]: odom's pose."""
        return np.concatenate([self.base.position, self.base.quaternion_xyzw])

    def base_twist(self):
        """Linear and angular velocity of the base in the base frame (6,) [m/s, rad/s]: odom's twist."""
        base = self.base
        return np.concatenate([base.rotation.T @ base.linear_velocity, base.angular_velocity])

    def floating(self):
        """(q, v) of the floating-base model (:func:`floating_state`)."""
        return floating_state(self.base_pose(), self.base_twist(), self.q, self.v)


class RobotStateEstimator:
    """Passive-state + floating-base estimation for a fixed-base :class:`RobotModel` (root link = base)."""

    def __init__(self, robot, feet, imu_frame=None, alpha=1000.0, beta=1000.0, contact_height=0.01, max_dt=0.1,
                 **inertial):
        """``inertial``: the kinematic-inertial base estimate's time constants and gate (FloatingBaseEstimator)."""
        self.robot = robot
        self.chain = ClosedChain(robot)
        self.passive = PassiveStateEstimator(self.chain, alpha=alpha, beta=beta)
        self.base = FloatingBaseEstimator(robot, feet, imu_frame=imu_frame, contact_height=contact_height, **inertial)
        self.offsets = np.zeros(len(robot.actuated_names))
        self.max_dt = max_dt
        self.last_time = None

    def update(self, theta_a_raw, theta_a_dot, time, imu=LEVEL_IMU, contacts=None):
        """One sample: relative actuator positions [m or rad] and rates (``None``: finite differences of the
        positions), time [s], latest IMU sample, and each foot's contact phase (True: in contact) when they are
        known (None: the feet within ``contact_height`` of the lowest sole are taken as in contact). With every foot
        in the air the base is ballistic; a foot that touches down is anchored where the estimate puts it."""
        theta_a = np.asarray(theta_a_raw, dtype=float) + self.offsets
        dt = None if self.last_time is None else time - self.last_time
        self.last_time = time
        if theta_a_dot is None:
            previous = self.passive.q[self.robot.actuated_q]
            theta_a_dot = (theta_a - previous) / dt if dt and 0.0 < dt <= self.max_dt else np.zeros_like(theta_a)
        if dt is None or not 0.0 < dt <= self.max_dt:
            self.passive.q = close_loops(self.chain, theta_a, start=self.passive.q).q
            self.passive.v[:] = 0.0
            self.passive.v[self.robot.actuated_v] = theta_a_dot
            self.passive.v[self.robot.passive_v] = self.chain.mapping_jacobian(self.passive.q) @ theta_a_dot
            state = (self.passive.q.copy(), self.passive.v.copy(),
                     float(np.linalg.norm(self.chain.residual(self.passive.q))))
            dt = 0.0
        else:
            estimate = self.passive.update(theta_a, theta_a_dot, dt)
            state = estimate.q, estimate.v, estimate.residual_norm  # copies of the estimator's state
        q, v, residual = state
        base = self.base.update(q, v, imu.quaternion_xyzw, imu.angular_velocity, dt, contacts,
                                specific_force=imu.specific_force)
        return RobotState(q, v, base, residual)

    def calibrate(self, theta_a_raw, measured_passive, tolerance=1e-10, max_iterations=20):
        """Eqs. 41–42 from relative readings and absolute passive encoders; adopt the offsets only on success."""
        result = calibrate_actuator_offsets(self.chain, theta_a_raw, measured_passive, initial_q=self.passive.q,
                                            tolerance=tolerance, max_iterations=max_iterations)
        if result.converged:
            self.offsets = result.offsets
            self.passive.q = result.q
            self.last_time = None
        return result
