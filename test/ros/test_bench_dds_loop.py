"""Benchmark experiment 7 (closed loop over DDS, free-running plant): the smoke run's rows are consistent with the
commanded rate and the measurement's length, and a node that dies at start-up is named with its output."""
import re

import pytest

from humanoid_balance.bench import dds_loop

pytestmark = pytest.mark.dds


def numbers(pattern, text):
    match = re.fullmatch(pattern, text)
    assert match, (pattern, text)
    return [float(group) for group in match.groups()]


def test_smoke_rows_agree_with_the_commanded_rate_and_duration():
    rate, seconds = dds_loop.SMOKE_RATE, dds_loop.SMOKE_SECONDS
    rows = dds_loop.run(smoke=True)
    assert [row.experiment for row in rows] == [dds_loop.EXPERIMENT] * 8
    floor, wake_up, ring, command_rate, p50, p99, standing, cpu = rows
    round_trip_median, round_trip_p99, pongs = numbers(r"median (\d+), p99 (\d+) \(n = (\d+)\)", floor.measured)
    assert 0 < round_trip_median <= round_trip_p99 and pongs == 90
    hot, after_a_sleep, hot_p90, after_a_sleep_p90, serializations = numbers(
        r"median ([\d.]+) / ([\d.]+), p90 ([\d.]+) / ([\d.]+) \(n = (\d+) each\)", wake_up.measured)
    assert 0 < hot <= hot_p90 and 0 < after_a_sleep <= after_a_sleep_p90 and serializations == 100
    # converting a JointState costs rclpy less than sending it to another process and back
    assert hot < round_trip_median
    assert all(f"at {rate} Hz" in row.quantity for row in rows[2:])
    ring_rate, ring_p50, ring_p99, returns = numbers(
        r"(\d+) Hz, latency p50 ([\d.]+) ms, p99 ([\d.]+) ms \(n = (\d+)\)", ring.measured)
    assert 0 < ring_rate <= 1.05 * rate and returns == pytest.approx(ring_rate, rel=0.1)  # a window of about 1 s
    # five hops around the ring take longer than the one of half a ping-pong's round trip
    assert 0.5e-3 * round_trip_median < ring_p50 <= ring_p99
    achieved, plant_rate, real_time_factor = numbers(
        r"(\d+) Hz \(plant at (\d+) Hz, real-time factor ([\d.]+)\)", command_rate.measured)
    assert 0 < achieved <= 1.05 * rate and 0 < plant_rate <= 1.05 * rate
    assert 0.5 < real_time_factor < 1.1  # the free-running plant follows the wall clock
    (median,) = numbers(r"([\d.]+) ms", p50.measured)
    percentile_99, samples = numbers(r"([\d.]+) ms \(n = (\d+)\)", p99.measured)
    assert 0 < median <= percentile_99
    assert abs(samples / seconds - achieved) <= 1.0
    assert command_rate.met == (achieved >= 0.95 * rate) and p99.met == (percentile_99 <= 2.0)
    end, start = numbers(r"base at ([\d.]+) m, started at ([\d.]+) m", standing.measured)
    assert standing.met == (start - end <= 0.15)
    per_command = dict(re.findall(r"(\w+) (\d+)", cpu.measured.split(" (")[0]))
    assert set(per_command) == {*dds_loop.SUITE, dds_loop.PLANT}
    assert all(0 < int(microseconds) for microseconds in per_command.values())


def test_a_node_that_dies_at_start_up_is_named_with_its_output(monkeypatch):
    arguments = dds_loop.ros_arguments

    def broken_estimator(name, rate, directory, *rest):
        extra = ["-p", "urdf_file:=/nonexistent/robot.urdf"] if name == "state_estimator" else []
        return arguments(name, rate, directory, *rest) + extra

    monkeypatch.setattr(dds_loop, "ros_arguments", broken_estimator)
    with pytest.raises(RuntimeError, match=r"state_estimator exited with code [1-9]") as error:
        dds_loop.measure(dds_loop.SMOKE_RATE, 1.0, 0.0)
    assert "/nonexistent/robot.urdf" in str(error.value)
