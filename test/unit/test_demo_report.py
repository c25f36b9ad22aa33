"""The demo's metrics against analytic recordings: an exponentially decaying CoM excursion settles to 5 mm at
τ·ln(A / 5 mm); a base that drops by more than 10 cm is a fall; a ZMP on a known square has a known margin. Its plots,
read back through matplotlib's objects: every curve named in a legend, no title over another text, the soles where
the recording put them, no ZMP while no foot touches; its verdict in words, on what was judged. What the demo and the
README's other commands write stays out of git's work tree."""
import itertools
import math
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib.pyplot as plt

import numpy as np
import pytest

from humanoid_balance.cli import build_parser
from humanoid_balance.demo.report import (JUMPS_IN_PLACE, LANDING_TIME, Recording, dance_figures, figures_of, metrics,
                                         summary_lines, write_report)
from humanoid_balance.demo.scenario import ArmDance, Push, Scenario

SCENARIO = Scenario("analytic", 6.0, 0.5, (Push(1.0, (0.0, 0.1, 0.0), "push"),),
                    ArmDance(4.0, 2.0, 0.5, 1.0)).for_robot(50.0, "base_link", 0.1)  # 50 N for 0.1 s on 50 kg
AMPLITUDE, TAU = 0.03, 0.4  # [m], [s]
REPO = Path(__file__).resolve().parents[2]
FEET = ("left_foot", "right_foot")
ARMS = {"left_arm": ("left_shoulder_pitch", "left_elbow"), "right_arm": ("right_shoulder_pitch", "right_elbow")}
SWING = np.array([0.6, -0.4, -0.6, -0.4])  # [rad], ARMS' joints in order
CONTROL = {"mode": "kinematic", "plant": "lockstep", "actuator command rate achieved [Hz]": 200.0}


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


def dancing():
    """recording() with the arms following the dance exactly, 10 % short at its peak."""
    record = recording()
    record.arm_joints, record.arm_swing = ARMS, SWING
    times, offsets, _ = SCENARIO.dance.trajectory(SWING)
    for t in np.arange(0.0, SCENARIO.duration, 0.002):
        k = int(round((t - SCENARIO.dance.start) * 100))
        record.add("arms", t, *(0.9 * offsets[k] if 0 <= k < len(times) else np.zeros(len(SWING))))
    return record


STEPPING = Scenario("steps", 4.0, 0.5, (Push(1.0, (0.0, 0.4, 0.0), "push that needs a step"),), None,
                    stepping=True).for_robot(50.0, "base_link", 0.1)
SOLE = (0.2, 0.1)  # [m] length, width


def stepping():
    """A right foot lifted from 1.3 to 1.6 s and put down 5 cm forward, 10 cm outward; the ZMP 9 mm beyond the
    support polygon meanwhile; the balancer warning of its reference."""
    record = Recording()
    record.polygon = np.array([[-0.1, -0.25, 0.0], [0.15, -0.25, 0.0], [0.15, 0.15, 0.0], [-0.1, 0.15, 0.0]])
    record.standing_polygon = np.array([[-0.1, -0.15, 0.0], [0.1, -0.15, 0.0], [0.1, 0.15, 0.0], [-0.1, 0.15, 0.0]])
    for t in np.arange(0.0, STEPPING.duration, 0.005):
        lifted, stepped = 1.3 <= t < 1.6, t >= 1.6
        lateral = 0.05 * np.sin(np.pi * (t - 1.0)) if 1.0 <= t < 2.0 else 0.0
        record.add("base", t, 0.9)
        record.add("com", t, 0.0, lateral, 0.8)
        record.add("zmp", t, 0.0, 2 * lateral)
        record.add("zmp_margin", t, -0.009 if lifted else 0.05)
        record.add("foot_forces", t, 500.0 if lifted else 250.0, 0.0 if lifted else 250.0)
        record.add("momentum", t, 0.0, 50.0 * lateral, 0.0, 0.0, 0.0, 0.0)
        record.add("polygon_bounds", t, -0.1, -0.25 if stepped else -0.15, 0.15 if stepped else 0.1, 0.15)
        record.add("capture_point", t, 0.0, 3 * lateral)
        if 1.2 <= t < 1.6:
            record.add("footsteps", t, 0.05, -0.2)
        record.add("soles", t, 0, 0.0, 0.1, 0.0, *SOLE)
        record.add("soles", t, 1, *((0.05, -0.2) if stepped else (0.0, -0.1)), 0.0, *SOLE)
    record.diagnostics = {"centroidal_balancer": ("WARN", "limited: com_reference outside the support polygon: asked "
                                                          "(0.000, 0.100, 0.800), granted (0.000, 0.060, 0.800)"),
                          "state_estimator": ("OK", "estimating")}
    return record


JUMPING = Scenario("jumps", 4.0, 0.5, (), None, jumps=(1.0, 2.5), mode="viip")
FLIGHTS = ((1.5, 1.7), (3.0, 3.2))  # [s]


def jumping(drift=(0.008, 0.030), landing_pitch=math.radians(1.5)):
    """Two jumps of 5 cm, the contact estimator reading both feet aerial in flight, where its ZMP runs off to
    x = 1.4 m; the base lands ``drift`` [m] (one per jump) forward of where it stood, pitched ``landing_pitch``
    [rad] as it touches down and upright 50 ms later."""
    record = Recording()
    record.polygon = record.standing_polygon = np.array([[-0.1, -0.15, 0.0], [0.1, -0.15, 0.0], [0.1, 0.15, 0.0],
                                                         [-0.1, 0.15, 0.0]])
    record.add("contact_states", 0.0, 1, 1)
    for start, end in FLIGHTS:
        record.add("contact_states", start, 0, 0)
        record.add("contact_states", end, 1, 1)
    for t in np.arange(0.0, JUMPING.duration, 0.005):
        flight = next(((start, end) for start, end in FLIGHTS if start <= t < end), None)
        height = 0.8 + (0.05 * np.sin(np.pi * (t - flight[0]) / 0.2) if flight else 0.0)
        record.add("base", t, height + 0.1)
        landed = [end for _, end in FLIGHTS if t >= end]
        record.add("base_pose", t, sum(drift[:len(landed)]), 0.0,
                   landing_pitch if landed and t - landed[-1] < 0.05 else 0.0)
        record.add("com", t, 0.0, 0.0, height)
        record.add("zmp", t, 1.4 if flight else 0.01, 0.0)
        record.add("zmp_margin", t, 0.09)
        record.add("foot_forces", t, *((0.0, 0.0) if flight else (250.0, 250.0)))
        record.add("momentum", t, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        record.add("polygon_bounds", t, -0.1, -0.15, 0.1, 0.15)
    record.diagnostics = {"centroidal_balancer": ("WARN", "limited: com_reference outside the support polygon: asked "
                                                          "(0.017, 0.000, 0.815), granted (-0.112, 0.000, 0.815)"),
                          "state_estimator": ("OK", "estimating")}
    return record


@pytest.fixture(scope="module")
def plots():
    """The report's figures of each synthetic run (dancing, stepping, jumping), built once."""
    built = {}

    def figures(make, scenario):
        if make not in built:
            built[make] = figures_of(make(), scenario, FEET)
        return built[make]

    yield figures
    plt.close("all")


def legend_labels(axes):
    legend = axes.get_legend()
    return [text.get_text() for text in legend.get_texts()] if legend is not None else []


def overlapping_texts(figure):
    """Pairs of texts (titles, the phases' names, legend titles) whose drawn boxes overlap."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    texts = [axes.title for axes in figure.axes] + [text for axes in figure.axes for text in axes.texts]
    boxes = [(text.get_text(), text.get_window_extent(renderer)) for text in texts if text.get_text()]
    return [(a, b) for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2) if box_a.overlaps(box_b)]


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


def test_a_sole_that_grazes_the_floor_between_two_lifts_lifts_once_and_one_that_flickers_not_at_all():
    """After the push (at 1 s) the left sole is off the floor 0.2 s, touches it for 20 ms, is off 0.2 s more: one
    lift-off; 40 ms later the right sole flickers in and out of contact every 10 ms for 0.3 s (on its edge): none.
    Touching for twice LANDING_TIME, the left lifts twice."""
    for touch, lifts in ((0.02, 1), (2 * LANDING_TIME, 2)):
        record = recording()
        forces = record.rows["foot_forces"]
        for k, (t, left, right) in enumerate(forces):
            aloft = 1.2 <= t < 1.4 or 1.4 + touch <= t < 1.6 + touch
            flicker = 2.0 <= t < 2.3 and int(round(t / 0.01)) % 2 == 0
            forces[k] = (t, 0.0 if aloft else left, 0.0 if flicker else right)
        push, = metrics(record, SCENARIO, wall_time=12.0, push_duration=0.1)["pushes"]
        assert push["feet lifted"] == lifts, touch


def test_a_foot_put_down_elsewhere_after_the_push_is_how_far_the_feet_moved():
    """The feet at y = ±0.09 m; after the push (1 s) the right one comes down 3 cm inwards and 4 cm ahead: 5 cm.
    Without the plant's sole positions there is no figure."""
    record = recording()
    push, = metrics(record, SCENARIO, wall_time=12.0, push_duration=0.1)["pushes"]
    assert push["feet moved [m]"] is None
    for t in np.arange(0.0, SCENARIO.duration, 0.002):
        right = (0.04, -0.06) if t > 1.5 else (0.0, -0.09)
        record.add("sole_positions", t, 0.0, 0.09, *right)
    push, = metrics(record, SCENARIO, wall_time=12.0, push_duration=0.1)["pushes"]
    assert push["feet moved [m]"] == pytest.approx(0.05)


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
    and docs/'s commands are shown writing (--output, --record, --video; not the placeholders in capitals, nor
    BENCHMARKS.md, which is committed on purpose), and colcon's: `git check-ignore` says each is ignored — which a
    committed file is not."""
    report = build_parser().parse_args(["demo"]).output
    written = [report / name for name in ("com_zmp.png", "arms.png", "metrics.json", "comparison.md",
                                          "kinematic/metrics.json", "recording/recording.mcap")]
    documents = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    for value in re.findall(r"--(?:output|record|video)[ =]([\w./-]+)", "\n".join(p.read_text() for p in documents)):
        if not value[0].isupper():
            written.append(Path(value) if Path(value).suffix else Path(value) / "robot.yaml")
    written += [Path("run.mp4"), Path("build/humanoid_balance"), Path("install/setup.bash"), Path("log/latest")]
    assert len(written) >= 14, written  # the README's run.gif, my_robot, cassie, my_cassie and runs among them
    kept = [str(path) for path in written
            if subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=REPO).returncode != 0]
    assert not kept, f"not ignored by git: {kept}"


@pytest.mark.parametrize("make, scenario, files", [
    (dancing, SCENARIO, {"com_zmp.png", "foot_forces.png", "momentum.png", "arms.png"}),
    (stepping, STEPPING, {"com_zmp.png", "foot_forces.png", "momentum.png", "steps.png"}),
    (jumping, JUMPING, {"com_zmp.png", "foot_forces.png", "momentum.png", "com_height.png"})])
def test_every_plot_is_labelled_named_in_a_legend_and_no_title_covers_a_text(plots, make, scenario, files):
    figures = plots(make, scenario)
    assert set(figures) == files
    for name, figure in figures.items():
        assert figure.axes[0].get_title(), name
        for axes in figure.axes:
            assert axes.get_ylabel() and legend_labels(axes), (name, axes.get_title())
            named = [line.get_label() for line in axes.get_lines() if not line.get_label().startswith("_")]
            assert set(named) <= set(legend_labels(axes)), (name, named)
        assert not overlapping_texts(figure), (name, overlapping_texts(figure))
    lateral = figures["com_zmp.png"].axes[1]
    bound = "support polygon's x bounds" if scenario.jumps else "support polygon's y bounds"
    assert bound in legend_labels(lateral) and "ZMP (estimated)" in legend_labels(lateral)


def test_the_arms_plot_names_each_joint_and_tells_the_command_from_the_measure(plots):
    """Per limb: each joint's measured angle a line named after it; its command a broad band of the same colour under
    it, not hidden under the line; the legend says which is which."""
    figure = plots(dancing, SCENARIO)["arms.png"]
    for axes, (limb, joints) in zip(figure.axes, ARMS.items()):
        assert set(joints) | {"measured at the plant", "commanded"} <= set(legend_labels(axes))
        assert axes.get_legend().get_title().get_text() == limb
        for joint in joints:
            measured, = [line for line in axes.get_lines() if line.get_label() == joint]
            commanded, = [line for line in axes.get_lines() if line.get_label().startswith("_")
                          and line.get_color() == measured.get_color()]
            assert commanded.get_linewidth() >= 3 * measured.get_linewidth()
            assert (commanded.get_alpha() or 1.0) < 1.0 and commanded.get_zorder() < measured.get_zorder()
            # the command peaks at the dance's swing, the measure (recorded 10 % short) below it
            swing = SWING[[j for limb_joints in ARMS.values() for j in limb_joints].index(joint)]
            assert np.abs(commanded.get_ydata()).max() == pytest.approx(abs(swing), rel=1e-3)
            assert np.abs(measured.get_ydata()).max() == pytest.approx(0.9 * abs(swing), rel=1e-3)


def test_the_steps_plot_draws_the_soles_before_the_push_and_at_the_end_and_the_planned_footsteps(plots):
    figure = plots(stepping, STEPPING)["steps.png"]
    top = figure.axes[0]
    assert {"left_foot before", "left_foot at the end", "right_foot before", "right_foot at the end",
            "footstep planned (sole origin)", "capture point ξ", "CoM (ground truth)"} <= set(legend_labels(top))
    outlines = {line.get_label(): {tuple(np.round(p, 6)) for p in line.get_xydata()} for line in top.get_lines()}

    def corners(x, y):
        return {(round(x + dx * SOLE[0] / 2, 6), round(y + dy * SOLE[1] / 2, 6)) for dx in (-1, 1) for dy in (-1, 1)}

    assert outlines["right_foot before"] == corners(0.0, -0.1)
    assert outlines["right_foot at the end"] == corners(0.05, -0.2)
    assert outlines["left_foot before"] == outlines["left_foot at the end"] == corners(0.0, 0.1)
    steps, = top.collections
    assert {tuple(p) for p in np.round(steps.get_offsets(), 6)} == {(0.05, -0.2)}


def test_a_jump_report_plots_the_com_height_and_no_zmp_in_flight(plots):
    """The jumps: forward, not lateral, against the support polygon; the CoM's height with the flights shaded; no ZMP
    while the contact estimator had no foot on the floor, so that none runs to x = 1.4 m."""
    figures = plots(jumping, JUMPING)
    top, forward = figures["com_zmp.png"].axes
    assert forward.get_ylabel() == "x [m]"
    for axes in (top, forward):
        zmp, = [line for line in axes.get_lines() if line.get_label().startswith("ZMP")]
        x = zmp.get_xydata()[:, 0] if axes is top else zmp.get_ydata()
        assert np.nanmax(x) == pytest.approx(0.01) and np.isnan(x).any()
    times, aloft = forward.get_lines()[0].get_xdata(), np.isnan(forward.get_lines()[0].get_ydata())
    assert times[aloft].min() == pytest.approx(FLIGHTS[0][0]) and times[aloft].max() < FLIGHTS[1][1]
    height, = figures["com_height.png"].axes
    com, = [line for line in height.get_lines() if line.get_label() == "CoM height (ground truth)"]
    assert com.get_ydata().max() == pytest.approx(0.85, abs=1e-4)
    assert any(label.startswith("in the air") for label in legend_labels(height))
    assert "standing, before the first jump" in legend_labels(height)


def test_a_robot_without_limbs_to_dance_has_no_dance():
    """TALOS without busy limbs: no dance phase to shade, no dance figures, no arms plot."""
    still = Scenario("analytic", 6.0, 0.5, (Push(1.0, (0.0, 0.1, 0.0), "push"),),
                     ArmDance(4.0, 2.0, 0.5, 1.0)).for_robot(50.0, "base_link", 0.1, dancing=False)
    assert [label for _, _, label in still.phases()] == ["settle", "stand", "push 5 N·s"]
    figures = metrics(recording(), still, wall_time=12.0, push_duration=0.1)
    assert figures["dancing arms"] is None
    figures = figures_of(recording(), still, FEET)
    assert "arms.png" not in figures
    for figure in figures.values():
        plt.close(figure)
    assert [label for _, _, label in SCENARIO.phases()][-1] == "dancing arms"  # with limbs, it dances


def summary(record, scenario):
    figures = metrics(record, scenario, wall_time=12.0, push_duration=0.1)
    figures["control"] = {**CONTROL, "mode": scenario.mode or CONTROL["mode"]}
    return summary_lines(figures, [Path("report/com_zmp.png")])


def test_the_verdict_reads_what_was_judged_for_people():
    """No raw dicts; the step scenario, which does not judge the ZMP, says so beside its excursion instead of
    "PASSED … ZMP OUTSIDE"; plurals right; the jumps' ZMP not judged either; a node not OK named with its message."""
    head, *lines = summary(stepping(), STEPPING)
    assert head == "\nPASSED (kinematic mode): no fall, at most 2 lift-offs of a sole per push, no node in error"
    text = "\n".join(lines)
    assert "  centroidal_balancer WARN: limited: com_reference outside the support polygon: asked (0.000, 0.100, " \
        "0.800), granted (0.000, 0.060, 0.800)" in lines
    assert "ZMP outside the support polygon by up to 9 mm (not judged with recovery steps)" in text
    assert ", 1 lift-off of a sole" in text and "lift-offs of a sole" not in text
    assert "{" not in text and "OUTSIDE" not in text
    head, *lines = summary(jumping(), JUMPING)
    assert head == "\nFAILED (viip mode): no fall, every jump left the floor and landed, a jump landed away from " \
        "where it stood, pitched, or did not stand still again, not every node OK"
    assert "  jump 1: apex 50 mm above the standing COG, landing 0 mm deep, pitched +1.5°, standing still 8 mm from " \
        "where it took off" in lines
    assert "smallest ZMP margin 90 mm (not judged with jumps)" in "\n".join(lines)
    assert lines[0].startswith("  centroidal_balancer WARN: limited: ") and "{" not in "\n".join(lines)
    head, *lines = summary(recording(), SCENARIO)
    assert head == "\nPASSED (kinematic mode): no fall, ZMP inside the support polygon, every node OK"
    assert "smallest ZMP margin 70 mm" in lines[1] and "not judged" not in lines[1]
    assert "push 5 N·s: CoM peak 30 mm, settled to 5 mm in 0.72 s" in lines[2] and lines[2].endswith("no sole lifted")


@pytest.mark.parametrize("drift, pitch, in_place", [((0.008, 0.015), 1.5, True), ((0.008, 0.025), 1.5, False),
                                                    ((0.008, 0.015), 2.5, False)])
def test_a_jump_lands_in_place_within_2_cm_and_2_degrees(drift, pitch, in_place):
    """Each jump's landing drift is the base's displacement from where it stood when the jump was asked to where it
    stands still again, and its pitch the base's at the touchdown: a second landing 15 mm further on is in place, one
    25 mm further on is not, nor one pitched 2.5° (the issue's bounds: 2 cm, 2°)."""
    figures = metrics(jumping(drift, math.radians(pitch)), JUMPING, 1.0, 0.1)
    assert [jump["landing drift [m]"] for jump in figures["jumps"]] == pytest.approx(drift, abs=1e-9)
    assert [jump["pitch at landing [rad]"] for jump in figures["jumps"]] == pytest.approx([math.radians(pitch)] * 2)
    assert figures["judged"][JUMPS_IN_PLACE] is in_place
