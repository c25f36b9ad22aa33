"""Plausibility of the state inputs (estimation.plausibility): a reading beyond what the quantity can have moved since
the last accepted one is refused, readings that agree with each other away from it for long enough are taken over,
readings that do not (a fuzzer) never are; the bounds from the robot's model against its URDF and the fall of a
point mass."""
import math
import xml.etree.ElementTree as ElementTree

import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.estimation.plausibility import (PERSISTENCE, ChangeGate, MotionGate, RangeGate, base_bounds,
                                                      joint_speed_bounds, rotation_difference, weight_ratio)

PERIOD = 0.01  # [s] 100 Hz


def test_a_reading_beyond_the_rate_is_refused_and_the_next_good_one_taken():
    gate = MotionGate(rate=1.0, tolerance=0.01)
    for k in range(50):  # moving at 0.9 m/s
        assert gate.check(np.array([0.009 * k]), PERIOD * k).accepted
    jump = gate.check(np.array([0.441 + 0.5]), 0.5)  # 0.5 m from the last (0.441 m at 0.49 s) in 0.01 s
    assert not jump.accepted and jump.step == pytest.approx(0.5, abs=1e-9)
    assert jump.allowed == pytest.approx(1.0 * 0.01 + 0.01)
    assert gate.check(np.array([0.459]), 0.51).accepted  # back on track: 0.018 m in 0.02 s from the last accepted
    np.testing.assert_array_equal(gate.value, [0.459])


def test_a_fuzzer_is_never_taken_over_and_the_true_readings_go_on():
    rng = np.random.default_rng(3)
    gate = MotionGate(rate=[1.0, 1.0, 1.0], tolerance=0.01)
    accepted = 0
    for k in range(1000):
        time = PERIOD * k
        assert gate.check(np.array([0.001 * k, 0.0, 0.9]), time).accepted
        accepted += 1
        for _ in range(3):  # three absurd readings per tick, each somewhere else
            verdict = gate.check(rng.uniform(-10.0, 10.0, 3), time + 0.5 * PERIOD)
            assert not verdict.accepted and not verdict.taken_over
    assert gate.taken_over == 0 and accepted == 1000


def test_a_relocalisation_is_taken_over_after_it_persists():
    gate = MotionGate(rate=2.0, tolerance=0.05)
    for k in range(10):
        assert gate.check(np.array([0.0, 0.0]), PERIOD * k).accepted
    verdicts = [gate.check(np.array([3.0, -0.5]), 0.1 + PERIOD * k) for k in range(100)]  # moved by 3 m, and stays
    # (at 2 m/s, 1.5 s away: plausible only then)
    taken = [k for k, verdict in enumerate(verdicts) if verdict.accepted]
    assert taken[0] == round(PERSISTENCE / PERIOD) and verdicts[taken[0]].taken_over  # after PERSISTENCE of stamps
    assert verdicts[taken[0]].component == 0 and verdicts[taken[0]].step == pytest.approx(3.0)
    assert all(verdict.accepted and not verdict.taken_over for verdict in verdicts[taken[0] + 1:])
    assert gate.taken_over == 1


def test_a_burst_under_one_stamp_is_never_taken_over():
    gate = MotionGate(rate=2.0, tolerance=0.05)
    gate.check(np.zeros(3), 0.0)
    assert not any(gate.check(np.full(3, 5.0), 0.01).accepted for _ in range(1000))


def test_after_missed_readings_a_joint_that_jumps_beyond_its_range_is_refused_though_its_speed_allows_the_step(
        kangaroo_floating):
    """A receiver that missed 7 ticks gives a 10 rad/s hip yaw 0.1 s: a reading 1 rad away passes its speed bound
    (1.5 × 10 rad/s × 0.1 s + 0.05), but jumped 0.48 rad beyond the URDF's ±0.52 rad (the fuzz of
    estimated_joint_states slipped such a reading in, and the balancer jumped its command to it)."""
    robot, _ = kangaroo_floating
    names = ["left_hip_yaw"]
    urdf = ElementTree.parse(robot.urdf_path).getroot()
    limit = urdf.find("joint[@name='left_hip_yaw']/limit")
    lower, upper = float(limit.get("lower")), float(limit.get("upper"))
    motion = MotionGate(joint_speed_bounds(robot, names, 1.5), 0.05)
    joint_range = RangeGate(*robot.position_limits(names), 0.05, 0.05)
    assert motion.check(np.array([0.0]), 0.0).accepted and joint_range.check(np.array([0.0]), 0.0).accepted
    outlier = np.array([1.0])
    assert motion.check(outlier, 0.1, 0.1).accepted  # the speed bound alone lets it in
    verdict = joint_range.check(outlier, 0.1, 0.1, last=np.array([0.0]))
    assert not verdict.accepted and verdict.step == pytest.approx(1.0 - upper) and verdict.allowed == 0.05
    assert joint_range.check(np.array([upper + 0.049]), 0.11, 0.11, last=np.array([0.0])).accepted  # tolerated
    assert not joint_range.check(np.array([lower - 0.051]), 0.12, 0.12, last=np.array([0.0])).accepted


def test_a_joint_resting_beyond_its_range_is_accepted_one_jumping_there_is_not():
    """iCub's elbow rests 0.1 rad beyond its URDF range in MuJoCo, moving by less than the step tolerance between
    readings: accepted; the same reading right after one in the middle of the range: refused."""
    joint_range = RangeGate([0.0], [1.6], 0.05, 0.05)
    resting = [joint_range.check(np.array([-0.096 + 0.002 * math.sin(k)]), PERIOD * k,
                                 last=np.array([-0.096 + 0.002 * math.sin(k - 1)])) for k in range(1, 200)]
    assert all(verdict.accepted and not verdict.taken_over for verdict in resting)
    assert not joint_range.check(np.array([-0.096]), 2.0, last=np.array([0.8])).accepted


def test_a_joint_that_keeps_reading_beyond_its_range_is_taken_over_and_a_fuzzer_never():
    joint_range = RangeGate([-1.0, 0.0], [1.0, 2.0], 0.05, 0.05)
    last = np.array([0.9, 0.5])  # the last accepted reading, before the joint read 1.2 (the URDF is wrong there)
    verdicts = [joint_range.check(np.array([1.2, 0.5]), PERIOD * k, last=last) for k in range(100)]
    taken = [k for k, verdict in enumerate(verdicts) if verdict.accepted]
    assert taken[0] == round(PERSISTENCE / PERIOD) and verdicts[taken[0]].taken_over
    assert verdicts[taken[0]].component == 0 and verdicts[taken[0]].step == pytest.approx(0.2)
    assert all(verdict.accepted and not verdict.taken_over for verdict in verdicts[taken[0] + 1:])
    assert joint_range.check(np.array([50.0, 0.5]), 1.01, last=last).accepted  # no longer bounded
    assert not joint_range.check(np.array([0.0, 2.1]), 1.02, last=last).accepted  # the other one still is
    fuzzed = RangeGate([-1.0], [1.0], 0.05, 0.05)
    for k in range(1000):  # beyond in between true readings: never taken over
        assert fuzzed.check(np.array([0.0]), PERIOD * k, last=np.array([0.0])).accepted
        assert not fuzzed.check(np.array([5.0]), PERIOD * k + 0.005, last=np.array([0.0])).accepted
    assert RangeGate([0.0], [0.0], 0.05, 0.05).check(np.array([3.0]), 0.0).accepted  # an empty range: unbounded


def test_rotations_are_compared_by_their_angle():
    gate = MotionGate(rate=3.0, tolerance=0.05, difference=rotation_difference)
    assert gate.check(np.eye(3), 0.0).accepted
    turned = pin.utils.rotate("z", 0.3) @ pin.utils.rotate("x", 0.2)
    verdict = gate.check(turned, PERIOD)
    angle = np.linalg.norm(pin.log3(turned))
    assert not verdict.accepted and verdict.step == pytest.approx(angle) and verdict.allowed == pytest.approx(0.08)
    assert gate.check(pin.utils.rotate("y", 0.02), 2 * PERIOD).accepted


def test_joint_speed_bounds_are_the_urdf_s_velocity_limits(kangaroo_floating):
    robot, _ = kangaroo_floating
    names = list(robot.output_names)
    bounds = joint_speed_bounds(robot, names, 1.5)
    urdf = ElementTree.parse(robot.urdf_path).getroot()
    for name, bound in zip(names, bounds):
        limit = urdf.find(f"joint[@name='{name}']/limit")
        velocity = 0.0 if limit is None else float(limit.get("velocity", 0.0))
        assert bound == (1.5 * velocity if velocity > 0 else math.inf), name


def test_base_bounds_are_a_fall_from_the_com_height(kangaroo_floating):
    robot, _ = kangaroo_floating
    speed, angular = base_bounds(robot, 0.9)
    assert speed == pytest.approx(math.sqrt(2 * 9.81 * 0.9), rel=1e-3) and angular == pytest.approx(speed / 0.9)
    assert weight_ratio([0.0, 0.0, robot.total_mass * 9.81 * 2], robot) == pytest.approx(2.0, rel=1e-3)


def test_a_stamp_ahead_of_the_receiver_s_clock_claims_no_more_time():
    gate = MotionGate(rate=8.0, tolerance=0.05)
    assert gate.check(np.zeros(3), 10.0, clock=10.0).accepted
    # stamped 0.45 s ahead, received 5 ms later: 8 m/s × 0.45 s would allow 3.6 m, 5 ms allows 0.09 m
    assert not gate.check(np.array([3.0, 0.0, 0.0]), 10.45, clock=10.005).accepted
    assert gate.check(np.array([3.0, 0.0, 0.0]), 10.45).accepted  # without the clock the stamps are believed


def test_a_plausible_reading_stamped_ahead_does_not_hold_off_the_true_ones_after_it():
    """A reading 1 cm behind the true one and stamped 0.4 s ahead (a second publisher) is within the bounds and
    accepted; the true readings after it, stamped before it, had their time to move: the stream goes on (it was
    refused as implausible, the 1.5 cm from the false reading allowed no time to move but the 1 cm tolerance)."""
    gate = MotionGate(rate=1.0, tolerance=0.01)
    for k in range(10):  # moving at 0.5 m/s, received as stamped
        assert gate.check(np.array([0.005 * k]), PERIOD * k, clock=PERIOD * k).accepted
    assert gate.check(np.array([0.035]), 0.09 + 0.4, clock=0.091).accepted
    for k in range(10, 60):
        assert gate.check(np.array([0.005 * k]), PERIOD * k, clock=PERIOD * k).accepted, f"refused at {PERIOD * k} s"


def test_a_component_without_a_bound_takes_any_step():
    gate = MotionGate(rate=[1.0, math.inf], tolerance=0.01)
    gate.check(np.zeros(2), 0.0)
    assert gate.check(np.array([0.0, 100.0]), 0.0).accepted
    assert not gate.check(np.array([1.0, 100.0]), 0.0).accepted


def test_a_foot_lifted_again_sooner_than_a_step_can_is_refused_and_put_down_always():
    """A real step: lifted at 1.0 s, put down at 1.35 s, lifted again at 2.0 s. A second publisher toggling the flag:
    its lifts within min_interval of the last change are refused, its put-downs taken."""
    gate = ChangeGate(True, 0.1)
    assert gate.check(False, 0.0)
    assert [gate.check(value, time) for value, time in ((True, 1.0), (False, 1.35), (True, 2.0))] == [True] * 3
    assert gate.check(False, 2.01)                 # put down: always
    assert not gate.check(True, 2.05)              # lifted 0.04 s after: refused
    assert gate.since(2.05) == pytest.approx(0.04)
    assert gate.check(False, 2.06)                 # the state it holds: no change
    assert gate.check(True, 2.12) and gate.value   # 0.11 s after the put-down
