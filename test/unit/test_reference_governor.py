"""The CoM reference governor: whatever the wish, the granted reference stays in the support polygon shrunk by the
margin and in the legs' height range, moves within its speed and acceleration bounds, and its ZMP — computed here
from the LIPM (Choi–Kim eq. 23) with the reference's acceleration by finite differences of its positions — never
leaves the support polygon; a reachable wish is reached. A limitation is reported only where the diagnostics can show
what was not granted."""
import numpy as np
import pytest

from humanoid_balance.control.reference_governor import (APPROACHING, HEIGHT_OUT_OF_REACH, OUTSIDE_SUPPORT,
                                                          ComGovernor)
from humanoid_balance.model.support_polygon import SupportPolygon
from humanoid_balance.nodes.limitations import describe, describe_values

# two soles 0.22 × 0.11 m, 0.18 m apart (kangaroo_like's)
SUPPORT = SupportPolygon.of_points([[-0.08, -0.145], [0.14, -0.145], [0.14, 0.145], [-0.08, 0.145]])
HEIGHTS = (0.6, 0.85)       # [m]
OMEGA = np.sqrt(9.81 / 0.8)
DT = 0.002


def run(governor, wish, seconds=4.0, support=SUPPORT):
    positions, limitations = [], []
    for _ in range(int(seconds / DT)):
        granted = governor.update(wish, support, HEIGHTS, OMEGA, DT)
        positions.append(granted.position)
        limitations.append(granted.limitations)
    return np.array(positions), limitations


@pytest.mark.parametrize("wish", [(0.5, 0.0, 0.8), (0.0, 0.3, 0.8), (1e300, 0.0, 0.8), (-0.3, -0.4, 0.2),
                                  (0.05, 0.05, 1e300)])
def test_an_unreachable_wish_is_held_at_the_margin_and_approached_within_the_lipm_bound(wish):
    margin = 0.02
    governor = ComGovernor(margin, max_speed=0.1, max_acceleration=0.5)
    governor.reset([0.02, 0.0, 0.8])
    positions, limitations = run(governor, np.array(wish, dtype=float))
    velocity = np.diff(positions, axis=0) / DT
    acceleration = np.diff(velocity, axis=0) / DT
    assert np.linalg.norm(velocity, axis=1).max() <= 0.1 + 1e-9
    assert np.linalg.norm(acceleration, axis=1).max() <= min(0.5, OMEGA ** 2 * margin) + 1e-6
    zmp = positions[1:-1, :2] - acceleration[:, :2] / OMEGA ** 2  # LIPM, Choi–Kim eq. 23
    assert min(SUPPORT.depth(p) for p in zmp) >= -1e-9, "the reference's ZMP left the support polygon"
    assert min(SUPPORT.depth(p) for p in positions) >= margin - 1e-6  # (a landing within a micrometre)
    assert HEIGHTS[0] - 1e-6 <= positions[:, 2].min() and positions[:, 2].max() <= HEIGHTS[1] + 1e-6
    # held where the projection is: the shrunk polygon's point nearest the wish (brute force over its boundary)
    grid = np.stack(np.meshgrid(np.linspace(-0.06, 0.12, 721), np.linspace(-0.125, 0.125, 1001)), axis=-1)
    grid = grid.reshape(-1, 2)
    far = np.array(wish[:2], dtype=float)
    far *= min(1.0, 10.0 / np.hypot(*far))  # 1e300 m away: the same direction, 10 m away
    expected = grid[np.argmin(np.linalg.norm(grid - far, axis=1))]
    np.testing.assert_allclose(positions[-1, :2], expected, atol=5e-4)
    reasons = {limitation.reason for limitation in limitations[-1]}
    assert OUTSIDE_SUPPORT in reasons or HEIGHT_OUT_OF_REACH in reasons
    assert APPROACHING not in reasons  # arrived


def test_a_reachable_wish_is_reached_smoothly_and_then_granted_as_asked():
    governor = ComGovernor(0.02, max_speed=0.1, max_acceleration=0.5)
    governor.reset([0.02, 0.0, 0.8])
    wish = np.array([0.02, 0.095, 0.78])  # 3 cm inside the margin (y ≤ 0.145 − 0.02), 2 cm lower
    positions, limitations = run(governor, wish, seconds=2.0)
    np.testing.assert_allclose(positions[-1], wish, atol=1e-9)
    assert limitations[-1] == ()
    assert APPROACHING in {limitation.reason for limitation in limitations[10]}
    assert np.linalg.norm(positions[1] - positions[0]) < 1e-5  # it starts at rest


def test_what_is_reported_limited_reads_so_in_the_diagnostics():
    """An approach reports the target granted and where the reference is now on its way (not that point as granted);
    every limitation's two values differ in the diagnostics' millimetres, so that none reads "asked x, granted x" —
    a reference within a millimetre of its target has arrived."""
    governor = ComGovernor(0.02, max_speed=0.1, max_acceleration=0.5)
    governor.reset([0.02, 0.0, 0.8])
    wish = np.array([0.02, 0.095, 0.78])
    positions, limitations = run(governor, wish, seconds=2.0)
    approaches = [(k, limitation) for k, tick in enumerate(limitations) for limitation in tick]
    assert approaches and {limitation.reason for _, limitation in approaches} == {APPROACHING}
    for k, limitation in approaches:
        assert limitation.granted == pytest.approx(wish) and limitation.current == pytest.approx(positions[k])
        assert describe_values(limitation.granted) != describe_values(limitation.current), describe(limitation)
        assert describe(limitation) == (f"com_reference {APPROACHING}: granted (0.020, 0.095, 0.780), on its way "
                                        f"there, now at {describe_values(positions[k])}")
    last = max(k for k, _ in approaches)
    assert np.abs(positions[last + 1] - wish).max() <= 1e-3  # arrived: within the millimetre shown


@pytest.mark.parametrize("beyond, limited", [(0.0005, False), (0.002, True)])
def test_a_wish_beyond_the_margin_is_reported_held_when_the_diagnostics_show_it(beyond, limited):
    """The margin's edge beside the feet at y = 0.145 − 0.02 m: a wish half a millimetre beyond it is held there and
    granted as asked; two millimetres beyond, it reads asked 0.127, granted 0.125."""
    governor = ComGovernor(0.02, max_speed=0.1, max_acceleration=0.5)
    governor.reset([0.02, 0.125, 0.8])
    positions, limitations = run(governor, np.array([0.02, 0.125 + beyond, 0.8]), seconds=0.2)
    np.testing.assert_allclose(positions[-1], [0.02, 0.125, 0.8], atol=1e-9)
    reported = {describe(limitation) for tick in limitations for limitation in tick}
    assert reported == ({f"com_reference {OUTSIDE_SUPPORT}: asked (0.020, 0.127, 0.800), granted (0.020, 0.125, 0.800)"}
                        if limited else set())


def test_without_contact_the_horizontal_reference_is_held():
    governor = ComGovernor()
    governor.reset([0.02, 0.0, 0.8])
    positions, limitations = run(governor, np.array([0.1, 0.1, 0.8]), seconds=0.5, support=None)
    np.testing.assert_allclose(positions[:, :2], np.tile([0.02, 0.0], (len(positions), 1)))


def test_margins_and_bounds_are_validated_with_their_names():
    with pytest.raises(ValueError, match="support_margin"):
        ComGovernor(-0.01)
    with pytest.raises(ValueError, match="max_com_speed"):
        ComGovernor(0.02, 0.0, 1.0)


def test_a_widened_margin_holds_the_reference_further_inside_on_its_grid():
    """A starved computer (loop.BalanceStage): a wish beyond the toes is held margin + extra inside them, the extra on
    a 5 mm grid, and back at the margin once it is taken away."""
    governor = ComGovernor(0.02, max_speed=0.1, max_acceleration=0.5)
    governor.reset([0.02, 0.0, 0.8])
    wish = np.array([0.5, 0.0, 0.8])
    for extra, held in ((0.0, 0.12), (0.021, 0.10), (0.0, 0.12)):
        governor.widen(extra)
        positions, _ = run(governor, wish)
        assert positions[-1, 0] == pytest.approx(held, abs=1e-4), extra
