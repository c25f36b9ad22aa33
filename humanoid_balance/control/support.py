"""The support a balance controller stands on (:class:`SoleSupport`): the soles in contact as polygons — their hull,
where the CoM reference may go, where limb motions may carry the ZMP — rebuilt only when the soles move; how far a
ZMP lies inside; and which foot's section is the base of the embedded-motion Jacobian (:func:`support_roles`).
World frame, SI.
"""
from typing import NamedTuple

import numpy as np

from humanoid_balance.control.embedded_motion import BASE, C_BUSY
from humanoid_balance.control.limb_motion import ZMP_MARGIN_FRACTION
from humanoid_balance.model.support_polygon import SupportPolygon, load_sharing_region

__all__ = ["SUPPORT_MOVED", "SoleSupport", "Support", "support_roles"]

SUPPORT_MOVED = 1e-3  # [m] soles that moved less than this keep their support polygon


class Support(NamedTuple):
    """The soles in contact, as the balance uses them (SupportPolygons, world frame)."""

    polygon: object  # their convex hull
    com: object      # where the CoM reference may go: the part where each keeps min_foot_load (before the margin)
    limbs: object    # where limb motions may carry the ZMP: the hull less ZMP_MARGIN_FRACTION of the margin


class SoleSupport:
    """The support polygons of a robot's soles, and the feet it stood on at the last update.

    Args:
        sole_corners: per foot, the corners of its sole's contact rectangle in the sole frame ((4, 3) each) [m].
        support_margin: [m] the CoM reference stays this far inside the hull's edges; the limbs' polygon is the hull
            less ZMP_MARGIN_FRACTION of it.
        min_foot_load: the fraction of the weight each sole in contact keeps where the CoM reference may go.
    """

    def __init__(self, sole_corners, support_margin, min_foot_load):
        self.sole_corners = [np.asarray(corners, dtype=float) for corners in sole_corners]
        self.support_margin, self.min_foot_load = support_margin, min_foot_load
        self.built = {}          # feet → (their soles' corners, Support) as last built
        self.current = None      # the Support of the soles in contact at the last update (None: none)
        self.looked = False      # whether an update has looked at the soles in contact
        self.standing = ((), [])  # the feet in contact and the soles' placements (pin.SE3) at the last update

    def support(self, active, placements, current=True):
        """The :class:`Support` of the feet ``active`` (indices; None: none) with the soles at ``placements``,
        rebuilt only when they moved SUPPORT_MOVED; ``current``: they are the soles in contact (for
        :meth:`zmp_margin`), not only where a step wants the CoM."""
        if not active:
            if current:
                self.looked, self.current = True, None
            return None
        corners = self.corners(active, placements)
        cached = self.built.get(active)
        if cached is None or np.abs(cached[0] - corners).max() > SUPPORT_MOVED:
            polygon = SupportPolygon.of_points(corners)
            cached = self.built[active] = (corners, Support(
                polygon, load_sharing_region(corners.reshape(len(active), -1, 2), self.min_foot_load),
                polygon.shrunk(ZMP_MARGIN_FRACTION * self.support_margin)))
        if current:
            self.looked, self.current = True, cached[1]
        return cached[1]

    def corners(self, active, placements):
        """xy corners of the soles ``active``, world frame (4 k, 2) [m]."""
        return np.concatenate([self.sole_corners[i] @ placements[i].rotation.T + placements[i].translation
                               for i in active])[:, :2]

    def stood(self, active, placements):
        """The update stood on the feet ``active`` with the soles at ``placements``."""
        self.standing = (active, placements)

    @property
    def supported(self):
        """Whether a foot was in contact at the last update (None before the first)."""
        return bool(self.standing[0]) if self.looked else None

    def zmp_margin(self, zmp):
        """Distance [m] of ``zmp`` inside the nearest edge of the last update's support polygon (negative outside;
        NaN without contact or ZMP)."""
        if zmp is None or self.current is None or not self.standing[0]:
            return float("nan")
        return self.current.polygon.depth(zmp)

    def soles_margin(self, point):
        """Distance [m] of ``point`` inside the nearest edge of the hull of every sole, in contact or not, where the
        last update found them (negative outside; NaN before one): a measured ZMP lags a foot's lift-off, yet never
        leaves the feet."""
        placements = self.standing[1]
        if point is None or not placements:
            return float("nan")
        return self.support(tuple(range(len(placements))), placements, current=False).polygon.depth(point)


def support_roles(feet, base, active):
    """The embedded-motion roles of the feet (names) when the support (base) section ``base`` has lost its contact:
    the first foot of ``active`` (indices, not empty) becomes the base, the others hold their soles still (C-busy);
    None while the base foot is in contact."""
    if any(feet[i] == base for i in active):
        return None
    chosen = feet[active[0]]
    return {foot: BASE if foot == chosen else C_BUSY for foot in feet}
