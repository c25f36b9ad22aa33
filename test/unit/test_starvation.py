"""A starved computer seen from the states' stamps (loop.starvation) and what the balance does then
(loop.BalanceStage): the share of a 100 Hz source's ticks skipped, counted against the stamps a stage was given; new
references refused while starved, the CoM granted when it began held, the wish taken up again afterwards."""
import numpy as np
import pytest

from humanoid_balance.bench.closed_loop import robot_config
from humanoid_balance.loop import BalanceLoop, Starved
from humanoid_balance.control.zmp_com import ZmpComGains, check_gains, slowed
from humanoid_balance.loop.starvation import FEW_SKIPPED, LATENESS_MEMORY, STARVED, Starvation

PERIOD = 0.01  # [s] a 100 Hz source


def stamps(start, duration, every=1, period=PERIOD):
    """The stamps of a source (100 Hz) from ``start`` for ``duration`` [s], one in ``every`` taken."""
    return start + period * np.arange(0, round(duration / period), every)


def test_one_tick_in_three_taken_is_starved_until_every_tick_comes_back():
    starvation = Starvation()
    rng = np.random.default_rng(1)
    assert not any(starvation.take(t + 0.1 * PERIOD * rng.uniform(-1, 1)) for t in stamps(0.0, 1.0))
    assert starvation.fraction == 0.0
    verdicts = [starvation.take(t) for t in stamps(1.0, 1.0, every=3)]
    assert verdicts[-1] and starvation.fraction == pytest.approx(2 / 3, abs=0.02)
    assert not any(verdicts[:3])  # a few skipped ticks are no starvation: more than STARVED of the last second are
    verdicts = [starvation.take(t) for t in stamps(2.0, 1.5)]
    assert verdicts[0] and not verdicts[-1] and starvation.fraction == 0.0
    # it ends once the skipped ones are less than half the threshold: between 0.4 and 0.9 s of full rate here
    ended = verdicts.index(False) * PERIOD
    assert 0.3 < ended < 1.0


def test_a_1_khz_source_taken_at_286_hz_is_no_starvation():
    """Skipping most ticks is starvation only under starved_rate (80 Hz): not for a balancer that computes on a 1 kHz
    robot's states at 286 Hz, now and then on two in a row (so that the source's period is seen), else on one in
    four."""
    taken = np.cumsum(np.tile([0.001, 0.004, 0.004, 0.004, 0.004, 0.004], 100))  # 6 states in 21 ms
    starvation = Starvation()
    assert not any(starvation.take(t) for t in taken)
    assert starvation.fraction == pytest.approx(15 / 21, abs=0.01) and starvation.taken_rate == pytest.approx(
        6 / 0.021, rel=0.01)
    slower = Starvation(rate=300.0)
    assert [slower.take(t) for t in taken][-1]


def test_an_outage_or_a_clock_set_back_is_no_starvation():
    starvation = Starvation()
    for t in stamps(0.0, 1.0):
        starvation.take(t)
    assert not starvation.take(3.0)  # 2 s without a state: a stopped source, which the stale-input hold handles
    assert not any(starvation.take(t) for t in stamps(3.01, 0.5))
    assert not starvation.take(0.5)  # the source's clock went back (a simulation reset)
    assert starvation.fraction == 0.0


def test_the_lateness_is_the_share_skipped_held_and_decaying_and_none_for_a_fast_balancer():
    """One tick in ten skipped (90 Hz of a 100 Hz source: not starved) is a lateness of 0.1, held through a second at
    full rate and decaying with LATENESS_MEMORY after; a balancer at 286 Hz of a 1 kHz robot is not late at all."""
    starvation = Starvation()
    every_tenth = [t for k, t in enumerate(stamps(0.0, 2.0)) if k % 10 != 9]
    assert not any(starvation.take(t) for t in every_tenth)
    assert starvation.lateness == pytest.approx(0.1, abs=0.01)
    for t in stamps(2.0, 1.0 + LATENESS_MEMORY):
        starvation.take(t)
    assert starvation.fraction == 0.0
    assert starvation.lateness == pytest.approx(0.1 * np.exp(-(1.0 + LATENESS_MEMORY) / LATENESS_MEMORY), rel=0.2)
    fast = Starvation()
    for t in np.cumsum(np.tile([0.001, 0.004, 0.004, 0.004, 0.004, 0.004], 100)):
        fast.take(t)
    assert fast.fraction > 0.7 and fast.lateness == 0.0


def test_the_zmp_gain_is_slowed_to_the_share_of_ticks_computed_on_within_eq_25():
    """Eq. 24's k_p in proportion to the ticks computed on (control.zmp_com.slowed) once more than FEW_SKIPPED of them
    are skipped: untouched at one tick in twenty skipped and for a balancer at 286 Hz of a 1 kHz robot; at one tick in
    three taken, a third of k_p (over 1 − FEW_SKIPPED), which still meets eq. 25 and 31; back to k_p once the ticks are
    back and the lateness has decayed."""
    gains = ZmpComGains(np.full(2, 2.0), np.full(2, 5.0))
    few = Starvation()
    for t in (t for k, t in enumerate(stamps(0.0, 2.0)) if k % 20 != 19):
        few.take(t)
    assert few.computed_share == 1.0 and slowed(gains, few.computed_share) is gains
    fast = Starvation()
    for t in np.cumsum(np.tile([0.001, 0.004, 0.004, 0.004, 0.004, 0.004], 100)):
        fast.take(t)
    assert fast.computed_share == 1.0
    starved = Starvation()
    for t in np.r_[stamps(0.0, 1.0), stamps(1.0, 2.0, every=3)]:  # (the source's period seen first)
        starved.take(t)
    share = starved.computed_share
    assert share == pytest.approx((1.0 / 3.0) / (1.0 - FEW_SKIPPED), abs=0.03)
    slow = slowed(gains, share)
    np.testing.assert_allclose(slow.k_p, gains.k_p * share)
    np.testing.assert_array_equal(slow.k_c, gains.k_c)
    check_gains(slow, com_height=0.85)  # k_c = 5 > ω_n = 3.40 > k_p, k_p k_c < ω_n²
    for t in stamps(3.0, 1.0 + 5.0 * LATENESS_MEMORY):
        starved.take(t)
    assert starved.computed_share == 1.0


def test_a_starved_balance_refuses_new_references_and_holds_the_granted_com():
    loop = BalanceLoop.from_config(robot_config("kangaroo_like"))
    stage, robot = loop.balance, loop.robot
    q, v = robot.reference_q.copy(), np.zeros(robot.nv)
    wish = stage.controller.centroidal.com(q) + [0.5, 0.0, 0.0]  # ahead of the toes: granted at the support's edge

    def run(times):  # the CoM reference granted at each tick, and whether the stage was starved
        granted = [(stage.update(q, v, t, None).com_reference.copy(), stage.starvation.starved) for t in times]
        return np.array([position for position, _ in granted]), [starved for _, starved in granted]

    run(stamps(0.0, 0.5))
    stage.set_com_reference(wish)
    approached, _ = run(stamps(0.5, 0.2))
    assert approached[-1][0] > approached[0][0] + 0.005  # on its way to the edge of the support
    held, starved = run(stamps(0.7, 1.0, every=3))
    assert starved[-1] and stage.starvation.fraction > STARVED
    onset = starved.index(True)
    assert 0 < onset <= 12  # a fifth of the last second skipped: 0.33 s after the first skipped ticks
    # held where it was granted: the governor stops there (within its stopping distance) and stays
    assert np.abs(held[onset:] - held[onset]).max() < 0.01
    assert np.abs(held[-5:] - held[-1]).max() < 1e-4
    assert held[-1][0] < wish[0] - 0.3
    for request in (lambda: stage.set_com_reference(wish - [0.5, 0.0, 0.0]),
                    lambda: stage.request_step("left_foot", None), stage.jump,
                    lambda: stage.change_mode("momentum")):
        with pytest.raises(Starved, match="short of time: [5-7][0-9] % of the state's ticks skipped in the last "
                                          "second, 3[0-9] Hz computed"):
            request()
    stage.change_mode("kinematic")  # not a change of mode: gains are still checked and taken
    np.testing.assert_array_equal(stage.com_reference, wish)  # the wish is kept
    resumed, starved = run(stamps(1.7, 2.0))
    assert not starved[-1]
    assert resumed[-1][0] > held[-1][0] + 0.005  # approached again once the ticks came back
