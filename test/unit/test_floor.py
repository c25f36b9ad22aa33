"""The floor's normal from the soles standing flat on it (control.floor), and levelling to it (control.foot_damping),
against rotations written out by hand: a slope the soles lie on, a sole rolled onto its toe, a first-order lag."""
import math

import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.control.floor import Floor
from humanoid_balance.control.foot_damping import FootDampingGains, levelling_rate
from humanoid_balance.model.soles import VERTICAL, SoleRectangle

SOLE = SoleRectangle(-0.1, 0.1, -0.05, 0.05)
DT = 0.002
WEIGHT_SHARE = 250.0  # [N] on each sole
CENTRED = np.array([0.0, 0.0, WEIGHT_SHARE, 0.0, 0.0, 0.0])  # CoP at the sole's centre
ON_THE_TOE = np.array([0.0, 0.0, WEIGHT_SHARE, 0.0, -SOLE.x_max * WEIGHT_SHARE, 0.0])  # CoP x = −τ_y / f_z = x_max


def soles(rotation, tipped=None):
    """Two soles 0.2 m apart on a floor turned by ``rotation``; ``tipped``: the left one's own rotation on top."""
    left = rotation if tipped is None else rotation @ tipped
    return [pin.SE3(left, np.array([0.0, 0.1, 0.0])), pin.SE3(rotation, np.array([0.0, -0.1, 0.0]))]


def angle(a, b):
    return math.atan2(np.linalg.norm(np.cross(a, b)), a @ b)


def test_the_floor_is_the_soles_normal_at_the_first_contact_and_a_sole_on_it_is_not_tilted():
    slope = pin.utils.rotate("y", math.radians(3.0)) @ pin.utils.rotate("x", math.radians(-2.0))
    floor = Floor([SOLE, SOLE])
    floor.update(soles(slope), (), None, DT)
    assert floor.normal is None  # in the air: nothing to see
    assert floor.tilt(slope[:, 2]) == pytest.approx(math.acos(slope[2, 2]))  # measured from the vertical till then
    floor.update(soles(slope), (0, 1), None, DT)
    np.testing.assert_allclose(floor.normal, slope[:, 2], atol=1e-12)
    assert floor.tilt(slope[:, 2]) == pytest.approx(0.0, abs=1e-9)
    rolled = slope @ pin.utils.rotate("y", math.radians(4.0))
    assert floor.tilt(rolled[:, 2]) == pytest.approx(math.radians(4.0))


def test_a_sole_leans_towards_the_edge_it_rolls_over_on_level_and_sloped_floors():
    """Floor.edge_tilts against the corners' heights: a sole turned by 4° about its y axis, toe down, leans −sin 4°
    towards +x (the toe, its lowest edge); about its x axis, its −y edge down, +sin 4° towards y; lying flat on a
    slope, it leans nowhere; rolled on that slope, it leans as on the level floor."""
    tilt = math.radians(4.0)
    for slope in (np.eye(3), pin.utils.rotate("y", math.radians(3.0)) @ pin.utils.rotate("x", math.radians(-2.0))):
        floor = Floor([SOLE, SOLE])
        floor.update(soles(slope), (0, 1), None, DT)
        np.testing.assert_allclose(floor.edge_tilts(slope), (0.0, 0.0), atol=1e-12)
        for axis, expected in (("y", (-math.sin(tilt), 0.0)), ("x", (0.0, math.sin(tilt)))):
            rolled = slope @ pin.utils.rotate(axis, tilt)
            assert floor.edge_tilts(rolled) == pytest.approx(expected, abs=1e-12)
            heights = [(rolled @ corner) @ floor.normal for corner in SOLE.corners()]  # along the floor's normal
            lowest = SOLE.corners()[int(np.argmin(heights))]
            assert lowest[0] == SOLE.x_max if axis == "y" else lowest[1] == SOLE.y_min  # the edge the sign names


def test_a_sole_rolled_onto_its_toe_does_not_move_the_floor_and_flat_soles_draw_it_with_its_time_constant():
    floor = Floor([SOLE, SOLE], time_constant=0.5)
    floor.update(soles(np.eye(3)), (0, 1), None, DT)
    toe_up = pin.utils.rotate("y", math.radians(-6.0))  # the heel lifted: the left sole on its toe
    for _ in range(1000):  # 2 s on the toe: its CoP is on the edge, the right sole has no wrench measured
        floor.update(soles(np.eye(3), toe_up), (0, 1), [ON_THE_TOE, None], DT)
    np.testing.assert_allclose(floor.normal, [0.0, 0.0, 1.0], atol=1e-12)
    slope = pin.utils.rotate("x", math.radians(2.0))  # both soles flat on a floor 2° steeper, their CoPs centred
    for _ in range(250):  # one time constant
        floor.update(soles(slope), (0, 1), [CENTRED, CENTRED], DT)
    lag = (1.0 - DT / (0.5 + DT)) ** 250  # the first-order lag's remaining fraction, ≈ e⁻¹
    assert angle(floor.normal, [0.0, 0.0, 1.0]) == pytest.approx((1.0 - lag) * math.radians(2.0), rel=1e-3)
    assert lag == pytest.approx(math.exp(-1.0), rel=0.01)


def test_a_sole_lying_on_a_slope_is_left_alone_and_one_rolled_off_it_levels_back_onto_it():
    """On a floor of 4° a sole turned 3° further about the floor's own x axis turns back about −x at k_l (θ − θ₀)."""
    gains = FootDampingGains(0.0, 0.0, 0.0, 1.0, 0.05, level_gain=10.0, tilt_deadband=math.radians(1.0))
    slope = pin.utils.rotate("y", math.radians(4.0))
    np.testing.assert_array_equal(levelling_rate(slope[:, 2], slope[:, 2], gains, DT), 0.0)
    rolled = slope @ pin.utils.rotate("x", math.radians(3.0))
    rate = levelling_rate(rolled[:, 2], slope[:, 2], gains, DT)
    np.testing.assert_allclose(rate, -gains.level_gain * math.radians(2.0) * slope[:, 0], atol=1e-12)
    assert np.linalg.norm(levelling_rate(slope[:, 2], VERTICAL, gains, DT)) > 0.0  # levelled to the vertical,
    # the same sole would be turned off the slope: what put the soles on an edge before the floor was estimated
