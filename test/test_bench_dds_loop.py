"""Benchmark experiment 7 (closed loop over DDS, every node its own process): the smoke run's rows are consistent
with the commanded rate and the measurement's length, and a node that dies at start-up is named with its output."""
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
    assert [row.experiment for row in rows] == [dds_loop.EXPERIMENT] * 5
    assert all(f"at {rate} Hz" in row.quantity for row in rows)
    command_rate, p50, p99, unanswered, standing = (row.measured for row in rows)

    achieved, commands, others, window = numbers(
        r"(\d+) Hz \((\d+) commands from plant ticks, (\d+) others, in (\d+) s\)", command_rate)
    assert window == seconds
    assert 0 < achieved <= 1.05 * rate
    assert abs(commands / seconds - achieved) <= 1.0 and commands <= 1.05 * rate * seconds
    assert others <= commands  # holds on stale inputs are rare; every command pairs with its actuator_states
    (median,) = numbers(r"([\d.]+) ms", p50)
    percentile_99, samples = numbers(r"([\d.]+) ms \(n = (\d+)\)", p99)
    assert 0 < median <= percentile_99
    assert samples == commands
    fraction, ticks, plant_rate = numbers(r"([\d.]+) % of (\d+) \(plant at (\d+) Hz\)", unanswered)
    assert 0 <= fraction <= 100
    assert 0 < ticks <= 1.05 * rate * seconds and 0 < plant_rate <= 1.05 * rate
    assert rows[0].met == (achieved >= 0.95 * rate) and rows[2].met == (percentile_99 <= 1e3 / rate)
    numbers(r"base at ([\d.]+) m, started at ([\d.]+) m", standing)


def test_a_node_that_dies_at_start_up_is_named_with_its_output(monkeypatch):
    arguments = dds_loop.ros_arguments

    def broken_estimator(name, rate, directory):
        extra = ["-p", "urdf_file:=/nonexistent/robot.urdf"] if name == "state_estimator" else []
        return arguments(name, rate, directory) + extra

    monkeypatch.setattr(dds_loop, "ros_arguments", broken_estimator)
    with pytest.raises(RuntimeError, match=r"state_estimator exited with code [1-9]") as error:
        dds_loop.measure(dds_loop.SMOKE_RATE, 1.0, 0.0)
    assert "/nonexistent/robot.urdf" in str(error.value)
