"""The floor under the feet, as the soles standing flat on it show it (issue 54: inclined ground).

A sole standing flat has the floor's orientation; one rolling over an edge has not, and shows it by its centre of
pressure on that edge. The floor's normal n_f (world frame, unit) is the mean normal of the soles in contact at the
first contact (a robot is started standing on its soles); from then on it follows, with time constant
``time_constant``, the mean normal of the stance soles whose measured CoP lies inside their rectangle less
``edge_margin`` of its length and width on each side. A sole's tilt is its angle from n_f, not from the vertical:
on a slope the soles lie flat on the slope, and levelling them to the vertical would put each on an edge. Both the
soles' normals and n_f come from the legs' kinematics on the same attitude estimate, so an IMU's bias cancels out.
Units: SI (rad, s).
"""
import math

from humanoid_balance.model.soles import VERTICAL, sole_tilt

__all__ = ["Floor", "TIME_CONSTANT", "EDGE_MARGIN"]

TIME_CONSTANT = 2.0  # [s] n_f follows the flat soles' normals this slowly: a tipping sole's CoP reaches its edge first
EDGE_MARGIN = 0.25   # a sole whose CoP lies within this fraction of its length or width of an edge may be rolling


class Floor:
    """The floor's normal under the soles (see the module).

    Args:
        rectangles: per foot, its SoleRectangle (sole frame).
    """

    def __init__(self, rectangles, time_constant=TIME_CONSTANT, edge_margin=EDGE_MARGIN):
        self.inner = [rectangle.inset(edge_margin) for rectangle in rectangles]
        self.time_constant = time_constant
        self.normal = None  # n_f, world (3,); None before the first contact

    def update(self, placements, active, measured, dt):
        """Follow the flat stance soles' normals over ``dt`` [s]; ``placements``: the soles' world placements
        (pin.SE3), ``active``: the feet in contact (indices), ``measured``: per foot its measured wrench [f; τ] in its
        sole frame about its origin (empty or None, or None for a foot: unknown, that sole does not count)."""
        if not active:
            return
        if self.normal is None:
            self.normal = _unit(sum(placements[i].rotation[:, 2] for i in active))
            return
        flat = [placements[i].rotation[:, 2] for i in active if measured and measured[i] is not None
                and self._flat(i, measured[i])]
        if flat:
            weight = dt / (self.time_constant + dt)
            self.normal = _unit((1.0 - weight) * self.normal + weight * sum(flat) / len(flat))

    def tilt(self, normal):
        """The angle [rad] between a sole's normal ``normal`` (its frame's z axis, world (3,)) and the floor's (the
        vertical before the first contact)."""
        return sole_tilt(normal, self.normal)

    def edge_tilts(self, rotation):
        """How a sole (its frame's ``rotation``, world (3, 3)) leans towards its edges: (n_f · x_s, n_f · y_s), the
        sines of its tilt from the floor about its y and x axes; negative: its +x (+y) edge is the lower one, the
        edge it rolls over (the vertical before the first contact)."""
        fx, fy, fz = (VERTICAL if self.normal is None else self.normal).tolist()
        (xx, yx), (xy, yy), (xz, yz) = rotation[:, :2].tolist()
        return fx * xx + fy * xy + fz * xz, fx * yx + fy * yy + fz * yz

    def _flat(self, foot, wrench):
        """Whether the foot's measured CoP lies well inside its sole (not rolling over an edge)."""
        return self.inner[foot].holds_cop(wrench)


def _unit(vector):
    return vector / math.sqrt(vector @ vector)
