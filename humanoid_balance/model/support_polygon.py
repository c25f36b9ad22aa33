"""The support polygon: the convex hull of the soles in contact on the floor, as its counter-clockwise vertices and
its edges' inward half-planes, and what the balance asks of it — how deep a point lies inside, the polygon shrunk by a
margin, and the nearest point of it to a point outside (the ZMP of a statically stable posture stays in it: Choi–Kim
section 2, Vukobratović's ZMP criterion). Pure numpy; the hull is Andrew's monotone chain over the soles' few corners.
Units: m.
"""
import math

import numpy as np

__all__ = ["SupportPolygon", "convex_hull", "load_sharing_region"]

FAR = 1e6  # [m] a point farther than this from the polygon is brought back along its direction before projecting


def convex_hull(points):
    """Counter-clockwise vertices (k, 2) of the convex hull of ``points`` (n, ≥ 2); collinear points dropped."""
    # sorted by x, then y; rounded first, so that points a rounding error apart in x keep their order in y
    points = np.unique(np.round(np.asarray(points, dtype=float)[:, :2], 9), axis=0)
    if len(points) < 3:
        return points

    def half(sequence):
        chain = []
        for point in sequence:
            while len(chain) >= 2 and _turn(chain[-2], chain[-1], point) <= 1e-15:
                chain.pop()
            chain.append(point)
        return chain[:-1]

    return np.array(half(points) + half(points[::-1]))


def _turn(a, b, c):
    """The z of (b − a) × (c − a): positive when a, b, c turn counter-clockwise."""
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


class SupportPolygon:
    """A convex polygon of the floor plane from its counter-clockwise ``vertices`` (k ≥ 3, 2) [m]."""

    def __init__(self, vertices):
        self.vertices = np.asarray(vertices, dtype=float)[:, :2]
        edges = np.roll(self.vertices, -1, axis=0) - self.vertices
        lengths = np.linalg.norm(edges, axis=1)
        self.inward = np.column_stack([-edges[:, 1], edges[:, 0]]) / lengths[:, None]  # unit inward normals (k, 2)
        self.offsets = np.einsum("kj,kj->k", self.inward, self.vertices)  # inside: inward · p ≥ offset
        self.centroid = self.vertices.mean(axis=0)

    @classmethod
    def of_points(cls, points):
        """The hull of ``points`` (e.g. the corners of the soles in contact); None when they span no area."""
        hull = convex_hull(points)
        if len(hull) < 3:
            return None
        return cls(hull)

    def depth(self, point):
        """Distance of ``point`` (x, y, …) inside the nearest edge line, negative outside [m]."""
        return float(self.edge_slack(point).min())

    def edge_slack(self, point):
        """Per edge, how far ``point`` lies inside that edge's line (k,) [m]."""
        return self.inward @ np.asarray(point, dtype=float)[:2] - self.offsets

    def inradius(self):
        """The largest margin the polygon can be shrunk by (its largest inscribed circle's radius) [m]."""
        return max(0.0, self.depth(self.chebyshev_centre()))

    def chebyshev_centre(self):
        """The centre of the largest inscribed circle (an LP, solved once per polygon, only where asked: a polygon
        shrunk to nothing) [m]."""
        if not hasattr(self, "_centre"):
            from scipy.optimize import linprog  # only when a polygon is shrunk: the hot path keeps its polygons

            k = len(self.offsets)
            # max r  s.t.  inward_i · p − r ≥ offset_i
            result = linprog(c=[0.0, 0.0, -1.0], A_ub=np.column_stack([-self.inward, np.ones(k)]), b_ub=-self.offsets,
                             bounds=[(None, None), (None, None), (0.0, None)], method="highs")
            self._centre = result.x[:2] if result.success else self.centroid
        return self._centre

    def shrunk(self, margin):
        """The polygon of the points at least ``margin`` [m] inside every edge; when the polygon is not that wide, its
        Chebyshev centre alone (a SupportPolygon of one point: :attr:`vertices` (1, 2))."""
        if margin <= 0.0:
            return self
        offsets = self.offsets + margin
        # its vertices: the crossings of the edge lines moved inwards that lie inside all of them (an edge shorter
        # than the margin allows vanishes, so neighbours are not enough)
        i, j = np.triu_indices(len(offsets), 1)
        a, b = self.inward[i], self.inward[j]
        determinant = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
        crossing = np.abs(determinant) > 1e-12
        a, b, determinant = a[crossing], b[crossing], determinant[crossing]
        x = (offsets[i][crossing] * b[:, 1] - offsets[j][crossing] * a[:, 1]) / determinant
        y = (a[:, 0] * offsets[j][crossing] - b[:, 0] * offsets[i][crossing]) / determinant
        candidates = np.column_stack([x, y])
        inside = np.all(candidates @ self.inward.T - offsets >= -1e-9, axis=1)
        hull = convex_hull(candidates[inside])
        return SupportPolygon(hull) if len(hull) >= 3 else _Point(self.chebyshev_centre())

    def nearest(self, point):
        """The point of the polygon nearest to ``point`` (x, y) [m]: itself inside, else on the boundary."""
        point = _brought_near(np.asarray(point, dtype=float)[:2], self.centroid)
        if (self.inward @ point - self.offsets >= 0.0).all():
            return point
        start, edges = self.vertices, np.roll(self.vertices, -1, axis=0) - self.vertices
        t = np.minimum(np.maximum(np.einsum("kj,kj->k", point - start, edges) / np.einsum("kj,kj->k", edges, edges),
                                  0.0), 1.0)
        candidates = start + t[:, None] * edges
        return candidates[np.argmin(np.einsum("kj,kj->k", candidates - point, candidates - point))]


def load_sharing_region(soles, share):
    """Where the CoM of a robot standing still on ``soles`` (each a (k, ≥2) array of its contact corners) lets every
    sole carry at least ``share`` of its weight: {Σ λ_i p_i : p_i in sole i, λ_i ≥ share, Σ λ_i = 1} — the static
    equilibrium's CoM is the load-weighted mean of the soles' centres of pressure — as the hull of its extreme points
    (each sole in turn carrying 1 − (n − 1) share, the others ``share``); one sole: the sole itself. A SupportPolygon,
    or None when the points span no area."""
    soles = [np.asarray(corners, dtype=float)[:, :2] for corners in soles]
    if len(soles) == 1 or share <= 0.0:
        return SupportPolygon.of_points(np.vstack(soles))
    share = min(share, 1.0 / len(soles))
    points = []
    for heavy in range(len(soles)):
        weights = [1.0 - (len(soles) - 1) * share if k == heavy else share for k in range(len(soles))]
        sums = np.zeros((1, 2))
        for weight, corners in zip(weights, soles):  # every combination of one corner per sole
            sums = (sums[:, None, :] + weight * corners[None, :, :]).reshape(-1, 2)
        points.append(sums)
    return SupportPolygon.of_points(np.vstack(points))


class _Point(SupportPolygon):
    """A polygon shrunk to its centre: every point's nearest point is that centre."""

    def __init__(self, centre):
        self.vertices = np.asarray(centre, dtype=float).reshape(1, 2)
        self.centroid = self.vertices[0]
        self.inward, self.offsets = np.zeros((0, 2)), np.zeros(0)

    def depth(self, point):
        return -float(np.linalg.norm(np.asarray(point, dtype=float)[:2] - self.centroid))

    def shrunk(self, margin):
        return self

    def nearest(self, point):
        return self.centroid.copy()


def _brought_near(point, centre):
    """``point`` moved towards ``centre`` along their line to at most FAR from it (1e300 cannot be squared)."""
    offset = point - centre
    distance = math.hypot(offset[0], offset[1])
    return point if distance <= FAR else centre + offset * (FAR / distance)
