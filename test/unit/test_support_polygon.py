"""The support polygon's geometry against independent references: scipy's Qhull for the hull, brute-force distances
to the edges for the depth and the shrunk polygon, and a fine sampling of the boundary for the nearest point."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import ConvexHull

from humanoid_balance.model.support_polygon import SupportPolygon, convex_hull


def random_polygon(seed):
    rng = np.random.default_rng(seed)
    return SupportPolygon.of_points(rng.uniform(-0.2, 0.2, size=(12, 2)))


def segment_distance(point, a, b):
    t = np.clip(np.dot(point - a, b - a) / np.dot(b - a, b - a), 0.0, 1.0)
    return np.linalg.norm(point - (a + t * (b - a)))


def boundary_samples(vertices, per_edge=2000):
    ends = np.roll(vertices, -1, axis=0)
    t = np.linspace(0.0, 1.0, per_edge)[:, None]
    return np.vstack([a + t * (b - a) for a, b in zip(vertices, ends)])


@given(seed=st.integers(0, 10_000))
@settings(max_examples=50, deadline=None)
def test_hull_is_qhulls(seed):
    points = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(15, 2))
    hull = convex_hull(points)
    reference = points[ConvexHull(points).vertices]  # counter-clockwise
    assert len(hull) == len(reference)
    start = int(np.argmin(np.linalg.norm(reference - hull[0], axis=1)))
    np.testing.assert_allclose(np.roll(reference, -start, axis=0), hull, atol=1e-9)


def test_two_soles_side_by_side_whose_corners_differ_by_rounding_errors():
    """Soles whose edges line up within 1e-17 m: the hull is still their bounding rectangle."""
    left = np.array([[-0.25, 0.035], [-0.036, 0.035], [-0.036 + 1e-17, 0.145], [-0.25, 0.145]])
    right = left * [1.0, -1.0] + [[0.0, 0.0], [1e-17, 0.0], [0.0, 0.0], [0.0, 0.0]]
    polygon = SupportPolygon.of_points(np.vstack([left, right]))
    np.testing.assert_allclose(np.sort(polygon.vertices, axis=0),
                               np.sort([[-0.25, -0.145], [-0.036, -0.145], [-0.036, 0.145], [-0.25, 0.145]], axis=0),
                               atol=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_depth_is_the_distance_to_the_nearest_edge(seed):
    polygon = random_polygon(seed)
    rng = np.random.default_rng(100 + seed)
    vertices, ends = polygon.vertices, np.roll(polygon.vertices, -1, axis=0)
    for point in rng.uniform(-0.3, 0.3, size=(200, 2)):
        inside = ConvexHull(np.vstack([vertices, point])).volume <= ConvexHull(vertices).volume + 1e-12
        nearest = min(segment_distance(point, a, b) for a, b in zip(vertices, ends))
        if inside:
            assert polygon.depth(point) == pytest.approx(nearest, abs=1e-12)
        else:
            assert polygon.depth(point) < 0.0


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("margin", [0.01, 0.05, 1.0])
def test_shrunk_polygon_holds_the_points_a_margin_inside(seed, margin):
    polygon = random_polygon(seed)
    shrunk = polygon.shrunk(margin)
    if margin > polygon.inradius():  # not that wide: its Chebyshev centre alone
        assert len(shrunk.vertices) == 1
        assert polygon.depth(shrunk.vertices[0]) == pytest.approx(polygon.inradius(), abs=1e-7)
        return
    for point in np.random.default_rng(seed).uniform(-0.3, 0.3, size=(400, 2)):
        assert (shrunk.depth(point) >= 0.0) == (polygon.depth(point) >= margin) or \
            abs(polygon.depth(point) - margin) < 1e-9


@pytest.mark.parametrize("seed", range(5))
def test_nearest_point_is_the_closest_of_the_sampled_boundary(seed):
    polygon = random_polygon(seed)
    boundary = boundary_samples(polygon.vertices)
    for point in np.random.default_rng(7 + seed).uniform(-0.5, 0.5, size=(50, 2)):
        nearest = polygon.nearest(point)
        if polygon.depth(point) >= 0.0:
            np.testing.assert_array_equal(nearest, point)
        else:
            best = boundary[np.argmin(np.linalg.norm(boundary - point, axis=1))]
            assert np.linalg.norm(nearest - point) <= np.linalg.norm(best - point) + 1e-9
            assert np.linalg.norm(nearest - best) < 1e-3
            assert polygon.depth(nearest) == pytest.approx(0.0, abs=1e-12)


def test_a_point_absurdly_far_comes_back_along_its_direction():
    polygon = SupportPolygon.of_points([[-0.1, -0.1], [0.1, -0.1], [0.1, 0.1], [-0.1, 0.1]])
    np.testing.assert_allclose(polygon.nearest([1e300, 0.0]), [0.1, 0.0])
    np.testing.assert_allclose(polygon.shrunk(0.02).nearest([-1e300, 1e300]), [-0.08, 0.08])
