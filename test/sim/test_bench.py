"""``humanoid-balance bench --smoke``: every simulated experiment runs and writes BENCHMARKS.md; the figures that
have an independent reference are checked against it (the DDS loop has its own test)."""
import re

import numpy as np

from humanoid_balance.bench import EXPERIMENTS, run_benchmarks
from humanoid_balance.bench.bisection import largest_recovered
from humanoid_balance.bench.closed_loop import robot_config
from humanoid_balance.bench.dancing_arms import AMPLITUDE, FREQUENCY, MIRROR, ROBOT, amplitudes, arm_rates
from humanoid_balance.bench.results import Result, format_table
from humanoid_balance.cli import main


def test_smoke_run_writes_every_experiment_and_the_machine(tmp_path):
    output = tmp_path / "BENCHMARKS.md"
    # their own tests: the DDS chains (test_bench_dds_loop, test_faults, test_realtime_chain), the push through the
    # nodes (test_demo, test_free_running), the feet alone (test_flat_soles_through_nodes pushes through experiment
    # 13's loop at 90 % of the bound, where its smoke run pushes at 50 %), the recovery steps (experiment 12: the demo
    # loop with steps on, which test_demo's step scenario and test_steps_through_nodes run)
    names = [name for name in EXPERIMENTS if name not in ("dds", "soak", "nodes_push", "starved", "feet", "step")]
    results = run_benchmarks(names, smoke=True, output=output, progress=lambda *args, **kwargs: None)
    assert not [r for r in results if r.measured.startswith("error:")]
    assert {r.experiment.split()[0] for r in results} == {"1", "2", "3", "4", "5", "6", "8", "11"}
    by_quantity = {r.quantity: r for r in results}
    # a 12 N·s push on 67.7 kg is 0.18 m/s: recovered without a fall; a fallen robot reads "fell"
    assert by_quantity["fall / largest sole slip"].measured.startswith("no fall")
    # momentum mode on the joint impedance moves the arms as commanded (the plant's joints) with the CoM held
    assert by_quantity["arms' swing reached, of the commanded, momentum mode"].met
    assert by_quantity["CoM deviation, 1 Hz arm trajectories, momentum mode"].met
    # the VIIP standing impedance (ω = 8 rad/s, ζ = 1) holds the COG: it used to bounce off the floor by ±15 mm
    assert by_quantity["COG height held while standing"].met
    # a plant 20 % off in every mass, 2 cm in every CoM, with noisy, biased sensors and late commands: it stands
    assert by_quantity["(d) all at once, momentum mode"].met
    # every core's budget row carries its ratio to crba and its time, which the after-a-sleep row repeats beside its own
    *cores, waited = [r for r in results if r.experiment.startswith("8")]
    assert len(cores) == 4 and all(re.fullmatch(r"[\d.]+ \(\d+ µs\)", r.measured) for r in cores)
    after_a_sleep = re.findall(r"(\w+) (\d+) \((\d+)\)", waited.measured)
    assert [label for label, _, _ in after_a_sleep] == ["estimator", "contact", "balancer", "mapper"]
    assert [timed for _, _, timed in after_a_sleep] == [r.measured.split("(")[1].split()[0] for r in cores]
    assert all(int(slept) > 0 for _, slept, _ in after_a_sleep) and waited.met is None
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


def test_a_partial_run_never_replaces_the_whole_table(tmp_path, monkeypatch, capsys):
    """``bench inertia`` alone prints its rows and leaves ./BENCHMARKS.md as it was; with --output it writes them."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "BENCHMARKS.md").write_text("the whole table\n")
    assert main(["bench", "inertia", "--smoke"]) == 0
    assert (tmp_path / "BENCHMARKS.md").read_text() == "the whole table\n"
    assert "nothing written" in capsys.readouterr().out
    assert main(["bench", "inertia", "--smoke", "--output", "part.md"]) == 0
    assert "Generated by `humanoid-balance bench inertia --smoke`" in (tmp_path / "part.md").read_text()


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


def test_the_bisection_finds_the_largest_impulse_recovered_to_its_tolerance():
    """A robot that recovers up to 17.3 N·s: the bisection between 4 and 64 N·s to 2 N·s lands within 2 N·s below
    it, with the outcome tried there; one that recovers nothing keeps the lower bound, untried."""
    tried = []
    impulse, outcome = largest_recovered(lambda i: tried.append(i) or i, lambda i: i <= 17.3, 4.0, 64.0, 2.0)
    assert 17.3 - 2.0 < impulse <= 17.3 and outcome == impulse and len(tried) == 5
    assert largest_recovered(lambda i: i, lambda i: False, 4.0, 64.0, 2.0) == (4.0, None)
