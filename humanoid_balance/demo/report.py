"""The demo's report: metrics of a recorded run, PNG plots and a metrics JSON (no ROS here).

A :class:`Recording` holds time series in simulated seconds: ground truth from the plant (base height, CoM,
momenta, sole contact forces) and the suite's own estimates (ZMP, its margin inside the support polygon).
"""
import json
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after selecting the headless backend)
import numpy as np  # noqa: E402

__all__ = ["Recording", "metrics", "recovery", "jump_figures", "dance_figures", "write_report", "FALL_DROP",
           "SETTLED_WITHIN"]

FALL_DROP = 0.10        # the base more than this below its standing height: fallen [m]
SETTLED_WITHIN = 0.005  # a push is recovered once the CoM stays this close to where it stood [m]
STILL_SPEED, STILL_INTERVAL = 0.02, 0.05  # standing still: the CoM slower than this [m/s], measured over this [s]
LIFT_OFF_TIME = 0.05    # [s] a sole unloaded this long has left the floor
MAX_LIFT_OFFS = 2       # a push caught by steps: no more lift-offs than this


class Recording:
    """Rows appended per channel: ``add("zmp", t, x, y)``; ``series("zmp")`` → (k, columns) array."""

    def __init__(self):
        self.rows = defaultdict(list)
        self.polygon = np.zeros((0, 3))      # latest support polygon (odom frame) [m]
        self.arm_swing = None                # the dancing joints' configured swing [rad] ("arms"; the dance scales it)
        self.diagnostics = {}                # node → (worst level after settling, last message)

    def add(self, channel, *values):
        self.rows[channel].append(values)

    def series(self, channel):
        return np.array(self.rows[channel], dtype=float).reshape(-1, len(self.rows[channel][0])
                                                                  if self.rows[channel] else 1)


def _window(series, start, end):
    return series[(series[:, 0] >= start) & (series[:, 0] < end)]


def recovery(com, push_time, end, baseline):
    """Peak horizontal CoM excursion after a push [m] and the time it takes to stay within SETTLED_WITHIN [s];
    ``com`` rows are (t, x, y, ...), ``baseline`` the (x, y) it stood at."""
    after = _window(com, push_time, end)
    if not len(after):
        return float("nan"), float("nan")
    distance = np.linalg.norm(after[:, 1:3] - baseline, axis=1)
    outside = np.flatnonzero(distance > SETTLED_WITHIN)
    settle = float(after[outside[-1], 0] - push_time) if len(outside) else 0.0
    if len(outside) and outside[-1] == len(after) - 1:
        settle = float("inf")  # not settled before the next phase
    return float(distance.max()), settle


def standing_still(com, push_time, end):
    """The time after a push [s] from which the CoM's horizontal speed stays below STILL_SPEED until ``end`` (inf: it
    does not), wherever it stands — after a step, away from where it stood."""
    after = _window(com, push_time, end)
    if len(after) > 1:  # the speed over STILL_INTERVAL, not the plant's jitter from one tick to the next
        after = after[::max(1, round(STILL_INTERVAL / float(np.median(np.diff(after[:, 0])))))]
    if len(after) < 2:
        return float("nan")
    speed = np.linalg.norm(np.diff(after[:, 1:3], axis=0), axis=1) / np.maximum(np.diff(after[:, 0]), 1e-9)
    moving = np.flatnonzero(speed >= STILL_SPEED)
    if not len(moving):
        return 0.0
    return float("inf") if moving[-1] == len(speed) - 1 else float(after[moving[-1] + 1, 0] - push_time)


def lift_offs(forces, start, end):
    """How many times a sole left the floor within [start, end) for LIFT_OFF_TIME or longer: its normal force going
    from load to none (the plant's ground truth: a step, or a foot the push lifted; a sole rocking on its edge, in
    and out of contact from one physics step to the next, is not lifted)."""
    window = _window(forces, start, end)
    count = 0
    for loaded in (window[:, 1:] > 0.0).T:
        changes = np.flatnonzero(np.diff(loaded.astype(int))) + 1  # where a run of loaded or unloaded samples starts
        starts, ends = np.r_[0, changes], np.r_[changes, len(loaded)]
        lifted = ~loaded[starts] & (starts > 0) & (window[np.minimum(ends, len(loaded) - 1), 0]
                                                   - window[starts, 0] >= LIFT_OFF_TIME)
        count += int(np.count_nonzero(lifted))
    return count


def jump_figures(com, forces, start, end, standing):
    """One jump between its request at ``start`` and ``end`` [s], from the ground-truth COG rows (t, x, y, z) and
    sole normal forces (t, f...): whether the soles left the floor, the apex above the ``standing`` COG height, and
    the landing depth, the lowest COG after the last touchdown below its height there [m]."""
    height, normal = _window(com, start, end), _window(forces, start, end)
    aloft = normal[normal[:, 1:].sum(axis=1) <= 0.0, 0]
    figures = {"time [s]": start, "left the floor": bool(len(aloft)),
               "apex above the standing COG [m]": float(height[:, 3].max() - standing) if len(height) else None,
               "landing depth [m]": None}
    after = height[height[:, 0] > aloft[-1]] if len(aloft) else height[:0]
    if len(after):
        figures["landing depth [m]"] = float(after[0, 3] - after[:, 3].min())
    return figures


def metrics(recording, scenario, wall_time, push_duration):
    """Figures of the run: fall, ZMP margin, push recoveries, dancing-arms CoM hold, jumps, node health, speed."""
    base, com, zmp = recording.series("base"), recording.series("com"), recording.series("zmp")
    judged = lambda s: s[s[:, 0] >= scenario.settle]  # noqa: E731
    standing = float(_window(base, scenario.settle - 0.1, scenario.settle + 0.1)[:, 1].mean())
    lowest = float(judged(base)[:, 1].min())
    margins = judged(recording.series("zmp_margin"))
    phases = scenario.phases()
    pushes = []
    for push in scenario.pushes:
        end = next(e for s, e, _ in phases if s == push.time)
        before = _window(com, push.time - 0.3, push.time)[:, 1:3].mean(axis=0)
        peak, settle = recovery(com, push.time, end, before)
        impulse = float(np.linalg.norm(push.force)) * push_duration
        pushes.append({"label": push.label, "time [s]": push.time, "impulse [N·s]": impulse,
                       "CoM peak excursion [m]": peak, "settling time to 5 mm [s]": settle})
    forces, ends = recording.series("foot_forces"), list(scenario.jumps[1:]) + [scenario.duration]
    for push in pushes:
        end = next(e for s, e, _ in phases if s == push["time [s]"])
        push["standing still after [s]"] = standing_still(com, push["time [s]"], end)
        push["feet lifted"] = lift_offs(forces, push["time [s]"], end)
    jumps = [jump_figures(com, forces, start, end, float(_window(com, start - 0.3, start)[:, 3].mean()))
             for start, end in zip(scenario.jumps, ends)]
    nodes = {name: {"level": level, "message": message} for name, (level, message) in
             sorted(recording.diagnostics.items())}
    figures = {
        "scenario": scenario.name,
        "simulated time [s]": float(base[-1, 0]) if len(base) else 0.0,
        "wall time [s]": wall_time,
        "real-time factor": float(base[-1, 0]) / wall_time if len(base) and wall_time > 0 else 0.0,
        "standing base height [m]": standing,
        "lowest base height [m]": lowest,
        "fell": bool(lowest < standing - FALL_DROP),
        "smallest ZMP margin inside the support polygon [m]": float(margins[:, 1].min()) if len(margins) else None,
        "pushes": pushes,
        "dancing arms": dance_figures(com, zmp, scenario.dance, recording.series("arms"), recording.arm_swing)
        if scenario.dance else None,
        "jumps": jumps,
        "nodes": nodes,
    }
    figures["zmp inside the support polygon"] = bool(figures["smallest ZMP margin inside the support polygon [m]"]
                                                     is not None and margins[:, 1].min() > 0.0)
    figures["all nodes OK"] = bool(nodes) and all(n["level"] == "OK" for n in nodes.values())
    if scenario.stepping:
        # a push that needs a step tips the robot onto one foot, the CoM reference outside what it stands on: the
        # balancer warns of it (balance first) while the step recovers; judged: no fall, no node in error, at most
        # MAX_LIFT_OFFS lift-offs per push (when the CoM stands still again is reported)
        healthy = bool(nodes) and all(n["level"] in ("OK", "WARN") for n in nodes.values())
        balanced = all(p["feet lifted"] <= MAX_LIFT_OFFS for p in pushes)
    else:
        healthy = figures["all nodes OK"]
        # a landing's impact may put the ZMP on the support's edge; a jump must leave the floor and land
        balanced = all(j["left the floor"] and j["landing depth [m]"] is not None for j in jumps) if jumps else \
            figures["zmp inside the support polygon"]
    figures["success"] = not figures["fell"] and balanced and healthy
    return figures


def dance_figures(com, zmp, dance, arms=None, swing=None):
    """The dancing arms: how far the CoM left where it stood, and how far the ZMP moved [m]; with the arms' measured
    joint angles (rows t, angles...) and their configured ``swing`` [rad], each joint's swing reached (peak to peak
    over the dance) against the commanded one (the dance's scale times the swing)."""
    still = _window(com, dance.start - 0.3, dance.start)[:, 1:4].mean(axis=0)
    dancing_com = _window(com, dance.start, dance.start + dance.duration)
    dancing_zmp = _window(zmp, dance.start, dance.start + dance.duration)[:, 1:3]
    zmp_still = _window(zmp, dance.start - 0.3, dance.start)[:, 1:3]
    excursion = np.abs(dancing_zmp - zmp_still.mean(axis=0)).max(axis=0) if len(dancing_zmp) and len(zmp_still) \
        else np.full(2, np.nan)  # no ZMP: no foot presses on the floor (the robot has fallen)
    figures = {"CoM horizontal deviation [m]": float(np.abs(dancing_com[:, 1:3] - still[:2]).max()),
               "CoM vertical deviation [m]": float(np.abs(dancing_com[:, 3] - still[2]).max()),
               "ZMP excursion x, y [m]": excursion.tolist()}
    dancing_arms = _window(arms, dance.start, dance.start + dance.duration + 0.2) if arms is not None else []
    swing = None if swing is None else dance.scale * np.asarray(swing)
    if swing is not None and len(dancing_arms) and np.any(swing != 0.0):  # (a dance of scale 0 keeps the arms still)
        reached = dancing_arms[:, 1:].max(axis=0) - dancing_arms[:, 1:].min(axis=0)
        figures["arm swing commanded [rad]"] = np.abs(swing).tolist()
        figures["arm swing reached [rad]"] = reached.tolist()
        figures["arm swing reached, of the commanded"] = float((reached / np.abs(swing))[swing != 0.0].min())
    return figures


def _shade_phases(axes, scenario):
    """Shade and name each phase but standing."""
    for start, end, label in scenario.phases():
        if label != "stand":
            axes.axvspan(start, end, color={"settle": "0.9", "dancing arms": "#d8ecd8"}.get(label, "#f6dcdc"),
                         lw=0)
            axes.text(start + 0.05, 1.0, label, transform=axes.get_xaxis_transform(), fontsize=7, va="bottom")


def _plot_com_zmp(recording, scenario, path):
    settled = lambda series: series[series[:, 0] >= scenario.settle]  # noqa: E731  (no start-up transient)
    com, zmp, polygon = settled(recording.series("com")), settled(recording.series("zmp")), recording.polygon
    figure, (top, lateral) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [1, 1.6]})
    if len(polygon):
        closed = np.vstack([polygon, polygon[:1]])
        top.fill(closed[:, 0], closed[:, 1], color="#dde8f6", label="support polygon")
        top.plot(closed[:, 0], closed[:, 1], color="#4a78b5", lw=1)
    top.plot(zmp[:, 1], zmp[:, 2], color="#c0392b", lw=0.8, label="ZMP (estimated)")
    top.plot(com[:, 1], com[:, 2], color="k", lw=1.2, label="CoM (ground truth)")
    top.set(xlabel="x [m]", ylabel="y [m]", title="Top view")
    top.set_aspect("equal")
    top.legend(loc="upper right", fontsize=8)
    _shade_phases(lateral, scenario)
    lateral.plot(zmp[:, 0], zmp[:, 2], color="#c0392b", lw=0.8, label="ZMP y")
    lateral.plot(com[:, 0], com[:, 2], color="k", lw=1.2, label="CoM y")
    if len(polygon):
        for bound in (polygon[:, 1].min(), polygon[:, 1].max()):
            lateral.axhline(bound, color="#4a78b5", ls="--", lw=1)
    lateral.set(xlabel="time [s]", ylabel="y [m]", title="Lateral CoM and ZMP against the support polygon")
    lateral.legend(loc="upper right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _plot_foot_forces(recording, scenario, feet, path):
    forces = recording.series("foot_forces")
    figure, axes = plt.subplots(figsize=(10, 4))
    _shade_phases(axes, scenario)
    for k, foot in enumerate(feet):
        axes.plot(forces[:, 0], forces[:, 1 + k], lw=1, label=f"{foot} normal force")
    axes.plot(forces[:, 0], forces[:, 1:].sum(axis=1), color="k", lw=1, ls="--", label="sum")
    axes.set(xlabel="time [s]", ylabel="force [N]", title="Sole normal forces (ground truth)")
    axes.legend(loc="upper right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _plot_momentum(recording, scenario, path):
    momentum = recording.series("momentum")
    figure, (linear, angular) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    for axes, columns, unit, title in ((linear, slice(1, 4), "kg·m/s", "linear"),
                                       (angular, slice(4, 7), "kg·m²/s", "angular (about the CoM)")):
        _shade_phases(axes, scenario)
        for axis, values in zip("xyz", momentum[:, columns].T):
            axes.plot(momentum[:, 0], values, lw=1, label=axis)
        axes.set(ylabel=unit, title=f"Centroidal {title} momentum (ground truth)")
        axes.legend(loc="upper right", fontsize=8)
    angular.set_xlabel("time [s]")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _plot_arms(recording, scenario, path):
    """Each dancing joint's angle at the plant against the commanded one (the angle at the dance's start plus the
    trajectory's offset)."""
    arms, dance = recording.series("arms"), scenario.dance
    start = _window(arms, dance.start - 0.1, dance.start + 1e-9)
    start = start[-1, 1:] if len(start) else arms[0, 1:]
    times, offsets, _ = dance.trajectory(recording.arm_swing)
    figure, axes = plt.subplots(figsize=(9, 4))
    _shade_phases(axes, scenario)
    for k in range(arms.shape[1] - 1):
        line, = axes.plot(arms[:, 0], arms[:, k + 1], lw=1.0)
        axes.plot(dance.start + times, start[k] + offsets[:, k], ls="--", lw=0.8, color=line.get_color())
    axes.set(xlabel="time [s]", ylabel="joint angle [rad]",
             title="dancing arms: measured at the plant (solid), commanded (dashed)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _plot_steps(recording, scenario, feet, path):
    """Recovery steps: the CoM (ground truth), the capture point and the footsteps the balancer planned, seen from
    above and laterally against time, with the soles' normal forces (their lift-offs and touchdowns)."""
    settled = lambda series: series[series[:, 0] >= scenario.settle]  # noqa: E731
    com, capture, steps = (settled(recording.series(name)) for name in ("com", "capture_point", "footsteps"))
    forces = settled(recording.series("foot_forces"))
    figure, (top, lateral, load) = plt.subplots(1, 3, figsize=(15, 5), gridspec_kw={"width_ratios": [1, 1.4, 1.4]})
    top.plot(capture[:, 1], capture[:, 2], color="#e67e22", lw=1.0, label="capture point ξ")
    top.plot(com[:, 1], com[:, 2], color="k", lw=1.2, label="CoM (ground truth)")
    if len(steps):
        top.scatter(steps[:, 1], steps[:, 2], marker="s", s=30, color="#27ae60", label="footstep planned")
    top.set(xlabel="x [m]", ylabel="y [m]", title="Top view")
    top.set_aspect("equal", adjustable="datalim")
    top.legend(loc="upper right", fontsize=8)
    _shade_phases(lateral, scenario)
    lateral.plot(capture[:, 0], capture[:, 2], color="#e67e22", lw=1.0, label="ξ y")
    lateral.plot(com[:, 0], com[:, 2], color="k", lw=1.2, label="CoM y")
    if len(steps):
        lateral.scatter(steps[:, 0], steps[:, 2], marker="s", s=8, color="#27ae60", label="footstep y")
    lateral.set(xlabel="time [s]", ylabel="y [m]", title="Lateral CoM, capture point and footsteps")
    lateral.legend(loc="upper right", fontsize=8)
    _shade_phases(load, scenario)
    for k, foot in enumerate(feet):
        load.plot(forces[:, 0], forces[:, 1 + k], lw=1.0, label=foot)
    load.set(xlabel="time [s]", ylabel="normal force [N]", title="Soles' load (lift-off and touchdown)")
    load.legend(loc="upper right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write_report(folder, recording, scenario, figures, feet):
    """PNG plots and metrics.json in ``folder``; returns the written paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / "com_zmp.png", folder / "foot_forces.png", folder / "momentum.png"]
    _plot_com_zmp(recording, scenario, paths[0])
    _plot_foot_forces(recording, scenario, feet, paths[1])
    _plot_momentum(recording, scenario, paths[2])
    if recording.rows["capture_point"]:
        paths.append(folder / "steps.png")
        _plot_steps(recording, scenario, feet, paths[-1])
    if recording.arm_swing is not None and recording.rows["arms"]:
        paths.append(folder / "arms.png")
        _plot_arms(recording, scenario, paths[-1])
    metrics_path = folder / "metrics.json"
    metrics_path.write_text(json.dumps(figures, indent=2, allow_nan=True) + "\n")
    return paths + [metrics_path]


def comparison(runs, folder):
    """The same scenario in several balance modes side by side (``runs``: mode → metrics): a Markdown table of each
    push's CoM peak and settling time, the dance and the verdict, written to ``folder``/comparison.md and
    returned."""
    modes = list(runs)
    rows = [("", *modes), ("verdict", *("PASSED" if runs[m]["success"] else "FAILED" for m in modes))]
    for k, push in enumerate(runs[modes[0]]["pushes"]):
        rows.append((f"{push['label']}: CoM peak / settled to 5 mm",
                     *(f"{runs[m]['pushes'][k]['CoM peak excursion [m]'] * 1000:.0f} mm / "
                       f"{runs[m]['pushes'][k]['settling time to 5 mm [s]']:.2f} s" for m in modes)))
    if runs[modes[0]]["dancing arms"]:
        rows.append(("dancing arms: CoM held within / ZMP x moved",
                     *(f"{runs[m]['dancing arms']['CoM horizontal deviation [m]'] * 1000:.1f} mm / "
                       f"{runs[m]['dancing arms']['ZMP excursion x, y [m]'][0] * 1000:.0f} mm" for m in modes)))
        reached = [runs[m]["dancing arms"].get("arm swing reached, of the commanded") for m in modes]
        if all(value is not None for value in reached):
            rows.append(("dancing arms: swing reached (worst joint)", *(f"{value * 100:.0f} %" for value in reached)))
    rows.append(("lowest base height", *(f"{runs[m]['lowest base height [m]']:.3f} m" for m in modes)))
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    lines = ["| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths)) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("-" * (width + 2) for width in widths) + "|")
    text = "\n".join(lines)
    Path(folder).mkdir(parents=True, exist_ok=True)
    (Path(folder) / "comparison.md").write_text(f"# Balance modes on the same pushes\n\n{text}\n")
    return text
