"""Floating-base estimate from an IMU and the kinematics of the feet in contact.

Orientation R and angular velocity come from the IMU (mounted with a known placement in the base).
A foot in contact does not move in the world; when it touches down its world position is anchored
where the current estimate puts it (so the estimate never jumps on re-anchoring), and while it stays
in contact the base position follows from it:

    p_base = p_foot,anchor − R p_foot(θ),            v_base = −ω × (R p_foot(θ)) − R J_foot(θ) θ̇

with p_foot(θ), J_foot(θ) the foot position and linear Jacobian in the base frame. Several feet in
contact give a weighted average (weights: normal forces when known, else equal). With no foot in
contact (aerial phase) the base follows a ballistic trajectory. Units: m, m/s, rad/s.
"""
from typing import NamedTuple

import numpy as np
import pinocchio as pin

__all__ = ["BaseEstimate", "FloatingBaseEstimator"]

GRAVITY = np.array([0.0, 0.0, -9.81])  # m/s²


def _cross(a, b):
    """a × b for 3-vectors (numpy.cross costs ~40 µs of argument handling per call)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


class BaseEstimate(NamedTuple):
    position: np.ndarray          # base origin in the odometry frame [m]
    quaternion_xyzw: np.ndarray   # base orientation in the odometry frame
    rotation: np.ndarray          # the same as a rotation matrix (3, 3)
    linear_velocity: np.ndarray   # base origin velocity, odometry-frame axes [m/s]
    angular_velocity: np.ndarray  # base angular velocity, base-frame axes [rad/s]
    feet_in_contact: tuple        # names of the anchored feet


class FloatingBaseEstimator:
    """IMU + leg-kinematics odometry for a fixed-base :class:`RobotModel` whose root link is the base.

    Args:
        robot: fixed-base model (the base link is the root); joint states come from the closed chain.
        feet: names of the sole frames.
        imu_frame: frame of the IMU in the URDF (default: the root link).
        contact_height: without contact flags, a foot is in contact when its sole is within this height
            [m] of the lowest sole (flat ground).
    """

    def __init__(self, robot, feet, imu_frame=None, contact_height=0.01):
        if robot.floating_base:
            raise ValueError("FloatingBaseEstimator expects the fixed-base model (root link = base)")
        self.robot = robot
        self.model = robot.model
        self.data = robot.model.createData()
        self.feet = tuple(feet)
        self.foot_ids = [robot.frame_id(name) for name in self.feet]
        imu_frame = imu_frame or self.model.frames[1].name
        pin.framesForwardKinematics(self.model, self.data, robot.reference_q)
        self.R_base_imu = self.data.oMf[robot.frame_id(imu_frame)].rotation.copy()  # fixed mounting
        self.contact_height = contact_height
        self.anchors = {}
        self.position = None
        self.velocity = np.zeros(3)

    def _feet_kinematics(self, q, v):
        pin.computeJointJacobians(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        positions, velocities = [], []
        for frame in self.foot_ids:
            positions.append(self.data.oMf[frame].translation.copy())
            J = pin.getFrameJacobian(self.model, self.data, frame, pin.LOCAL_WORLD_ALIGNED)[:3]
            velocities.append(J @ v)
        return np.array(positions), np.array(velocities)

    def _from_anchors(self, feet_offset, feet_rate, omega_world, R, weights):
        total, position, velocity = 0.0, np.zeros(3), np.zeros(3)
        for i, name in enumerate(self.feet):
            if name in self.anchors:
                position += weights[i] * (self.anchors[name] - feet_offset[i])
                velocity += weights[i] * (-_cross(omega_world, feet_offset[i]) - R @ feet_rate[i])
                total += weights[i]
        return position / total, velocity / total

    def update(self, q, v, imu_quaternion_xyzw, imu_angular_velocity, dt, contacts=None, weights=None):
        """One estimate from the joint state (q, v), the IMU reading and dt [s].

        Args:
            contacts: optional booleans per foot; default is the lowest-sole heuristic.
            weights: optional positive weights per foot (e.g. normal forces [N]).
        """
        x, y, z, w = imu_quaternion_xyzw
        R_world_imu = pin.Quaternion(w, x, y, z).normalized().toRotationMatrix()
        R = R_world_imu @ self.R_base_imu.T
        omega_base = self.R_base_imu @ np.asarray(imu_angular_velocity, dtype=float)
        omega_world = R @ omega_base
        feet_base, feet_rate = self._feet_kinematics(q, v)
        feet_offset = feet_base @ R.T  # R p_foot, one row per foot
        if contacts is None:
            heights = feet_offset[:, 2]
            contacts = heights - heights.min() < self.contact_height
        for name, touching in zip(self.feet, contacts):
            if not touching:
                self.anchors.pop(name, None)
        w = np.ones(len(self.feet)) if weights is None else np.maximum(np.asarray(weights, float), 1e-9)
        if self.position is None:  # start with the lowest sole on the ground plane z = 0, under the origin
            self.position = np.array([0.0, 0.0, -feet_offset[:, 2].min()])
        elif self.anchors:  # feet that stay in contact carry the base
            self.position, self.velocity = self._from_anchors(feet_offset, feet_rate, omega_world, R, w)
        else:  # aerial phase, or touchdown after it: ballistic prediction
            self.velocity = self.velocity + GRAVITY * dt
            self.position = self.position + self.velocity * dt
        touchdown = False
        for name, offset, touching in zip(self.feet, feet_offset, contacts):
            if touching and name not in self.anchors:
                self.anchors[name] = self.position + offset  # anchored where the estimate puts it: no jump
                touchdown = True
        if touchdown:
            self.velocity = self._from_anchors(feet_offset, feet_rate, omega_world, R, w)[1]
        return BaseEstimate(self.position.copy(), pin.Quaternion(R).coeffs().copy(), R, self.velocity.copy(),
                            omega_base, tuple(name for name in self.feet if name in self.anchors))
