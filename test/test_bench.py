"""``humanoid-balance bench --smoke``: every simulated experiment runs and writes BENCHMARKS.md; the figures that
have an independent reference are checked against it (the DDS loop has its own test)."""
import re

import numpy as np

from humanoid_balance.bench import EXPERIMENTS, run_benchmarks
from humanoid_balance.bench.dancing_arms import AMPLITUDE, FREQUENCY, MIRROR, arm_rates
from humanoid_balance.bench.results import Result, format_table
from humanoid_balance.cli import main


def test_smoke_run_writes_every_experiment_and_the_machine(tmp_path):
    output = tmp_path / "BENCHMARKS.md"
    names = [name for name in EXPERIMENTS if name != "dds"]
    results = run_benchmarks(names, smoke=True, output=output, progress=lambda *args, **kwargs: None)
    assert not [r for r in results if r.measured.startswith("error:")]
    assert {r.experiment.split()[0] for r in results} == {"1", "2", "3", "4", "5", "6", "8"}
    by_quantity = {r.quantity: r for r in results}
    # a 12 N·s push on 67.7 kg is 0.18 m/s: recovered without a fall; a fallen robot reads "fell"
    assert by_quantity["fall / largest sole slip"].measured.startswith("no fall")
    # the VIIP standing impedance (ω = 8 rad/s, ζ = 1) holds the COG: it used to bounce off the floor by ±15 mm
    assert by_quantity["COG height held while standing"].met
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
    left = np.array([arm_rates(("left", "right"), s)["left"] for s in t])
    right = np.array([arm_rates(("left", "right"), s)["right"] for s in t])
    np.testing.assert_allclose(np.trapezoid(left, t, axis=0), AMPLITUDE, rtol=1e-6)
    np.testing.assert_allclose(np.trapezoid(right, t, axis=0), MIRROR * AMPLITUDE * [-1, 1, 1, 1, 1, 1], rtol=1e-6)


def test_unknown_experiment_is_named(capsys):
    assert main(["bench", "walk"]) == 2
    assert "walk" in capsys.readouterr().err
