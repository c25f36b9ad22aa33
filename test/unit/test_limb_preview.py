"""The J-busy limbs' stage of a balance tick (control.limb_preview) against hand-computed figures: a one-joint limb
following a constant 0.2 rad/s for 2 s is sent 0.2 rad/s at full speed, a limb without a trajectory zeros; a new
trajectory is taken up once; the preview is taken every PREVIEW_STEP of the stamps' clock and the momentum matrix
every MOMENTUM_MAP_PREVIEWS previews while a limb moves, never while none does; a limb whose angular momentum would carry the ZMP out of a 2 cm support is slowed."""
import numpy as np
import pytest

from humanoid_balance.control.joint_trajectory import LimbTrajectory
from humanoid_balance.control.limb_motion import PREVIEW_STEP, SLOWED, TrajectoryClock
from humanoid_balance.control.limb_preview import MOMENTUM_MAP_PREVIEWS, LimbPreview
from humanoid_balance.model.support_polygon import SupportPolygon

DT, MASS, HEIGHT = 0.002, 50.0, 0.8
RATE = 0.2  # [rad/s]
SMALL = SupportPolygon.of_points([[-0.01, -0.01], [0.01, -0.01], [0.01, 0.01], [-0.01, 0.01]])


def preview():
    """An arm of one joint (output 0) and a head of one (output 1), each limited to 3 rad/s, ±3 rad."""
    limits = (np.array([-3.0]), np.array([3.0]))
    clock = TrajectoryClock({"arm": [0], "head": [1]}, {"arm": np.array([3.0]), "head": np.array([3.0])},
                            {"arm": limits, "head": limits})
    return LimbPreview(clock, {"arm": 1, "head": 1})


def constant(start=0.0):
    return LimbTrajectory(start, np.array([0.0, 2.0]), velocities=np.full((2, 1), RATE))


def run(stage, trajectories, momentum_map, ticks, polygon=None):
    position, calls, sent = np.zeros(2), [], []

    def matrix():
        calls.append(len(sent))
        return momentum_map
    for k in range(ticks):
        rates, limitations = stage.rates(trajectories, k * DT, position, matrix, MASS, HEIGHT, np.zeros(2), polygon,
                                         None, DT)
        position += DT * np.r_[rates["arm"], rates["head"]]
        sent.append((rates, limitations))
    return sent, calls, position


def test_a_constant_rate_is_sent_as_it_is_and_an_idle_limb_holds():
    stage = preview()
    trajectories = {"arm": constant()}
    sent, calls, position = run(stage, trajectories, np.zeros((6, 8)), 60)
    for rates, limitations in sent:
        assert rates["arm"] == pytest.approx([RATE], abs=1e-12) and rates["head"] == pytest.approx([0.0])
        assert limitations == ()
    # 60 updates of 2 ms: a preview every 10 ms (updates 0, 5, ..., 55), the matrix every fifth (0, 25, 50)
    assert PREVIEW_STEP == 0.01 and MOMENTUM_MAP_PREVIEWS == 5 and calls == [0, 25, 50]
    assert position[0] == pytest.approx(60 * DT * RATE)
    assert stage.followed == trajectories


def test_a_trajectory_is_taken_up_once_and_a_new_one_replaces_it():
    stage = preview()
    first = constant()
    run(stage, {"arm": first}, np.zeros((6, 8)), 3)
    assert stage.followed["arm"] is first
    second = constant(start=1.0)  # begins 1 s after the stamps' zero: at k DT < 1 s it has not started
    sent, _, _ = run(stage, {"arm": second}, np.zeros((6, 8)), 2)
    assert stage.followed["arm"] is second


def test_no_momentum_matrix_while_no_limb_moves():
    stage = preview()
    sent, calls, _ = run(stage, {}, None, 10)
    assert calls == [] and all(rates == {"arm": [0.0], "head": [0.0]} for rates, _ in sent)


def test_a_limb_whose_momentum_would_carry_the_zmp_out_is_slowed():
    """L_y = 400 kg m² per rad/s of the arm: its stop at 2 s (0.2 rad/s to rest within a 10 ms preview step, seen
    from 1 s on) is an L̇_y of 8000 N·m, a ZMP shift of metres for a 50 kg robot whose support allows 1 cm; the same
    arm without momentum keeps its speed."""
    momentum_map = np.zeros((6, 8))
    momentum_map[4, 6] = 400.0
    stage = preview()
    sent, _, _ = run(stage, {"arm": constant()}, momentum_map, 1000, SMALL)
    assert stage.clock.scale < 0.5
    assert sent[-1][0]["arm"][0] < 0.5 * RATE
    assert any(limitation.reason == SLOWED for _, limitations in sent for limitation in limitations)
    free = preview()
    sent, _, _ = run(free, {"arm": constant()}, np.zeros((6, 8)), 1000, SMALL)
    assert free.clock.scale == 1.0 and sent[-1][0]["arm"][0] == pytest.approx(RATE)
