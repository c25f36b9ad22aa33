"""Floating-base estimate from an IMU and the kinematics of the feet in contact.

Orientation R and angular velocity come from the IMU (mounted with a known placement in the base).
A foot in contact does not move in the world; when it touches down its world position is anchored
where the current estimate puts it (so the estimate never jumps on re-anchoring), and while it stays
in contact the base position follows from it:

    p_base = p_foot,anchor − R p_foot(θ),            v_base = −ω × (R p_foot(θ)) − R J_foot(θ) θ̇

with p_foot(θ), J_foot(θ) the foot position and linear Jacobian in the base frame. Several feet in
contact give a weighted average (weights: normal forces when known, else equal). With no foot in
contact (aerial phase) the base follows a ballistic trajectory.

With an accelerometer (rigidly on the base, at its origin, reading the specific force f, the mean over the sample
period), the estimate is kinematic-inertial instead: each sample is predicted from the accelerometer,

    v⁻ = v + (R f + g) dt,      p⁻ = p + (v + v⁻) dt / 2,

and, while a foot carries the base, drawn towards the feet's kinematics with time constants τ_p and τ_v. A contact
phase is known some samples late: until a lift-off is seen, the "anchored" feet already rise with the legs, and
until a touchdown is seen the base already brakes. The accelerometer sees neither lag, and a kinematic velocity
farther than ``kinematic_gate`` from the prediction (a foot that is lifting, rocking or slipping) is not taken;
unless the feet have disagreed for ``gate_timeout``: then the prediction is what went wrong (an impact beyond the
accelerometer's range), and the velocity starts over from the feet's.

A foot in contact whose sole has turned by more than ``tipping_tilt`` from the flattest sole in contact (their
orientations from the legs' kinematics alone, so that an IMU's bias does not count) is tipping over an edge: its
sole's origin moves with the roll, so it does not carry the base while the flat one does. Soles that tip together
(onto their toes, say) keep carrying it, nothing better being known. The estimate names the tipping feet. A sole
that tipped for at most ``ROLL_MEMORY`` without leaving the floor carries the base again from its old anchor once it
is as flat as another: rolled back, its origin is where it was (re-anchoring it where the estimate puts it would make
each reading that crosses ``tipping_tilt`` by an encoder's bias and noise a step of a random walk: 200 in 6 s with
robustness case (b)'s). One that tipped longer may have slid or turned on its edge, and is anchored again where the
estimate puts it.
Units: m, m/s, m/s², rad, rad/s, s.
"""
import math
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from humanoid_balance.model.kinematics import FramePlacements
from humanoid_balance.model.soles import TIPPING_TILT

__all__ = ["BaseEstimate", "FloatingBaseEstimator", "ROLL_MEMORY"]

GRAVITY = np.array([0.0, 0.0, -9.81])  # m/s²


ROLL_MEMORY = 0.05
"""[s] a sole tipped in contact for at most this long takes its old anchor back when flat (see the module)."""


class BaseEstimate(NamedTuple):
    position: np.ndarray          # base origin in the odometry frame [m]
    quaternion_xyzw: np.ndarray   # base orientation in the odometry frame
    rotation: np.ndarray          # the same as a rotation matrix (3, 3)
    linear_velocity: np.ndarray   # base origin velocity, odometry-frame axes [m/s]
    angular_velocity: np.ndarray  # base angular velocity, base-frame axes [rad/s]
    feet_in_contact: tuple        # names of the anchored feet
    tipping: tuple = ()           # names of the feet in contact whose soles turned beyond tipping_tilt from the
                                  # flattest one's


class FloatingBaseEstimator:
    """IMU + leg-kinematics odometry for a fixed-base :class:`RobotModel` whose root link is the base.

    Args:
        robot: fixed-base model (the base link is the root); joint states come from the closed chain.
        feet: names of the sole frames.
        imu_frame: frame of the IMU in the URDF (default: the root link).
        contact_height: without contact flags, a foot is in contact when its sole is within this height
            [m] of the lowest sole (flat ground).
        position_time_constant, velocity_time_constant: τ_p, τ_v of the kinematic correction [s].
        kinematic_gate: largest difference of the kinematic velocity from the inertial prediction that is taken,
            per axis [m/s].
        gate_timeout: anchored feet that disagree this long are taken anyway [s].
        tipping_tilt: a foot in contact whose sole turned more than this from the flattest one in contact is tipping
            (see the module) [rad].
    """

    def __init__(self, robot, feet, imu_frame=None, contact_height=0.01, position_time_constant=0.1,
                 velocity_time_constant=0.2, kinematic_gate=0.3, gate_timeout=0.1, tipping_tilt=TIPPING_TILT):
        if robot.floating_base:
            raise ValueError("FloatingBaseEstimator expects the fixed-base model (root link = base)")
        self.robot = robot
        self.model = robot.model
        self.data = robot.model.createData()
        self.feet = tuple(feet)
        self.foot_ids = [robot.frame_id(name) for name in self.feet]
        self.R_base_imu = robot.mounting_rotation(imu_frame or robot.root_link)  # fixed mounting
        self.imu_Q_base = pin.Quaternion(self.R_base_imu.T)
        self.foot_placements = FramePlacements(self.data, self.foot_ids)
        self.equal_weights = np.ones(len(self.feet))
        self.contact_height = contact_height
        self.anchored = np.zeros(len(self.feet), dtype=bool)  # feet carrying the base
        self.anchors = np.zeros((len(self.feet), 3))          # their world positions [m]
        self.rolled = np.zeros(len(self.feet), dtype=bool)    # anchored feet tipping in contact: anchors kept
        self.rolled_for = np.zeros(len(self.feet))            # for how long [s]
        self.position = None
        self.velocity = np.zeros(3)
        if not min(position_time_constant, velocity_time_constant, kinematic_gate) > 0.0:
            raise ValueError(f"position_time_constant, velocity_time_constant and kinematic_gate must be > 0, got "
                             f"{position_time_constant}, {velocity_time_constant}, {kinematic_gate}")
        self.time_constants = (position_time_constant, velocity_time_constant)
        self.kinematic_gate, self.gate_timeout = kinematic_gate, gate_timeout
        self.disagreeing = 0.0  # how long the anchored feet's velocity has been out of the gate [s]
        self.tipping_cosine = math.cos(tipping_tilt)  # two soles' normals' dot product below it: one tipping

    def _feet_kinematics(self, q, v):
        """Sole positions in the base frame (feet, 3) and their velocities (feet, 3) [m, m/s]."""
        model, data = self.model, self.data
        pin.forwardKinematics(model, data, q, v)
        for frame in self.foot_ids:
            pin.updateFramePlacement(model, data, frame)
        rates = np.array([pin.getFrameVelocity(model, data, frame, pin.LOCAL_WORLD_ALIGNED).linear
                          for frame in self.foot_ids])
        rotations_T, positions = self.foot_placements.read()
        return positions, rates, rotations_T[:, 2, :]  # the soles' normals, base frame (feet, 3)

    def _from_anchors(self, feet_offset, feet_rate, omega_world, R, weights):
        w = weights * self.anchored
        w /= w.sum()
        position = w @ (self.anchors - feet_offset)
        velocity = -w @ (feet_offset @ pin.skew(omega_world).T + feet_rate @ R.T)  # −ω × R p − R ṗ
        return position, velocity

    def _fuse(self, specific_force, R, dt, kinematics):
        """The kinematic-inertial estimate (see the module): the accelerometer's prediction, drawn towards
        ``kinematics`` (position, velocity of the anchored feet, or None) when it is close enough."""
        velocity = self.velocity + (R @ (self.R_base_imu @ specific_force) + GRAVITY) * dt
        position = self.position + (self.velocity + velocity) * (0.5 * dt)
        if kinematics is None:
            self.disagreeing = 0.0
            return position, velocity
        (kinematic_position, kinematic_velocity), (tau_p, tau_v) = kinematics, self.time_constants
        if np.abs(kinematic_velocity - velocity).max() > self.kinematic_gate:
            self.disagreeing += dt
            if self.disagreeing <= self.gate_timeout:
                return position, velocity
            velocity = kinematic_velocity.copy()
        self.disagreeing = 0.0
        position += (kinematic_position - position) * min(dt / tau_p, 1.0)
        velocity += (kinematic_velocity - velocity) * min(dt / tau_v, 1.0)
        return position, velocity

    def update(self, q, v, imu_quaternion_xyzw, imu_angular_velocity, dt, contacts=None, weights=None,
               specific_force=None):
        """One estimate from the joint state (q, v), the IMU reading and dt [s].

        Args:
            contacts: optional booleans per foot; default is the lowest-sole heuristic.
            weights: optional positive weights per foot (e.g. normal forces [N]).
            specific_force: the accelerometer's reading, IMU frame, mean over dt [m/s²]; None: kinematics only.
        """
        world_Q_imu = pin.Quaternion(np.asarray(imu_quaternion_xyzw, dtype=float))  # coefficients x, y, z, w
        world_Q_imu.normalize()
        world_Q_base = world_Q_imu * self.imu_Q_base
        R = world_Q_base.toRotationMatrix()
        omega_base = self.R_base_imu @ np.asarray(imu_angular_velocity, dtype=float)
        omega_world = R @ omega_base
        feet_base, feet_rate, normals = self._feet_kinematics(q, v)
        feet_offset = feet_base @ R.T  # R p_foot, one row per foot
        if contacts is None:
            heights = feet_offset[:, 2]
            contacts = heights - heights.min() < self.contact_height
        contacts = np.asarray(contacts, dtype=bool)
        tipping = flat_again = np.zeros(len(contacts), dtype=bool)
        if contacts.sum() > 1:
            flattest = normals[contacts][np.argmax(normals[contacts] @ R[2])]  # (R n)_z: a normal's vertical part
            tipping = contacts & (normals @ flattest < self.tipping_cosine)
            flat_again = contacts & ~tipping & self.rolled & (self.rolled_for <= ROLL_MEMORY)  # its anchor holds
        self.rolled = tipping & (self.anchored | self.rolled)
        self.rolled_for = np.where(self.rolled, self.rolled_for + dt, 0.0)
        contacts = contacts & ~tipping
        self.anchored = (self.anchored & contacts) | flat_again
        w = self.equal_weights if weights is None else np.maximum(np.asarray(weights, float), 1e-9)
        if self.position is None:  # start with the lowest sole on the ground plane z = 0, under the origin
            self.position = np.array([0.0, 0.0, -feet_offset[:, 2].min()])
        elif specific_force is not None:
            kinematics = self._from_anchors(feet_offset, feet_rate, omega_world, R, w) if self.anchored.any() else None
            self.position, self.velocity = self._fuse(specific_force, R, dt, kinematics)
        elif self.anchored.any():  # feet that stay in contact carry the base
            self.position, self.velocity = self._from_anchors(feet_offset, feet_rate, omega_world, R, w)
        else:  # aerial phase, or touchdown after it: ballistic prediction
            self.velocity = self.velocity + GRAVITY * dt
            self.position = self.position + self.velocity * dt
        touchdown = contacts & ~self.anchored
        if touchdown.any():
            self.anchors[touchdown] = self.position + feet_offset[touchdown]  # anchored where the estimate puts
            self.anchored |= touchdown                                          # it: no jump
            if specific_force is None:
                self.velocity = self._from_anchors(feet_offset, feet_rate, omega_world, R, w)[1]
        return BaseEstimate(self.position.copy(), world_Q_base.coeffs().copy(), R, self.velocity.copy(),
                            omega_base, tuple(name for name, anchored in zip(self.feet, self.anchored) if anchored),
                            tuple(name for name, tips in zip(self.feet, tipping) if tips))
