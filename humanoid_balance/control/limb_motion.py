"""Limb motions embedded in the balance (Kim–Choi–Kim's J-busy and C-busy sections), granted only as far as the robot
stays up.

J-busy limbs follow joint trajectories — the paths q_d(τ) of their points, :mod:`~humanoid_balance.control.
joint_trajectory` — on one clock τ that the balance may slow down (time scaling): the rates sent are
s q̇_d(τ) + TRACKING_GAIN (q_d(τ) − q), q the position command, and τ advances by s dt, so the path is the one asked,
only later, and its positions are reached. The largest s ≤ 1 is taken that keeps,
over a preview of the trajectories, every joint within its velocity limit and the ZMP the motion causes inside the
support polygon: a limb's motion moves the ZMP by the rate of change of the centroidal angular momentum it makes,
which a CoM controller cannot cancel (Choi–Kim section 5, the dancing arms), and by its linear momentum's until the
legs have moved the body to hold the CoM (eqs. 14–20, on drives that follow late):
Δp = (−(L̇_y + h ṗ_x), L̇_x − h ṗ_y) / (m g) with [ṗ; L̇] = Σ A_limb q̈ (A: the centroidal momentum matrix, Garofalo et
al. eq. 2; h: the CoM height), and q̈ scales with s². s changes at a bounded rate, so that slowing down is itself
smooth; the prediction is enlarged by PREDICTION_SAFETY (what the rigid model leaves out), and the measured ZMP lowers
a ceiling on s (:meth:`TrajectoryClock.advance`). Every mode follows them, viip only while it stands: during a jump
the limbs hold their posture, their clocks running all the same.

C-busy limbs follow target poses: a target farther from the limb's root than the sum of its link lengths is beyond
any reach (:class:`OutOfReach`); the others are followed at a bounded Cartesian speed and acceleration, the target
brought onto that sphere when the body's motion carries it out, and a limb whose end stops short of its target (its
joint limits, its workspace's edge) says so. Units: m, rad, s.
"""
import math

import numpy as np
import pinocchio as pin

from humanoid_balance.control.joint_trajectory import JointPath
from humanoid_balance.control.reference_governor import Limitation
from humanoid_balance.control.zmp_com import GRAVITY
from humanoid_balance.errors import HumanoidBalanceError

__all__ = ["TrajectoryClock", "PoseTargets", "OutOfReach", "limb_reach", "SLOWED",
           "BEYOND_REACH", "WORKSPACE_EDGE", "POSE_APPROACHING", "IGNORED_OUT_OF_REACH"]

SLOWED = "slowed down (time scaling) to keep the ZMP in the support polygon and the joints within their speed"
BEYOND_REACH = "brought back onto the limb's reach"
WORKSPACE_EDGE = "stopped at the edge of the limb's workspace"
POSE_APPROACHING = "approached at the limb's speed and acceleration limits"
IGNORED_OUT_OF_REACH = "ignored: farther from the limb's root than its reach"
PREVIEW, PREVIEW_STEP = 1.0, 0.01  # [s] of trajectory time looked ahead, and its sampling (each sample the slope of
                                   # the segment it lies on)
SCALE_RATE_DOWN, SCALE_RATE_UP = 4.0, 1.0  # [1/s] how fast the time scale may fall and recover
FEEDBACK_RATE_DOWN, FEEDBACK_RATE_UP = 2.0, 0.1  # [1/s] the measured ZMP's ceiling on the scale falls, rises
FEEDBACK_RECOVERED = 0.01  # [m] ... once the measured ZMP is this far inside the limbs' polygon again
SCALE_STEP_ACCELERATION = 2.0  # [rad/s², m/s²] ... or as fast as changes no joint rate by more than this per second
SLOWED_BELOW = 0.999  # a time scale below this is reported as slowed
PREDICTION_SAFETY = 4.0  # the predicted ZMP shift, enlarged by what the rigid model leaves out: on kangaroo_like's
                         # position drives the ZMP moved two to three times as far as predicted (the drives' lag and
                         # compliance, the trunk's bobbing)
ZMP_MARGIN_FRACTION = 1.0  # limb motions keep the ZMP this fraction of the CoM's support margin inside the edges
BEYOND_REACH_SLACK = 0.25  # a target accepted within the reach that the body's motion carried up to this fraction
                           # beyond it is followed onto the reach; further, it is ignored
TRACKING_GAIN = 10.0  # [1/s] a J-busy limb's position command's error from its path, fed back
STALL_TIME, STALL_PROGRESS, STALL_DISTANCE = 0.5, 1e-3, 0.01  # [s, m, m] a limb end that came no closer has stopped


class OutOfReach(HumanoidBalanceError, ValueError):
    """A target no posture of the limb can reach; the message says how far and what the reach is."""


class TrajectoryClock:
    """The J-busy limbs' paths on one clock the balance may slow (see the module).

    Args:
        columns: limb → indices of its joints among the serial-equivalent outputs.
        velocity_limits: limb → its joints' velocity limits [rad/s, m/s].
        position_limits: limb → (lower, upper) of its joints' ranges [rad, m].
    """

    def __init__(self, columns, velocity_limits, position_limits):
        self.columns = {limb: np.asarray(c, dtype=int) for limb, c in columns.items()}
        self.velocity_limits = {limb: np.asarray(v, dtype=float) for limb, v in velocity_limits.items()}
        self.position_limits = {limb: (np.asarray(lower, dtype=float), np.asarray(upper, dtype=float))
                                for limb, (lower, upper) in position_limits.items()}
        self.paths, self.tau = {}, {}
        self.scale = 1.0
        self.ceiling = 1.0  # on the scale, from the measured ZMP (advance)
        self.preview = np.arange(0.0, PREVIEW + 0.5 * PREVIEW_STEP, PREVIEW_STEP)

    def follow(self, limb, trajectory, now, position):
        """Take up ``trajectory`` (a LimbTrajectory) for ``limb`` — a new one replaces the last — at ``now`` [s on its
        stamps' clock], from ``position``, the outputs' position command (n_out,) [rad, m], and the velocity and
        acceleration of the path the limb was following (:class:`~humanoid_balance.control.joint_trajectory.JointPath`).
        """
        velocity = acceleration = None
        if limb in self.paths:
            _, velocity, acceleration = self.paths[limb].sample(self.tau[limb])
        tau = now - trajectory.start
        self.paths[limb] = JointPath(trajectory, tau, position[self.columns[limb]], velocity, acceleration)
        self.tau[limb] = tau

    @property
    def moving(self):
        return any(path.active(self.tau[limb]) for limb, path in self.paths.items())

    def bound(self, momentum_map, mass, height, zmp_reference, polygon):
        """The largest time scale in [0, 1] the preview allows (see the module).

        Args:
            momentum_map: the centroidal momentum matrix [A_p; A_l] in output coordinates (6, 6 + n_out): a limb's
                columns give the momentum its joints make with the rest of the body still [kg m/s, kg m²/s per rad/s].
            height: of the CoM above the floor [m].
            zmp_reference: where the balance puts the ZMP, world frame [m].
            polygon: the SupportPolygon the ZMP must stay in, already shrunk; None: no bound by the ZMP.
        """
        scale = 1.0
        momentum_rate = np.zeros((len(self.preview) - 1, 6))  # ḣ = [ṗ; L̇] of the limbs at s = 1 over the preview
        for limb, path in self.paths.items():
            rates = path.velocities(self.tau[limb] + self.preview)  # (k, n)
            peak = np.abs(rates).max(axis=0)
            limits = self.velocity_limits[limb]
            fast = peak > limits
            if fast.any():
                scale = min(scale, float(np.min(limits[fast] / peak[fast])))
            # the accelerations over each preview step: a velocity's step (a corner of a linear path) too
            momentum_rate += (np.diff(rates, axis=0) / PREVIEW_STEP) @ momentum_map[:, 6 + self.columns[limb]].T
        if polygon is not None and len(polygon.offsets):
            # Δp at s = 1 (flat floor, f_z ≈ m g): the limbs' L̇, and their ṗ as if the legs had not yet moved the
            # rest of the body to hold the CoM (position drives follow a tick or more late)
            shift = PREDICTION_SAFETY * np.column_stack([-(momentum_rate[:, 4] + height * momentum_rate[:, 0]),
                                                         momentum_rate[:, 3] - height * momentum_rate[:, 1]]) \
                / (mass * GRAVITY)
            slack = np.maximum(polygon.edge_slack(zmp_reference), 0.0)  # (edges,)
            towards_edge = shift @ polygon.inward.T  # (k, edges): < 0 moves the ZMP towards that edge
            moving_out = towards_edge < 0.0
            if moving_out.any():
                square = np.min(np.broadcast_to(slack, towards_edge.shape)[moving_out] / -towards_edge[moving_out])
                scale = min(scale, math.sqrt(min(1.0, square)))
        return scale

    def advance(self, bound, dt, position, zmp_depth=None):
        """Move the time scale towards ``bound``, then each clock by s dt; the limbs' joint rates and the limitations.

        The rates are s q̇_d(τ) + TRACKING_GAIN (q_d(τ) − q) within the joints' velocity limits [rad/s, m/s], q the
        limb's joints in ``position``, the outputs' position command (n_out,) [rad, m], q_d(τ) held within their
        ranges: the path is followed, and the command kept on it (its positions are reached, whatever the joint limits
        or a restart from the measured posture took away); after its end the limb holds its last position. A change
        of s changes the rates by Δs q̇(τ): s moves at SCALE_RATE_DOWN (UP) per second, or faster where that step
        changes no rate by more than SCALE_STEP_ACCELERATION dt (a limb nearly at rest starts as slow as it must).

        ``zmp_depth``: how far the measured ZMP lies inside the support polygon shrunk by the limbs' margin [m] (None:
        unknown). The model's prediction knows the limbs' angular momentum, not how late the legs follow the motion
        that holds the CoM: while the measured ZMP is outside, a ceiling on s falls at FEEDBACK_RATE_DOWN, and it
        rises again at FEEDBACK_RATE_UP once the ZMP is back a margin inside — the motion settles at the pace the
        robot can take. A motion that ends leaves the ceiling at 1."""
        if not self.moving:
            self.ceiling = 1.0
        elif zmp_depth is not None and zmp_depth < 0.0:
            self.ceiling = max(0.0, self.ceiling - FEEDBACK_RATE_DOWN * dt)
        elif zmp_depth is not None and zmp_depth > FEEDBACK_RECOVERED:
            self.ceiling = min(1.0, self.ceiling + FEEDBACK_RATE_UP * dt)
        bound = min(bound, self.ceiling)
        nominal = {limb: path.sample(self.tau[limb], acceleration=False) for limb, path in self.paths.items()}
        speed = max((float(np.abs(rates).max(initial=0.0)) for _, rates in nominal.values()), default=0.0)
        free = SCALE_STEP_ACCELERATION * dt / speed if speed > 0.0 else math.inf
        if bound < self.scale:
            self.scale = max(bound, self.scale - max(SCALE_RATE_DOWN * dt, free))
        else:
            self.scale = min(bound, self.scale + max(SCALE_RATE_UP * dt, free))
        rates = {}
        for limb, (desired, limb_rates) in nominal.items():
            lower, upper = self.position_limits[limb]
            error = np.minimum(np.maximum(desired, lower), upper) - position[self.columns[limb]]  # np.clip's values,
            # without its ~3.5 µs of dispatch a call
            limit = self.velocity_limits[limb]
            rates[limb] = np.minimum(np.maximum(self.scale * limb_rates + TRACKING_GAIN * error, -limit), limit)
            self.tau[limb] += self.scale * dt
        limitations = ()
        if self.scale < SLOWED_BELOW and self.moving:
            limitations = tuple(Limitation(f"{limb}/trajectory", SLOWED, (1.0,), (self.scale,))
                                for limb in self.paths)
        return rates, limitations


def length(vector):
    """|vector| (3,) without overflow for huge components (1e300 m is a value a message may carry)."""
    return float(np.hypot(np.hypot(vector[0], vector[1]), vector[2]))


def limb_reach(robot, joints, end_frame):
    """(the limb's root joint id, its reach [m]): the sum of its link lengths, from the first joint's origin through
    each next joint's to the end frame, at the robot's reference configuration (pinocchio)."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.reference_q)
    ids = [robot.model.getJointId(name) for name in joints]
    points = [data.oMi[i].translation for i in ids] + [data.oMf[robot.frame_id(end_frame)].translation]
    return ids[0], float(sum(np.linalg.norm(b - a) for a, b in zip(points[:-1], points[1:])))


class PoseTargets:
    """The C-busy limbs' target poses, each approached at bounded speed and acceleration (see the module).

    Args:
        robot: the RobotModel.
        limbs: limb → (joints, end frame).
        gain: [1/s] the end's velocity asked per metre (radian) from its target.
        max_speed, max_acceleration: of the end's linear velocity [m/s, m/s²].
        max_angular_speed: of its angular velocity [rad/s].
    """

    def __init__(self, robot, limbs, gain=5.0, max_speed=0.3, max_acceleration=1.0, max_angular_speed=1.0):
        if not (gain > 0.0 and max_speed > 0.0 and max_acceleration > 0.0 and max_angular_speed > 0.0):
            raise ValueError("pose_gain, max_limb_speed, max_limb_acceleration and max_limb_angular_speed must be > 0")
        self.reach = {limb: limb_reach(robot, joints, end) for limb, (joints, end) in limbs.items()}
        self.end_frames = {limb: robot.frame_id(end) for limb, (_, end) in limbs.items()}
        self.gain, self.max_speed, self.max_acceleration = gain, max_speed, max_acceleration
        self.max_angular_speed = max_angular_speed
        self.velocity = {limb: np.zeros(3) for limb in limbs}  # the end's last commanded linear velocity [m/s]
        self.progress = {}  # limb → (the target it approaches, the closest its end came [m], time since [s])

    def check(self, limb, position, kinematics):
        """OutOfReach unless ``position`` (world frame [m]) lies within the limb's reach of its root at the
        configuration of ``kinematics``."""
        root, reach = self.reach[limb]
        distance = length(np.asarray(position, dtype=float) - kinematics.data.oMi[root].translation)
        if not distance <= reach:
            raise OutOfReach(f"{distance:.3g} m from {limb}'s root, beyond its reach of {reach:.3f} m (the sum of its "
                             "link lengths)")

    def twists(self, targets, kinematics, dt):
        """The C-busy ends' twists [v; ω] towards their ``targets`` (limb → pin.SE3, world frame), world-aligned at the
        end frame [m/s, rad/s], and the limitations."""
        twists, limitations = {}, []
        for limb, target in targets.items():
            root, reach = self.reach[limb]
            origin = kinematics.data.oMi[root].translation
            current = kinematics.data.oMf[self.end_frames[limb]]
            name = f"{limb}/pose"
            offset = target.translation - origin
            distance = length(offset)
            if not distance <= reach * (1.0 + BEYOND_REACH_SLACK):
                limitations.append(Limitation(name, IGNORED_OUT_OF_REACH, tuple(map(float, target.translation)),
                                              tuple(map(float, current.translation))))
                twists[limb] = np.zeros(6)
                self.velocity[limb] = np.zeros(3)
                continue
            goal = target.translation if distance <= reach else origin + offset * (reach / distance)
            if distance > reach:
                limitations.append(Limitation(name, BEYOND_REACH, tuple(map(float, target.translation)),
                                              tuple(map(float, goal))))
            linear = self.gain * (goal - current.translation)
            speed = float(np.linalg.norm(linear))
            if speed > self.max_speed:
                linear *= self.max_speed / speed
            change = linear - self.velocity[limb]
            step = float(np.linalg.norm(change))
            if dt > 0.0 and step > self.max_acceleration * dt:
                linear = self.velocity[limb] + change * (self.max_acceleration * dt / step)
            self.velocity[limb] = linear
            angular = self.gain * (current.rotation @ pin.log3(current.rotation.T @ target.rotation))
            turn = float(np.linalg.norm(angular))
            if turn > self.max_angular_speed:
                angular *= self.max_angular_speed / turn
            twists[limb] = np.r_[linear, angular]
            error = float(np.linalg.norm(goal - current.translation))
            if self._stalled(limb, goal, error, dt):
                limitations.append(Limitation(name, WORKSPACE_EDGE, tuple(map(float, goal)),
                                              tuple(map(float, current.translation))))
            elif speed > self.max_speed or step > self.max_acceleration * dt > 0.0:
                limitations.append(Limitation(name, POSE_APPROACHING, tuple(map(float, goal)), tuple(map(float, goal)),
                                              tuple(map(float, current.translation))))
        return twists, tuple(limitations)

    def _stalled(self, limb, goal, error, dt):
        """Whether the end has come no closer to ``goal`` for STALL_TIME while still STALL_DISTANCE from it."""
        aim, closest, since = self.progress.get(limb, (None, math.inf, 0.0))
        if aim is None or np.linalg.norm(aim - goal) > STALL_PROGRESS:
            aim, closest, since = goal.copy(), error, 0.0
        elif error < closest - STALL_PROGRESS:
            closest, since = error, 0.0
        else:
            since += dt
        self.progress[limb] = (aim, closest, since)
        return error > STALL_DISTANCE and since >= STALL_TIME

