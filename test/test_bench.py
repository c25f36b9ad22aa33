"""``humanoid-balance bench --smoke``: every simulated experiment runs and writes BENCHMARKS.md; the figures that
have an independent reference are checked against it (the DDS loop has its own test)."""
import re

import numpy as np

from humanoid_balance.bench import EXPERIMENTS, run_benchmarks
from humanoid_balance.bench.closed_loop import robot_config
from humanoid_balance.bench.dancing_arms import AMPLITUDE, FREQUENCY, MIRROR, ROBOT, amplitudes, arm_rates
from humanoid_balance.bench.results import Result, format_table
from humanoid_balance.cli import main


def test_smoke_run_writes_every_experiment_and_the_machine(tmp_path):
    output = tmp_path / "BENCHMARKS.md"
    names = [name for name in EXPERIMENTS if name not in ("dds", "soak")]  # their own tests: DDS chains
    results = run_benchmarks(names, smoke=True, output=output, progress=lambda *args, **kwargs: None)
    assert not [r for r in results if r.measured.startswith("error:")]
    assert {r.experiment.split()[0] for r in results} == {"1", "2", "3", "4", "5", "6", "8", "9"}
    by_quantity = {r.quantity: r for r in results}
    # a 12 N·s push on 67.7 kg is 0.18 m/s: recovered without a fall; a fallen robot reads "fell"
    assert by_quantity["fall / largest sole slip"].measured.startswith("no fall")
    # the VIIP standing impedance (ω = 8 rad/s, ζ = 1) holds the COG: it used to bounce off the floor by ±15 mm
    assert by_quantity["COG height held while standing"].met
    # through the nodes, a 12 N·s push on 53.4 kg (0.22 m/s) is recovered in momentum mode on the joint impedance
    assert by_quantity["momentum mode, 12 N·s lateral: settling to 5 mm"].met
    # every core's budget row carries its ratio to crba and its time
    cores = [r for r in results if r.experiment.startswith("8")]
    assert len(cores) == 4 and all(re.fullmatch(r"[\d.]+ \(\d+ µs\)", r.measured) for r in cores)
    text = output.read_text()
    assert "## Machine" in text and "cores: " in text and "pin " in text
    assert text.count("\n| ") == len(results) + 1  # header and one line per row


def test_table_columns_line_up():
    rows = [Result("1 a", "x", "paper", "≤ 1", "0.5", True), Result("2 bb", "longer quantity", "—", "—", "7", None)]
    lines = format_table(rows).splitlines()
    assert len({len(line) for line in lines}) == 1 and re.fullmatch(r"\|[-|]+\|", lines[1])
    assert lines[2].rstrip("|").split("|")[-1].strip() == "yes" and lines[3].split("|")[-2].strip() == "—"


def test_dance_rates_integrate_to_the_amplitude_in_half_a_period():
    """∫₀^{T/2} ½ A ω sin(ω t) dt = A, mirrored on the right arm (shoulder pitch in antiphase)."""
    t = np.linspace(0.0, 0.5 / FREQUENCY, 20001)
    amplitude = amplitudes(robot_config(ROBOT), ROBOT)
    left = np.array([arm_rates(amplitude, s)["left_arm"] for s in t])
    right = np.array([arm_rates(amplitude, s)["right_arm"] for s in t])
    np.testing.assert_allclose(np.trapezoid(left, t, axis=0), AMPLITUDE, rtol=1e-6)
    np.testing.assert_allclose(np.trapezoid(right, t, axis=0), MIRROR * AMPLITUDE * [-1, 1, 1, 1, 1, 1], rtol=1e-6)


def test_unknown_experiment_is_named(capsys):
    assert main(["bench", "walk"]) == 2
    assert "walk" in capsys.readouterr().err


def test_bench_runs_on_another_robot_and_says_what_does_not_apply(tmp_path, capsys):
    """TALOS (serial, no busy limbs) in place of Mahru I: the momentum-mode push on its joint impedance recovers
    (the plant's ground truth), the estimator and the dance say why they do not apply, every row names the robot."""
    output = tmp_path / "BENCHMARKS.md"
    assert main(["bench", "push", "estimator", "dance", "--smoke", "--robot", "talos", "--output", str(output)]) == 0
    rows = [line.split("|")[1:-1] for line in output.read_text().splitlines() if line.startswith("| ")][1:]
    assert rows and all(cells[0].strip().endswith("(talos)") for cells in rows)
    by_quantity = {cells[1].strip(): cells[4].strip() for cells in rows}
    assert by_quantity["fall / largest sole slip"].startswith("no fall")
    assert by_quantity["passive-state estimator and calibration"].startswith("does not apply: a serial robot")
    assert by_quantity["CoM deviation and ZMP excursion, 1 Hz arm trajectories"].startswith("does not apply")
    assert "--robot talos" in output.read_text()


def test_bench_on_an_unknown_robot_is_one_line(capsys):
    assert main(["bench", "push", "--robot", "atlas"]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "atlas" in error and "kangaroo_like" in error
