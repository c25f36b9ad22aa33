"""The balance's support stage (control.support) against polygons computed by hand: two soles 0.2 m × 0.1 m, their
centres 0.2 m apart sideways, the right one turned by 90° in a second case; the CoM's load-sharing region, the limbs'
shrunk polygon, the ZMP margin and the soles' (a measured ZMP's plausibility); the support section handed over when its
foot lifts."""
import math

import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.control.embedded_motion import BASE, C_BUSY
from humanoid_balance.control.support import SUPPORT_MOVED, SoleSupport, support_roles
from humanoid_balance.model.soles import SoleRectangle

SOLE = SoleRectangle(-0.1, 0.1, -0.05, 0.05).corners()  # (4, 3) in the sole frame [m]
MARGIN, SHARE = 0.02, 0.25
LEFT, RIGHT = pin.SE3(np.eye(3), np.array([0.0, 0.1, 0.03])), pin.SE3(np.eye(3), np.array([0.0, -0.1, 0.03]))


def stage():
    return SoleSupport([SOLE, SOLE], MARGIN, SHARE)


def test_two_soles_side_by_side():
    """Hull: x in [-0.1, 0.1], y in [-0.15, 0.15]. The CoM's region, each sole carrying at least a quarter: the
    load-weighted mean of the soles' points, 3/4 on one and 1/4 on the other, y from 0.75·0.1 − 0.25·0.1 ± 0.05 to the
    mirror image: y in [-0.1, 0.1], x in [-0.1, 0.1]. The limbs' polygon: the hull less the margin."""
    support = stage().support((0, 1), [LEFT, RIGHT])
    for point, depth in (((0.0, 0.0), 0.1), ((0.05, 0.0), 0.05), ((0.0, 0.14), 0.01), ((0.0, 0.2), -0.05)):
        assert support.polygon.depth(point) == pytest.approx(depth)
    assert sorted(map(tuple, np.round(support.polygon.vertices, 12))) == \
        [(-0.1, -0.15), (-0.1, 0.15), (0.1, -0.15), (0.1, 0.15)]
    for point, depth in (((0.0, 0.0), 0.1), ((0.0, 0.09), 0.01), ((0.0, 0.12), -0.02), ((0.09, -0.05), 0.01)):
        assert support.com.depth(point) == pytest.approx(depth)
    for point, depth in (((0.0, 0.0), 0.1 - MARGIN), ((0.0, 0.14), 0.01 - MARGIN)):
        assert support.limbs.depth(point) == pytest.approx(depth)


def test_one_sole_turned_and_moved():
    """The right sole alone, turned by 90° about z and 0.3 m forward: its polygon is x in [0.25, 0.35], y in
    [-0.2, 0.0]; the CoM's region is the sole itself."""
    turned = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, math.pi / 2), np.array([0.3, -0.1, 0.0]))
    support = stage().support((1,), [LEFT, turned])
    assert support.polygon.depth((0.3, -0.1)) == pytest.approx(0.05)
    assert support.polygon.depth((0.34, -0.19)) == pytest.approx(0.01)
    assert support.com.depth((0.3, -0.1)) == pytest.approx(0.05)


def test_rebuilt_only_when_the_soles_move():
    soles = stage()
    first = soles.support((0, 1), [LEFT, RIGHT])
    nudged = pin.SE3(np.eye(3), LEFT.translation + [0.0, 0.5 * SUPPORT_MOVED, 0.0])
    assert soles.support((0, 1), [nudged, RIGHT]) is first
    moved = pin.SE3(np.eye(3), LEFT.translation + [0.0, 2.0 * SUPPORT_MOVED, 0.0])  # the hull's left edge at 0.152
    again = soles.support((0, 1), [moved, RIGHT])
    assert again is not first and again.polygon.depth((0.0, 0.15)) == pytest.approx(2.0 * SUPPORT_MOVED)


def test_zmp_margin_of_the_last_update():
    soles = stage()
    assert soles.supported is None and math.isnan(soles.zmp_margin(np.zeros(2)))  # before the first update
    soles.support((0, 1), [LEFT, RIGHT])
    soles.stood((0, 1), [LEFT, RIGHT])
    assert soles.supported is True
    assert soles.zmp_margin(np.array([0.02, 0.14])) == pytest.approx(0.01)
    assert math.isnan(soles.zmp_margin(None))
    soles.support((1,), [LEFT, RIGHT], current=False)  # where a step wants the CoM: not the soles in contact
    assert soles.zmp_margin(np.array([0.02, 0.14])) == pytest.approx(0.01)
    soles.support((), [LEFT, RIGHT])
    soles.stood((), [LEFT, RIGHT])
    assert soles.supported is False and math.isnan(soles.zmp_margin(np.zeros(2)))  # in the air


def test_the_soles_margin_takes_every_sole_in_contact_or_not():
    """The plausibility of a measured ZMP: the hull of both soles (x in [-0.1, 0.1], y in [-0.15, 0.15]) whatever
    stands, since a measured ZMP lags a lift-off; NaN before an update."""
    soles = stage()
    assert math.isnan(soles.soles_margin(np.zeros(2)))
    soles.support((1,), [LEFT, RIGHT])
    soles.stood((1,), [LEFT, RIGHT])  # on the right foot: (0, 0.05) is outside its sole, inside the hull
    assert soles.zmp_margin(np.array([0.0, 0.05])) == pytest.approx(-0.1)
    assert soles.soles_margin(np.array([0.0, 0.05])) == pytest.approx(0.1)
    assert soles.soles_margin(np.array([1.0, 0.0])) == pytest.approx(-0.9)
    assert math.isnan(soles.soles_margin(None))


def test_the_support_section_moves_to_a_foot_in_contact():
    feet = ["left_foot", "right_foot"]
    assert support_roles(feet, "left_foot", (0, 1)) is None
    assert support_roles(feet, "left_foot", (0,)) is None
    assert support_roles(feet, "left_foot", (1,)) == {"left_foot": C_BUSY, "right_foot": BASE}
    assert support_roles(feet, "right_foot", (0, 1)) is None
    assert support_roles(feet, "right_foot", (0,)) == {"left_foot": BASE, "right_foot": C_BUSY}
