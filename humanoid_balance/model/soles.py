"""Sole rectangles (the contact surface of each foot, read from the URDF's collision boxes) and the depth of a
point inside a support polygon."""
import math
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from humanoid_balance.model.errors import ModelFileError
from humanoid_balance.model.support_polygon import SupportPolygon

__all__ = ["SoleRectangle", "sole_rectangle", "polygon_margin", "TIPPING_TILT", "VERTICAL", "sole_tilt"]


class SoleRectangle(NamedTuple):
    """Axis-aligned rectangle in the sole frame's xy plane (the contact surface) [m]."""

    x_min: float
    x_max: float
    y_min: float
    y_max: float

    def contains(self, x, y, margin=0.0):
        """Whether (x, y) lies inside the rectangle shrunk by ``margin`` [m]."""
        return (self.x_min + margin <= x <= self.x_max - margin) and (self.y_min + margin <= y <= self.y_max - margin)

    def holds_cop(self, wrench):
        """Whether a sole wrench [f; τ] (its frame, about its origin) presses on it (f > 0) with its centre of
        pressure (−τ_y / f, τ_x / f) inside the rectangle."""
        force = float(wrench[2])
        return force > 0.0 and self.contains(-float(wrench[4]) / force, float(wrench[3]) / force)

    def margin(self, x, y):
        """Signed distance from (x, y) to the nearest edge, positive inside [m]."""
        return min(x - self.x_min, self.x_max - x, y - self.y_min, self.y_max - y)

    def roll_twist(self):
        """The rotation the sole may make on the ground about its long centre line, as a unit twist [v; ω] at the
        sole frame's origin in its axes: what a line contact leaves free (6,) [m/rad, 1]."""
        if self.x_max - self.x_min >= self.y_max - self.y_min:
            axis, point = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.5 * (self.y_min + self.y_max), 0.0])
        else:
            axis, point = np.array([0.0, 1.0, 0.0]), np.array([0.5 * (self.x_min + self.x_max), 0.0, 0.0])
        return np.r_[np.cross(point, axis), axis]

    def inset(self, fraction):
        """The rectangle less ``fraction`` of its length and of its width on each side."""
        dx, dy = fraction * (self.x_max - self.x_min), fraction * (self.y_max - self.y_min)
        return SoleRectangle(self.x_min + dx, self.x_max - dx, self.y_min + dy, self.y_max - dy)

    def centre(self):
        """The rectangle's centre in the sole frame (z = 0) — (3,) [m]."""
        return np.array([(self.x_min + self.x_max) / 2, (self.y_min + self.y_max) / 2, 0.0])

    def corners(self):
        """The four corners, counter-clockwise, in the sole frame (z = 0) — (4, 3) [m]."""
        return np.array([[self.x_min, self.y_min, 0.0], [self.x_max, self.y_min, 0.0],
                         [self.x_max, self.y_max, 0.0], [self.x_min, self.y_max, 0.0]])


def free_contact_twists(leg_joints, rectangle, foot):
    """The motions of a sole on the ground its leg of ``leg_joints`` joints cannot resist, as unit twists [v; ω]
    in the sole frame: none for a leg of six joints or more; for a leg of five (a line foot, as Cassie's) its roll
    about the rectangle's long centre line (:meth:`SoleRectangle.roll_twist`), about which the contact can carry no
    moment either.

    Raises:
        ValueError: a leg of fewer than five joints (naming ``foot``).
    """
    if leg_joints >= 6:
        return ()
    if leg_joints == 5:
        return (rectangle.roll_twist(),)
    raise ValueError(f"foot '{foot}': a leg of {leg_joints} joints cannot hold its sole on the ground; "
                     "it needs at least 5")


def wrench_basis(free_twists):
    """An orthonormal basis S (6 − k, 6) of the sole motions the contact constrains, orthogonal to its k
    ``free_twists``: the sole's wrench is Sᵀ y, which does no work on a free motion."""
    if not free_twists:
        return np.eye(6)
    free = np.array(free_twists, dtype=float)
    return np.linalg.svd(free)[2][len(free):]


def sole_rectangle(robot, sole_frame, tolerance=1e-4):
    """The bottom face of the collision box(es) attached with ``sole_frame``, in the sole frame.

    Raises:
        ModelFileError: no collision box touches the sole plane z = 0 of that frame.
    """
    model = robot.model
    geometry = pin.buildGeomFromUrdf(model, robot.urdf_path, pin.GeometryType.COLLISION)
    frame = model.frames[model.getFrameId(sole_frame)]
    corners = []
    for item in geometry.geometryObjects:
        if item.parentJoint != frame.parentJoint or not hasattr(item.geometry, "halfSide"):
            continue
        half = np.asarray(item.geometry.halfSide)
        signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
        in_sole = (frame.placement.inverse() * item.placement).act  # box frame → sole frame
        points = np.array([in_sole(sign * half) for sign in signs])
        corners.extend(points[np.abs(points[:, 2]) < tolerance])
    if not corners:
        raise ModelFileError(robot.urdf_path, f"frame '{sole_frame}'",
                             "no collision box has a face on this sole's plane (z = 0 of the sole frame); give the "
                             "sole size as parameters instead")
    corners = np.array(corners)
    return SoleRectangle(corners[:, 0].min(), corners[:, 0].max(), corners[:, 1].min(), corners[:, 1].max())


def polygon_margin(point, polygon):
    """Distance [m] of ``point`` (x, y, …) inside the convex ``polygon`` ((k, ≥2) counter-clockwise vertices) to its
    nearest edge line; negative outside (the ZMP's stability margin)."""
    return SupportPolygon(polygon).depth(point)


TIPPING_TILT = math.radians(2.0)
"""[rad] a sole in contact tilted more than this from the floor has rolled onto an edge: it is tipping (issue 52)."""


VERTICAL = np.array([0.0, 0.0, 1.0])  # a flat, level floor's normal


def sole_tilt(normal, floor_normal=None):
    """The angle [rad] between a sole's normal ``normal`` (its frame's z axis, world (3,)) and the floor's unit normal
    ``floor_normal`` (an array; None: the vertical), from their cross and dot products on Python floats: numpy's cross
    costs 16 µs a call, and the balancer asks this for every stance sole on every tick."""
    if floor_normal is None:
        return math.atan2(math.hypot(normal[0], normal[1]), normal[2])
    (nx, ny, nz), (fx, fy, fz) = normal.tolist(), floor_normal.tolist()
    return math.atan2(math.hypot(ny * fz - nz * fy, nz * fx - nx * fz, nx * fy - ny * fx), nx * fx + ny * fy + nz * fz)
