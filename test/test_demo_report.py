"""The demo's metrics against analytic recordings: an exponentially decaying CoM excursion settles to 5 mm at
τ·ln(A / 5 mm); a base that drops by more than 10 cm is a fall; a ZMP on a known square has a known margin. What the
demo and the README's other commands write stays out of git's work tree."""
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from humanoid_balance.cli import build_parser
from humanoid_balance.demo.report import Recording, dance_figures, metrics, write_report
from humanoid_balance.demo.scenario import ArmDance, Push, Scenario

SCENARIO = Scenario("analytic", 6.0, 0.5, (Push(1.0, (0.0, 0.1, 0.0), "push"),),
                    ArmDance(4.0, 2.0, 0.5, 1.0)).for_robot(50.0, "base_link", 0.1)  # 50 N for 0.1 s on 50 kg
AMPLITUDE, TAU = 0.03, 0.4  # [m], [s]
REPO = Path(__file__).resolve().parents[1]


def recording(base_drop=0.0):
    record = Recording()
    record.polygon = np.array([[-0.1, -0.1, 0.0], [0.1, -0.1, 0.0], [0.1, 0.1, 0.0], [-0.1, 0.1, 0.0]])
    for t in np.arange(0.0, SCENARIO.duration, 0.002):
        lateral = AMPLITUDE * np.exp(-(t - 1.0) / TAU) if 1.0 <= t < 4.0 else 0.0
        record.add("base", t, 0.9 - (base_drop if t > 5.0 else 0.0))
        record.add("com", t, 0.0, lateral, 0.8)
        record.add("zmp", t, 0.02, lateral)
        record.add("zmp_margin", t, 0.1 - abs(lateral))
        record.add("foot_forces", t, 250.0, 250.0)
        record.add("momentum", t, 0.0, 50.0 * lateral, 0.0, 0.0, 0.0, 0.0)
    record.diagnostics = {"state_estimator": ("OK", "estimating")}
    return record


def test_push_recovery_and_verdict():
    figures = metrics(recording(), SCENARIO, wall_time=12.0, push_duration=0.1)
    push, = figures["pushes"]
    assert push["impulse [N·s]"] == pytest.approx(5.0)
    assert push["CoM peak excursion [m]"] == pytest.approx(AMPLITUDE)
    assert push["settling time to 5 mm [s]"] == pytest.approx(TAU * np.log(AMPLITUDE / 0.005), abs=0.002)
    # its speed A/τ e^(−t/τ) falls below 2 cm/s at τ ln(A / (τ · 2 cm/s)), measured over 0.05 s
    assert push["standing still after [s]"] == pytest.approx(TAU * np.log(AMPLITUDE / (TAU * 0.02)), abs=0.05)
    assert push["feet lifted"] == 0
    assert figures["smallest ZMP margin inside the support polygon [m]"] == pytest.approx(0.1 - AMPLITUDE)
    assert figures["real-time factor"] == pytest.approx(0.5, abs=1e-3)
    assert not figures["fell"] and figures["success"]


def test_a_sole_that_leaves_the_floor_twice_after_the_push_counts_two_lift_offs():
    record = recording()
    forces = record.rows["foot_forces"]
    for k, (t, left, right) in enumerate(forces):
        forces[k] = (t, 0.0 if 1.2 <= t < 1.5 or 2.0 <= t < 2.3 else left, 0.0 if 0.6 <= t < 0.8 else right)
    push, = metrics(record, SCENARIO, wall_time=12.0, push_duration=0.1)["pushes"]
    assert push["feet lifted"] == 2  # the right sole's lift before the push is not the push's


def test_a_dropped_base_is_a_fall(tmp_path):
    figures = metrics(recording(base_drop=0.2), SCENARIO, wall_time=12.0, push_duration=0.1)
    assert figures["fell"] and not figures["success"]
    paths = write_report(tmp_path, recording(base_drop=0.2), SCENARIO, figures, ("left_foot", "right_foot"))
    assert all(path.stat().st_size > 0 for path in paths)


@pytest.mark.parametrize("scale, reached", [(1.0, 0.8), (0.0, None)])
def test_the_arms_swing_reached_is_the_measured_peak_to_peak_over_the_commanded(scale, reached):
    """Joints that swing through 80 % of the dance's offsets read 0.8; a dance of scale 0 (still arms, the push
    experiments' window) has no such figure, and no error."""
    dance = ArmDance(4.0, 2.0, 0.5, scale)
    swing = np.array([0.6, -0.4])
    times, offsets, _ = dance.trajectory(swing)
    arms = np.c_[dance.start + times, 0.1 + 0.8 * offsets]
    com = np.array([[t, 0.0, 0.0, 0.8] for t in np.arange(3.0, 7.0, 0.01)])
    zmp = com[:, :3]
    figures = dance_figures(com, zmp, dance, arms, swing)
    assert figures.get("arm swing reached, of the commanded") == (None if reached is None else pytest.approx(reached))


def test_a_dance_without_a_zmp_reads_no_excursion_and_no_error():
    """A robot that fell before the dance presses no foot on the floor: no ZMP to measure (NaN), no traceback."""
    dance = ArmDance(4.0, 2.0, 0.5, 1.0)
    com = np.array([[t, 0.0, 0.0, 0.2] for t in np.arange(3.0, 7.0, 0.01)])
    figures = dance_figures(com, np.zeros((0, 3)), dance)
    assert np.isnan(figures["ZMP excursion x, y [m]"]).all()


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="not a git checkout")
def test_what_the_demo_and_the_readme_commands_write_is_ignored_by_git():
    """The demo's default report folder (its plots, metrics and recording), and every folder or file the README's
    commands are shown writing (--output, --record, --video; not the placeholders in capitals, nor BENCHMARKS.md,
    which is committed on purpose), and colcon's: `git check-ignore` says each is ignored — which a committed file
    is not."""
    report = build_parser().parse_args(["demo"]).output
    written = [report / name for name in ("com_zmp.png", "arms.png", "metrics.json", "comparison.md",
                                          "kinematic/metrics.json", "recording/recording.mcap")]
    for value in re.findall(r"--(?:output|record|video)[ =]([\w./-]+)", (REPO / "README.md").read_text()):
        if not value[0].isupper():
            written.append(Path(value) if Path(value).suffix else Path(value) / "robot.yaml")
    written += [Path("run.mp4"), Path("build/humanoid_balance"), Path("install/setup.bash"), Path("log/latest")]
    assert len(written) >= 14, written  # the README's run.gif, my_robot, cassie, my_cassie and runs among them
    kept = [str(path) for path in written
            if subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=REPO).returncode != 0]
    assert not kept, f"not ignored by git: {kept}"
