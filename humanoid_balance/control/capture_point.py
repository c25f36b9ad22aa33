"""Capture point and recovery steps (Pratt, Carff, Drakunov, Goswami 2006; Englsberger, Ott, Albu-Schäffer 2015: the
divergent component of motion).

The linear inverted pendulum of height z_c, c̈ = ω² (c − p) with ω = √(g / z_c) and p the ZMP, has the capture point
(the horizontal DCM) ξ = c + ċ/ω, which runs away from the ZMP: ξ̇ = ω (ξ − p). Held at p for T seconds the ZMP
leaves it at ξ(T) = p + (ξ(0) − p) e^{ωT}, and a ZMP put on ξ brings the pendulum to rest over it. While ξ is inside
the support polygon the feet can stop the robot; once it has left, a foot must land where ξ will be: a step. The
swing foot is the one on the side ξ left by, the ZMP meanwhile on the stance sole as near ξ as it goes (the ankle's
share), and the foot lands back beside the stance foot as the robot stood if that stance catches ξ at touchdown
(CAUGHT_DEPTH inside the new support polygon: the widest stance, the best damped after), else as far apart sideways
with its sole's centre ahead or behind on ξ (a step forwards or backwards keeps the stance's width, or ξ, which runs
sideways away from the stance sole through the swing, leaves the narrower stance after touchdown), else with its
sole's centre on ξ at touchdown, within the region its leg reaches without crossing the stance leg.

:func:`capturable_velocity` bounds what that can do (Koolen, de Boer, Rebula, Goswami, Pratt 2012: N-step
capturability of the LIPM with finite feet): the largest velocity change from standing that the feet alone can stop
(ξ within the support polygon) and that one step can (lift-off at once, the ZMP meanwhile on the stance sole's
farthest point along the push, the swing sole landing as far along it as the step region allows). The robot does worse
(the ankle's torque, the swing's lag, the trigger's delay); a target above the one-step bound asks for more than a
step of that duration and reach can give. Units: SI (m, s, rad).
"""
import math
from typing import NamedTuple, Optional

import numpy as np
import pinocchio as pin

from humanoid_balance.model.support_polygon import SupportPolygon

__all__ = ["capture_point", "capture_point_after", "StepRegion", "Step", "plan_step", "stance_frame", "heading",
           "SwingTrajectory", "capturable_velocity"]


CAUGHT_DEPTH = 0.02  # [m] a landing that puts ξ this deep inside the new support polygon catches it


def capture_point(com, com_velocity, omega):
    """ξ = c + ċ/ω (2,) [m]: where the ZMP must be for the pendulum to come to rest over it."""
    return np.asarray(com, dtype=float)[:2] + np.asarray(com_velocity, dtype=float)[:2] / omega


def capture_point_after(capture, zmp, omega, duration):
    """ξ(T) = p + (ξ − p) e^{ωT}: the capture point ``duration`` [s] later with the ZMP held at ``zmp`` (2,) [m]."""
    zmp = np.asarray(zmp, dtype=float)
    return zmp + (np.asarray(capture, dtype=float) - zmp) * math.exp(omega * duration)


class StepRegion(NamedTuple):
    """Where a swing sole may land, relative to the stance sole, in its frame turned to the swing foot's side
    (x forward, y towards the swing foot) [m]: no farther than its leg reaches, no nearer than ``inward``; ``width``:
    where it stood, beside the stance sole (None: unknown)."""

    forward: float
    backward: float
    outward: float
    inward: float
    width: Optional[float] = None

    def clamp(self, offset):
        """``offset`` (x, y) brought into the region (2,) [m]."""
        return np.array([np.clip(offset[0], -self.backward, self.forward), np.clip(offset[1], self.inward,
                                                                                     self.outward)])


class Step(NamedTuple):
    swing: int                  # index of the foot that steps
    stance: int                 # index of the foot that carries the robot meanwhile
    target: pin.SE3             # the swing sole's placement at touchdown, world frame
    zmp: np.ndarray             # the ZMP held on the stance sole during the swing (2,) [m]
    capture_point: np.ndarray   # ξ when the step was planned (2,) [m]
    predicted: np.ndarray       # ξ at touchdown (2,) [m]
    captures: bool              # whether ξ at touchdown lies within the new support polygon
    duration: float             # swing time [s]


def plan_step(capture, placements, soles, omega, duration, region, swing=None):
    """The :class:`Step` that catches the capture point ``capture`` (2,), from two feet standing at ``placements``
    (pin.SE3 of their soles) with sole rectangles ``soles`` (SoleRectangle, sole frames), stepping for
    ``duration`` [s] within ``region`` (a StepRegion). ``swing``: the foot that steps; default the one on the side
    the capture point lies, across the line between the feet."""
    origins = np.array([placement.translation[:2] for placement in placements])
    if swing is None:
        across = origins[0] - origins[1]
        swing = 0 if (capture - origins.mean(axis=0)) @ across >= 0.0 else 1
    stance = 1 - swing
    corners = [sole_corners(placement, rectangle) for placement, rectangle in zip(placements, soles)]
    zmp = SupportPolygon.of_points(corners[stance]).nearest(capture)
    predicted = capture_point_after(capture, zmp, omega, duration)
    stance_placement, rectangle = placements[stance], soles[swing]
    yaw, turn, side = stance_frame(stance_placement, placements[swing])
    wanted = turn.T @ (predicted - turn @ rectangle.centre()[:2] - origins[stance]) * [1.0, side]  # the sole's origin
    offsets = [region.clamp(wanted)] if region.width is None else [
        region.clamp([0.0, region.width]), region.clamp([wanted[0], region.width]), region.clamp(wanted)]
    for offset in offsets:  # the stance the robot stood in, or as wide ahead or behind, if it catches ξ; else on ξ
        translation = np.r_[origins[stance] + turn @ (offset * [1.0, side]), stance_placement.translation[2]]
        target = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, yaw), translation)
        landed = SupportPolygon.of_points(np.vstack([corners[stance], sole_corners(target, rectangle)]))
        if landed.depth(predicted) >= CAUGHT_DEPTH:
            break
    return Step(swing, stance, target, zmp, np.asarray(capture, dtype=float), predicted,
                bool(landed.depth(predicted) >= 0.0), duration)


def capturable_velocity(com, omega, placements, soles, region, duration, direction):
    """(feet, one step): the largest velocity change [m/s] along ``direction`` (2,) from a pendulum at rest over
    ``com`` (2,) that the feet standing at ``placements`` (pin.SE3 of their soles, rectangles ``soles``) can stop
    alone — ξ = c + Δv u/ω on the support polygon's edge — and that one step of ``duration`` [s] within ``region``
    (a StepRegion) can: lift-off at once, the ZMP on the stance sole's farthest point p along u meanwhile, and
    ξ(T) = p + (ξ − p) e^{ωT} (eq. of :func:`capture_point_after`) no farther along u than the landed sole reaches.
    Along u only (an upper bound); the better swing foot; never below the feet's figure (the robot may not step)."""
    u = np.asarray(direction, dtype=float) / np.linalg.norm(direction)
    com = np.asarray(com, dtype=float)[:2]
    corners = [sole_corners(placement, rectangle) for placement, rectangle in zip(placements, soles)]
    polygon = SupportPolygon.of_points(np.vstack(corners))
    along = polygon.inward @ u
    leaving = along < 0.0
    feet = omega * float(np.min(polygon.edge_slack(com)[leaving] / -along[leaving]))
    best = feet
    box = np.array([[x, y] for x in (-region.backward, region.forward) for y in (region.inward, region.outward)])
    for swing in range(len(placements)):
        stance = 1 - swing
        zmp = float(np.max(corners[stance] @ u))
        _, turn, side = stance_frame(placements[stance], placements[swing])
        origins = placements[stance].translation[:2] + (box * [1.0, side]) @ turn.T
        reach = float(np.max(origins @ u) + np.max(sole_corners(pin.SE3(placements[stance].rotation, np.zeros(3)),
                                                                soles[swing]) @ u))
        capture = zmp + (max(reach, zmp) - zmp) * math.exp(-omega * duration)
        best = max(best, omega * (capture - float(com @ u)))
    return feet, best


def stance_frame(stance, swing):
    """The ``stance`` sole's heading [rad], its turn (2, 2) from its xy frame to the world's, and the side (±1) of it
    the ``swing`` sole is on (pin.SE3 both): a StepRegion's frame is the turn with y times the side."""
    yaw = heading(stance.rotation)
    turn = np.array([[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]])
    side = 1.0 if (turn.T @ (swing.translation[:2] - stance.translation[:2]))[1] >= 0.0 else -1.0
    return yaw, turn, side


def sole_corners(placement, rectangle):
    """The sole rectangle's corners in the world's xy plane (4, 2) [m]."""
    return (rectangle.corners() @ placement.rotation.T + placement.translation)[:, :2]


def heading(rotation):
    """The yaw of a rotation matrix [rad]."""
    return math.atan2(rotation[1, 0], rotation[0, 0])


class SwingTrajectory:
    """The swing sole from ``start`` to ``target`` (pin.SE3, world) in ``duration`` [s], lifted by ``height`` [m]:
    minimum-jerk in the horizontal and in yaw, s(τ) = 10τ³ − 15τ⁴ + 6τ⁵, and a lift of h · 64 τ³ (1 − τ)³ on top of
    the height's own minimum-jerk change; roll and pitch flat. Position, velocity and acceleration are continuous,
    the velocity zero at both ends."""

    def __init__(self, start, target, duration, height):
        self.start, self.target, self.duration, self.height = start, target, float(duration), float(height)
        self.yaw = (heading(start.rotation), heading(target.rotation))

    def at(self, time):
        """(placement pin.SE3, twist [v; ω] world-aligned at the sole) at ``time`` [s] after lift-off."""
        tau = min(max(time / self.duration, 0.0), 1.0)
        s = tau ** 3 * (10.0 - 15.0 * tau + 6.0 * tau ** 2)
        ds = 30.0 * tau ** 2 * (1.0 - tau) ** 2 / self.duration if time < self.duration else 0.0
        lift = 64.0 * tau ** 3 * (1.0 - tau) ** 3
        dlift = 192.0 * tau ** 2 * (1.0 - tau) ** 2 * (1.0 - 2.0 * tau) / self.duration if time < self.duration \
            else 0.0
        p0, p1 = self.start.translation, self.target.translation
        position = p0 + s * (p1 - p0)
        position[2] += self.height * lift
        velocity = ds * (p1 - p0)
        velocity[2] += self.height * dlift
        yaw = self.yaw[0] + s * angle_between(*self.yaw)
        rotation = pin.rpy.rpyToMatrix(0.0, 0.0, yaw)
        return pin.SE3(rotation, position), np.r_[velocity, 0.0, 0.0, ds * angle_between(*self.yaw)]


def angle_between(first, second):
    """second − first wrapped into [−π, π) [rad]."""
    return (second - first + math.pi) % (2.0 * math.pi) - math.pi
