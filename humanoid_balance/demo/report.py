"""The demo's report: metrics of a recorded run, PNG plots, a metrics JSON and the verdict in words (no ROS here).

A :class:`Recording` holds time series in simulated seconds: ground truth from the plant (base height, CoM,
momenta, sole contact forces) and the suite's own estimates (ZMP, its margin inside the support polygon, the feet's
contact phases, where the soles are).
"""
import json
import math
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after selecting the headless backend)
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

__all__ = ["Recording", "metrics", "recovery", "jump_figures", "dance_figures", "in_contact", "write_report",
           "figures_of", "summary_lines", "comparison", "FALL_DROP", "SETTLED_WITHIN"]

FALL_DROP = 0.10        # the base more than this below its standing height: fallen [m]
SETTLED_WITHIN = 0.005  # a push is recovered once the CoM stays this close to where it stood [m]
STILL_SPEED, STILL_INTERVAL = 0.02, 0.05  # standing still: the CoM slower than this [m/s], measured over this [s]
LIFT_OFF_TIME = 0.05    # [s] a sole unloaded this long has left the floor
LANDING_TIME = 0.05     # [s] ... and loaded again this long has come back down on it (less: it grazed the floor)
DOUBLE_SUPPORT_SHARE = 0.1  # each sole carrying this share of the normal force at least: double support
MAX_LIFT_OFFS = 2       # a push caught by steps: no more lift-offs than this
CONTACT = 1             # contact/<foot>/state: the foot is in contact (estimation/contact_wrench.py)
# what a verdict judges (metrics' "judged": criterion → met), and how an unmet one reads
NO_FALL, ZMP_INSIDE, JUMPS_LANDED = "no fall", "ZMP inside the support polygon", "every jump left the floor and landed"
FEW_LIFT_OFFS = f"at most {MAX_LIFT_OFFS} lift-offs of a sole per push"
NODES_OK, NO_NODE_IN_ERROR = "every node OK", "no node in error"
MAX_LANDING_DRIFT, MAX_LANDING_PITCH = 0.02, math.radians(2.0)  # a jump lands in place: [m], [rad]
JUMPS_IN_PLACE = (f"every jump landed within {MAX_LANDING_DRIFT * 1000:.0f} mm of where it stood, pitched less than "
                  f"{math.degrees(MAX_LANDING_PITCH):.0f}°")
UNMET = {NO_FALL: "the robot fell", ZMP_INSIDE: "the ZMP left the support polygon",
         JUMPS_LANDED: "a jump did not leave the floor or did not land",
         JUMPS_IN_PLACE: "a jump landed away from where it stood, pitched, or did not stand still again",
         FEW_LIFT_OFFS: f"more than {MAX_LIFT_OFFS} lift-offs of a sole after a push", NODES_OK: "not every node OK",
         NO_NODE_IN_ERROR: "a node in error"}


class Recording:
    """Rows appended per channel: ``add("zmp", t, x, y)``; ``series("zmp")`` → (k, columns) array."""

    def __init__(self):
        self.rows = defaultdict(list)
        self.polygon = np.zeros((0, 3))      # latest support polygon (odom frame) [m]
        self.standing_polygon = None         # ... the first one after settling (the "polygon_bounds" follow it)
        self.arm_swing = None                # the dancing joints' configured swing [rad] ("arms"; the dance scales it)
        self.arm_joints = {}                 # dancing limb → its joints' names, the "arms" columns in this order
        self.diagnostics = {}                # node → (worst level after settling, last message)

    def add(self, channel, *values):
        self.rows[channel].append(values)

    def series(self, channel):
        return np.array(self.rows[channel], dtype=float).reshape(-1, len(self.rows[channel][0])
                                                                  if self.rows[channel] else 1)


def _window(series, start, end):
    return series[(series[:, 0] >= start) & (series[:, 0] < end)]


def in_contact(states, times):
    """Whether the contact estimator had a foot in contact at each of ``times`` [s], from its phases ``states`` (rows
    t, phase of each foot, when one changed): where it had none, the ZMP it estimates is no ZMP. True before its
    first phase."""
    times = np.asarray(times, dtype=float)
    if not len(states):
        return np.ones(len(times), dtype=bool)
    latest = np.searchsorted(states[:, 0], times, side="right") - 1
    touching = (states[:, 1:] == CONTACT).any(axis=1)
    return np.where(latest >= 0, touching[np.maximum(latest, 0)], True)


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


def largest_sole_tilt(tilts, forces, start, end):
    """The largest tilt [rad] from the floor of a sole carrying load within [start, end) (the plant's ground truth:
    rows t, tilt of each foot and rows t, normal force of each foot); 0 without samples."""
    tilts, forces = _window(tilts, start, end), _window(forces, start, end)
    if not len(tilts) or not len(forces):
        return 0.0
    loaded = forces[np.minimum(np.searchsorted(forces[:, 0], tilts[:, 0]), len(forces) - 1), 1:] > 0.0
    return float(np.where(loaded, tilts[:, 1:], 0.0).max())


def feet_moved(positions, start, end):
    """How far [m] the sole that moved most stands at ``end`` from where it stood at ``start`` (the plant's ground
    truth: rows t, x and y of each foot; a step, a slip, or a foot the push lifted put down elsewhere); None without
    samples."""
    before, after = _window(positions, start - 0.3, start), _window(positions, start, end)
    if not len(before) or not len(after):
        return None
    moved = (after[-1, 1:] - before[:, 1:].mean(axis=0)).reshape(-1, 2)
    return float(np.linalg.norm(moved, axis=1).max())


def cop_tracking(true_cops, desired_cops, forces, start, end, share=DOUBLE_SUPPORT_SHARE):
    """Each foot's CoP tracking error in double support within [start, end): the RMS over the plant's samples of
    the distance [m] from its true CoP (rows t, foot, x, y, f_z in its sole frame) to the CoP the balancer distributed
    to it last (the same rows of contact/<foot>/desired_wrench), where every sole carries at least ``share`` of the
    total normal force (rows t, f of each foot). The largest over the feet; None without such samples."""
    forces = _window(forces, start, end)
    errors = []
    for foot in range(forces.shape[1] - 1):
        true = _window(true_cops[true_cops[:, 1] == foot], start, end) if len(true_cops) else true_cops
        desired = desired_cops[desired_cops[:, 1] == foot] if len(desired_cops) else desired_cops
        if not len(true) or not len(desired) or not len(forces):
            continue
        load = forces[np.minimum(np.searchsorted(forces[:, 0], true[:, 0]), len(forces) - 1), 1:]
        double = (load >= share * load.sum(axis=1, keepdims=True)).all(axis=1) & (load.sum(axis=1) > 0.0)
        latest = np.searchsorted(desired[:, 0], true[:, 0], side="right") - 1
        valid = double & (latest >= 0)
        distance = np.hypot(*(true[valid, 2:4] - desired[latest[valid], 2:4]).T)
        distance = distance[np.isfinite(distance)]
        if len(distance):
            errors.append(float(np.sqrt(np.mean(distance ** 2))))
    return max(errors) if errors else None


def lift_offs(forces, start, end):
    """How many times a sole left the floor within [start, end) for LIFT_OFF_TIME or longer: its normal force going
    from load to none (the plant's ground truth: a step, or a foot the push lifted; a sole rocking on its edge, in
    and out of contact from one physics step to the next, is not lifted). A sole in the air that grazes the floor,
    loaded for less than LANDING_TIME between two lifts (a foot the push lifted, skimming the floor as the robot
    rocks on the other), lifts once."""
    window = _window(forces, start, end)
    count = 0
    for loaded in (window[:, 1:] > 0.0).T:
        changes = np.flatnonzero(np.diff(loaded.astype(int))) + 1  # where a run of loaded or unloaded samples starts
        starts, ends = np.r_[0, changes], np.r_[changes, len(loaded)]
        lasted = window[np.minimum(ends, len(loaded) - 1), 0] - window[starts, 0]
        grazed = loaded[starts] & (starts > 0) & (ends < len(loaded)) & (lasted < LANDING_TIME)
        counted = False  # whether the sole's time off the floor, grazes and all, has counted as a lift-off
        for run_loaded, run_lasted, run_grazed, first in zip(loaded[starts], lasted, grazed, starts == 0):
            if run_loaded:  # (a few runs a push: a loop over runs, not samples)
                counted = counted and run_grazed
            elif first:
                counted = True  # lifted before the window: not the push's
            elif run_lasted >= LIFT_OFF_TIME and not counted:
                count, counted = count + 1, True
    return count


def jump_figures(com, forces, base, start, end, standing):
    """One jump between its request at ``start`` and ``end`` [s], from the ground-truth COG rows (t, x, y, z), sole
    normal forces (t, f...) and base rows (t, x, y, pitch): whether the soles left the floor, the apex above the
    ``standing`` COG height and the landing depth, the lowest COG after the last touchdown below its height there [m];
    the base's pitch at the touchdown [rad]; and the landing drift, the base's horizontal displacement from where it
    stood when the jump was asked to where it stands still again (None: it does not before ``end``) [m]."""
    height, normal, pose = _window(com, start, end), _window(forces, start, end), _window(base, start, end)
    aloft = normal[normal[:, 1:].sum(axis=1) <= 0.0, 0]
    figures = {"time [s]": start, "left the floor": bool(len(aloft)),
               "apex above the standing COG [m]": float(height[:, 3].max() - standing) if len(height) else None,
               "landing depth [m]": None, "pitch at landing [rad]": None, "landing drift [m]": None}
    after = height[height[:, 0] > aloft[-1]] if len(aloft) else height[:0]
    if len(after):
        figures["landing depth [m]"] = float(after[0, 3] - after[:, 3].min())
        landed = pose[pose[:, 0] >= after[0, 0]]
        if len(landed):
            figures["pitch at landing [rad]"] = float(landed[0, 3])
        still = standing_still(com, after[0, 0], end)
        if math.isfinite(still) and len(pose):
            stood = pose[pose[:, 0] >= after[0, 0] + still]
            if len(stood):
                figures["landing drift [m]"] = float(np.linalg.norm(stood[0, 1:3] - pose[0, 1:3]))
    return figures


def metrics(recording, scenario, wall_time, push_duration):
    """Figures of the run: fall, ZMP margin, push recoveries, dancing-arms CoM hold, jumps, node health, speed."""
    base, com, zmp = recording.series("base"), recording.series("com"), recording.series("zmp")
    judged = lambda s: s[s[:, 0] >= scenario.settle]  # noqa: E731
    standing = float(_window(base, scenario.settle - 0.1, scenario.settle + 0.1)[:, 1].mean())
    lowest = float(judged(base)[:, 1].min())
    margins = judged(recording.series("zmp_margin"))
    margins = margins[in_contact(recording.series("contact_states"), margins[:, 0])]
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
    tilts, true_cops, desired_cops, sole_positions = (recording.series(name) for name in (
        "sole_tilts", "sole_cops", "desired_cops", "sole_positions"))
    for push in pushes:
        end = next(e for s, e, _ in phases if s == push["time [s]"])
        push["standing still after [s]"] = standing_still(com, push["time [s]"], end)
        push["feet lifted"] = lift_offs(forces, push["time [s]"], end)
        push["largest sole tilt [rad]"] = largest_sole_tilt(tilts, forces, push["time [s]"], end)
        push["feet moved [m]"] = feet_moved(sole_positions, push["time [s]"], end)
        push["CoP tracking RMS, double support [m]"] = cop_tracking(true_cops, desired_cops, forces,
                                                                    push["time [s]"], end)
    base_pose = recording.series("base_pose")
    jumps = [jump_figures(com, forces, base_pose, start, end, float(_window(com, start - 0.3, start)[:, 3].mean()))
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
    if figures["dancing arms"] is not None:
        figures["dancing arms"]["CoP tracking RMS, double support [m]"] = cop_tracking(
            true_cops, desired_cops, forces, scenario.dance.start, scenario.dance.start + scenario.dance.duration)
    figures["zmp inside the support polygon"] = bool(figures["smallest ZMP margin inside the support polygon [m]"]
                                                     is not None and margins[:, 1].min() > 0.0)
    figures["all nodes OK"] = bool(nodes) and all(n["level"] == "OK" for n in nodes.values())
    judged = {NO_FALL: not figures["fell"]}
    if scenario.stepping:
        # a push that needs a step tips the robot onto one foot, the CoM reference outside what it stands on: the
        # balancer warns of it (balance first) while the step recovers; judged: no fall, no node in error, at most
        # MAX_LIFT_OFFS lift-offs per push (when the CoM stands still again is reported)
        judged[FEW_LIFT_OFFS] = all(p["feet lifted"] <= MAX_LIFT_OFFS for p in pushes)
        judged[NO_NODE_IN_ERROR] = bool(nodes) and all(n["level"] in ("OK", "WARN") for n in nodes.values())
    else:
        # a landing's impact may put the ZMP on the support's edge; a jump must leave the floor and land
        if jumps:
            judged[JUMPS_LANDED] = all(j["left the floor"] and j["landing depth [m]"] is not None for j in jumps)
            judged[JUMPS_IN_PLACE] = all(j["landing drift [m]"] is not None and j["landing drift [m]"]
                                         <= MAX_LANDING_DRIFT and abs(j["pitch at landing [rad]"]) <= MAX_LANDING_PITCH
                                         for j in jumps)
        else:
            judged[ZMP_INSIDE] = figures["zmp inside the support polygon"]
        judged[NODES_OK] = figures["all nodes OK"]
    figures["judged"] = judged
    figures["success"] = all(judged.values())
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


TITLE_PAD = 16  # [pt] between an axes and its title: room for the phases' names above the axes
PHASE_COLORS = {"settle": "0.9", "dancing arms": "#d8ecd8"}  # any other phase (a push, a jump): "#f6dcdc"
VIEW_PAD = 0.03  # [m] around the support polygon and the CoM in the views of the floor
MOVED = 0.005    # [m] a support polygon whose bounds moved farther has moved: a foot stepped (or slid)
COLORS = {"zmp": "#c0392b", "com": "k", "polygon": "#4a78b5", "capture": "#e67e22", "footstep": "#27ae60"}
FOOT_COLORS = ("#1f77b4", "#9467bd", "#8c564b", "#7f7f7f")  # none of COLORS'


def _shade_phases(axes, scenario, names=True):
    """Shade each phase but standing; with ``names``, name it above the axes (TITLE_PAD keeps the title clear)."""
    for start, end, label in scenario.phases():
        if label != "stand":
            axes.axvspan(start, end, color=PHASE_COLORS.get(label, "#f6dcdc"), lw=0)
            if names:
                axes.text(start + 0.05, 1.0, label, transform=axes.get_xaxis_transform(), fontsize=7, va="bottom")


def _settled(series, scenario):
    """The rows from the end of the settling phase on (no start-up transient)."""
    return series[series[:, 0] >= scenario.settle]


def _zmp_in_contact(recording, scenario):
    """The estimated ZMP's rows (t, x, y), NaN where the contact estimator had no foot in contact (no ZMP there; the
    NaN breaks the line)."""
    zmp = _settled(recording.series("zmp"), scenario).copy()
    zmp[~in_contact(recording.series("contact_states"), zmp[:, 0]), 1:] = np.nan
    return zmp


def _view(axes, column, zmp, *held):
    """Limit ``axes``' ``column`` axis ("x" or "y") to what ``held`` (arrays of values [m]: the support polygon, the
    CoM...) spans, VIEW_PAD around; return the farthest value of the ZMP estimate ``zmp`` (of that coordinate [m])
    beyond that view, None when it stays in it."""
    values = np.concatenate([np.ravel(h) for h in held])
    values = values[np.isfinite(values)]
    if not len(values):
        return None
    low, high = values.min() - VIEW_PAD, values.max() + VIEW_PAD
    getattr(axes, f"set_{column}lim")(low, high)
    zmp = np.asarray(zmp)[np.isfinite(zmp)]
    beyond = zmp[(zmp < low) | (zmp > high)]
    return float(beyond[np.argmax(np.abs(beyond - (low + high) / 2))]) if len(beyond) else None


def _zmp_label(line, name, *farthest):
    """Name the ZMP's ``line``, and the farthest it went beyond the view in the coordinates ``name`` ("xy", "x")."""
    beyond = [f"{axis} = {value:.2f} m" for axis, value in zip(name, farthest) if value is not None]
    line.set_label("ZMP (estimated)" + (f"; beyond the view up to {', '.join(beyond)}" if beyond else ""))


def _draw_polygon(axes, polygon, label, filled):
    closed = np.vstack([polygon, polygon[:1]])
    if filled:
        axes.fill(closed[:, 0], closed[:, 1], color="#dde8f6", label=label)
    axes.plot(closed[:, 0], closed[:, 1], color=COLORS["polygon"], lw=1, ls="-" if filled else "--",
              label=None if filled else label)


def _bounds(polygon):
    """(x_min, y_min, x_max, y_max) of a polygon's vertices (k, 2 or 3) [m]."""
    return np.r_[polygon[:, :2].min(axis=0), polygon[:, :2].max(axis=0)]


def com_zmp_figure(recording, scenario):
    """Top view of the CoM (ground truth) and the estimated ZMP in the support polygon (after settling and at the
    end, when it moved), and both against time within the polygon's bounds: laterally (y), or forwards (x) in a jump
    scenario, whose jumps go up and forwards. The ZMP is drawn only while a foot is in contact."""
    com, zmp = _settled(recording.series("com"), scenario), _zmp_in_contact(recording, scenario)
    bounds = _settled(recording.series("polygon_bounds"), scenario)  # t, x_min, y_min, x_max, y_max
    polygon, standing = recording.polygon, recording.standing_polygon
    if not len(bounds) and len(polygon) and len(com):  # not followed over time: the latest
        bounds = np.array([[com[0, 0], *_bounds(polygon)], [com[-1, 0], *_bounds(polygon)]])
    axis, name = (0, "x") if scenario.jumps else (1, "y")
    figure, (top, along) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [1, 1.6]})
    moved = standing is not None and len(polygon) and np.abs(_bounds(standing) - _bounds(polygon)).max() > MOVED
    if len(polygon):
        _draw_polygon(top, polygon, "support polygon at the end" if moved else "support polygon", filled=True)
    if moved:
        _draw_polygon(top, standing, "support polygon after settling", filled=False)
    line, = top.plot(zmp[:, 1], zmp[:, 2], color=COLORS["zmp"], lw=0.8)
    top.plot(com[:, 1], com[:, 2], color=COLORS["com"], lw=1.2, label="CoM (ground truth)")
    top.set(xlabel="x [m]", ylabel="y [m]")
    top.set_title("Top view", pad=TITLE_PAD)
    held = [polygon] + ([standing] if moved else [])
    _zmp_label(line, "xy", _view(top, "x", zmp[:, 1], *(p[:, 0] for p in held), com[:, 1]),
               _view(top, "y", zmp[:, 2], *(p[:, 1] for p in held), com[:, 2]))
    top.set_aspect("equal")
    top.legend(loc="upper right", fontsize=8)
    _shade_phases(along, scenario)
    line, = along.plot(zmp[:, 0], zmp[:, 1 + axis], color=COLORS["zmp"], lw=0.8)
    along.plot(com[:, 0], com[:, 1 + axis], color=COLORS["com"], lw=1.2, label=f"CoM {name} (ground truth)")
    limits = (bounds[:, 1 + axis], bounds[:, 3 + axis]) if len(bounds) else ()  # the polygon's lower, upper bound
    for k, limit in enumerate(limits):
        along.plot(bounds[:, 0], limit, color=COLORS["polygon"], ls="--", lw=1,
                   label=f"support polygon's {name} bounds" if k == 0 else None)
    _zmp_label(line, name, _view(along, "y", zmp[:, 1 + axis], *limits, com[:, 1 + axis]))
    along.set(xlabel="time [s]", ylabel=f"{name} [m]")
    along.set_title(f"{'Forward' if axis == 0 else 'Lateral'} CoM and ZMP against the support polygon",
                    pad=TITLE_PAD)
    along.legend(loc="best", fontsize=8)
    figure.tight_layout()
    return figure


def com_height_figure(recording, scenario, feet):
    """The jumps: the CoM's height (ground truth) against time, where it stood before the first jump, and the times
    no sole touched the floor (the plant's normal forces)."""
    com, forces = recording.series("com"), _settled(recording.series("foot_forces"), scenario)
    figure, axes = plt.subplots(figsize=(10, 4))
    _shade_phases(axes, scenario)
    axes.plot(com[:, 0], com[:, 3], color=COLORS["com"], lw=1.2, label="CoM height (ground truth)")
    before = _window(com, scenario.jumps[0] - 0.3, scenario.jumps[0]) if scenario.jumps else com[:0]
    if len(before):
        axes.axhline(before[:, 3].mean(), color="0.4", ls="--", lw=1, label="standing, before the first jump")
    aloft = forces[:, 1:].sum(axis=1) <= 0.0
    changes = np.flatnonzero(np.diff(np.r_[0, aloft.astype(int), 0]))  # starts and ends of the runs aloft
    for k, (start, end) in enumerate(zip(changes[::2], changes[1::2])):
        axes.axvspan(forces[start, 0], forces[min(end, len(forces) - 1), 0], color="#7fb3d5", alpha=0.6, lw=0,
                     label=f"in the air (no force on {' nor '.join(feet)})" if k == 0 else None)
    axes.set(xlabel="time [s]", ylabel="height [m]")
    axes.set_title("CoM height through the jumps (ground truth)", pad=TITLE_PAD)
    axes.legend(loc="best", fontsize=8)
    figure.tight_layout()
    return figure


def _foot_width(k):
    """Line width of the ``k``-th foot's curve: each one thinner than the last, so that equal loads (a jump's two
    feet) show both."""
    return 1.8 / (1 + k)


def foot_forces_figure(recording, scenario, feet):
    forces = recording.series("foot_forces")
    figure, axes = plt.subplots(figsize=(10, 4))
    _shade_phases(axes, scenario)
    for k, foot in enumerate(feet):
        axes.plot(forces[:, 0], forces[:, 1 + k], lw=_foot_width(k), color=FOOT_COLORS[k % len(FOOT_COLORS)],
                  label=f"{foot} normal force")
    axes.plot(forces[:, 0], forces[:, 1:].sum(axis=1), color="k", lw=1, ls="--", label="sum")
    axes.set(xlabel="time [s]", ylabel="force [N]")
    axes.set_title("Sole normal forces (ground truth)", pad=TITLE_PAD)
    axes.legend(loc="best", fontsize=8)
    figure.tight_layout()
    return figure


def momentum_figure(recording, scenario):
    momentum = recording.series("momentum")
    figure, (linear, angular) = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True)
    for axes, columns, unit, title in ((linear, slice(1, 4), "kg·m/s", "linear"),
                                       (angular, slice(4, 7), "kg·m²/s", "angular (about the CoM)")):
        _shade_phases(axes, scenario)
        for axis, values in zip("xyz", momentum[:, columns].T):
            axes.plot(momentum[:, 0], values, lw=1, label=axis)
        axes.set(ylabel=unit)
        axes.set_title(f"Centroidal {title} momentum (ground truth)", pad=TITLE_PAD)
        axes.legend(loc="upper right", fontsize=8)
    angular.set_xlabel("time [s]")
    figure.tight_layout()
    return figure


def arms_figure(recording, scenario):
    """Each dancing limb's joints: the angle measured at the plant (a thin line) against the commanded one (a broad
    pale band under it, of the same colour: the angle at the dance's start plus the trajectory's offset)."""
    arms, dance = recording.series("arms"), scenario.dance
    start = _window(arms, dance.start - 0.1, dance.start + 1e-9)
    start = start[-1, 1:] if len(start) else arms[0, 1:]
    times, offsets, _ = dance.trajectory(recording.arm_swing)
    limbs = recording.arm_joints or {"arms": tuple(f"joint {k + 1}" for k in range(arms.shape[1] - 1))}
    figure, rows = plt.subplots(len(limbs), 1, figsize=(10, 1.0 + 2.6 * len(limbs)), sharex=True, squeeze=False)
    column = 0
    for row, (limb, joints) in zip(rows[:, 0], limbs.items()):
        _shade_phases(row, scenario, names=row is rows[0, 0])
        for joint in joints:
            line, = row.plot(arms[:, 0], arms[:, column + 1], lw=1.0, label=joint, zorder=3)
            row.plot(dance.start + times, start[column] + offsets[:, column], lw=5, alpha=0.3,
                     color=line.get_color(), solid_capstyle="butt", zorder=2)
            column += 1
        style = [Line2D([], [], color="0.3", lw=1.0, label="measured at the plant"),
                 Line2D([], [], color="0.3", lw=5, alpha=0.3, label="commanded")]
        row.legend(handles=row.get_legend_handles_labels()[0] + style, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                   fontsize=8, title=limb, title_fontsize=8)
        row.set_ylabel("joint angle [rad]")
    rows[0, 0].set_title("Dancing arms: each joint measured at the plant against its command", pad=TITLE_PAD)
    rows[-1, 0].set_xlabel("time [s]")
    figure.tight_layout()
    return figure


def _sole_outline(sole):
    """The corners (5, 2), closed, of a sole row (t, index, centre x, y, yaw, length, width) [m]."""
    _, _, x, y, yaw, length, width = sole
    corners = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1], [1, 1]]) * [length / 2, width / 2]
    rotation = np.array([[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]])
    return corners @ rotation.T + [x, y]


def steps_figure(recording, scenario, feet):
    """Recovery steps: from above, the soles where they stood before the first push and where they stand at the end,
    the footsteps the balancer planned, the capture point and the CoM (ground truth); laterally against time, with
    each sole's centre; and the soles' normal forces (their lift-offs and touchdowns)."""
    com, capture, steps = (_settled(recording.series(name), scenario) for name in ("com", "capture_point", "footsteps"))
    forces, soles = _settled(recording.series("foot_forces"), scenario), recording.series("soles")
    first_push = scenario.pushes[0].time if scenario.pushes else scenario.settle
    figure, (top, lateral, load) = plt.subplots(1, 3, figsize=(16, 5.5), gridspec_kw={"width_ratios": [1, 1.4, 1.4]})
    colors = [FOOT_COLORS[k % len(FOOT_COLORS)] for k in range(len(feet))]
    corners = []
    for k, (foot, color) in enumerate(zip(feet, colors)):
        own = soles[soles[:, 1] == k] if len(soles) else soles
        before = own[own[:, 0] <= first_push]
        for sole, style in ((before[-1] if len(before) else None, dict(ls="--", lw=1.0, label=f"{foot} before")),
                            (own[-1] if len(own) else None, dict(ls="-", lw=1.8, label=f"{foot} at the end"))):
            if sole is not None:
                outline = _sole_outline(sole)
                top.plot(outline[:, 0], outline[:, 1], color=color, **style)
                corners.append(outline)
        if len(own):
            lateral.plot(own[:, 0], own[:, 3], color=color, lw=1.0, ls=":", label=f"{foot} centre y")
    top.plot(capture[:, 1], capture[:, 2], color=COLORS["capture"], lw=1.0, label="capture point ξ")
    top.plot(com[:, 1], com[:, 2], color=COLORS["com"], lw=1.2, label="CoM (ground truth)")
    if len(steps):
        top.scatter(steps[:, 1], steps[:, 2], marker="x", s=20, color=COLORS["footstep"], zorder=3,
                    label="footstep planned (sole origin)")
    top.set(xlabel="x [m]", ylabel="y [m]")
    top.set_title("Top view: soles, steps, capture point", pad=TITLE_PAD)
    top.set_aspect("equal", adjustable="datalim")
    top.legend(loc="upper left", bbox_to_anchor=(0.0, -0.12), fontsize=8, ncol=2)
    _shade_phases(lateral, scenario)
    lateral.plot(capture[:, 0], capture[:, 2], color=COLORS["capture"], lw=1.0, label="ξ y")
    lateral.plot(com[:, 0], com[:, 2], color=COLORS["com"], lw=1.2, label="CoM y")
    if len(steps):
        lateral.scatter(steps[:, 0], steps[:, 2], marker="x", s=8, color=COLORS["footstep"], label="footstep y")
    lateral.set(xlabel="time [s]", ylabel="y [m]")
    lateral.set_title("Lateral CoM, capture point, soles and footsteps", pad=TITLE_PAD)
    lateral.legend(loc="upper right", fontsize=8)
    _shade_phases(load, scenario)
    for k, (foot, color) in enumerate(zip(feet, colors)):
        load.plot(forces[:, 0], forces[:, 1 + k], lw=_foot_width(k), color=color, label=foot)
    load.set(xlabel="time [s]", ylabel="normal force [N]")
    load.set_title("Soles' load (lift-off and touchdown)", pad=TITLE_PAD)
    load.legend(loc="upper right", fontsize=8)
    figure.tight_layout()
    return figure


def figures_of(recording, scenario, feet):
    """The report's plots: file name → matplotlib Figure (closed by :func:`write_report` once saved)."""
    figures = {"com_zmp.png": com_zmp_figure(recording, scenario),
               "foot_forces.png": foot_forces_figure(recording, scenario, feet),
               "momentum.png": momentum_figure(recording, scenario)}
    if scenario.jumps:
        figures["com_height.png"] = com_height_figure(recording, scenario, feet)
    if recording.rows["capture_point"]:
        figures["steps.png"] = steps_figure(recording, scenario, feet)
    if scenario.dance and recording.arm_swing is not None and recording.rows["arms"]:
        figures["arms.png"] = arms_figure(recording, scenario)
    return figures


def write_report(folder, recording, scenario, figures, feet):
    """PNG plots and metrics.json in ``folder``; returns the written paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, figure in figures_of(recording, scenario, feet).items():
        paths.append(folder / name)
        figure.savefig(paths[-1], dpi=110)
        plt.close(figure)
    metrics_path = folder / "metrics.json"
    metrics_path.write_text(json.dumps(figures, indent=2, allow_nan=True) + "\n")
    return paths + [metrics_path]


def _plural(count, word):
    """'1 lift-off', '2 lift-offs'."""
    return f"{count} {word if count == 1 else word + 's'}"


def _millimetres(value):
    return f"{value * 1000:.0f} mm"


def _after(value, done, not_done, measured):
    """'<done> <value> s', or ``not_done`` for inf (not before the next phase), '<measured> not measured' for NaN."""
    return not_done if value == float("inf") else f"{measured} not measured" if value != value else \
        f"{done} {value:.2f} s"


def summary_lines(figures, paths):
    """The console summary of a run's metrics (:func:`metrics` and the runner's "control" and "recording"): the
    verdict on what was judged, the nodes not OK and what they said, the headline figures, the files."""
    judged = figures["judged"]
    verdict = "PASSED" if figures["success"] else "FAILED"
    lines = [f"\n{verdict} ({figures['control']['mode']} mode): "
             + ", ".join(criterion if met else UNMET[criterion] for criterion, met in judged.items())]
    lines += [f"  {node} {status['level']}: {status['message']}" for node, status in figures["nodes"].items()
              if status["level"] != "OK"]
    if not figures["nodes"]:
        lines.append("  no node reported its health")
    lines.append(f"  simulated {figures['simulated time [s]']:.1f} s in {figures['wall time [s]']:.1f} s "
                 f"(real-time factor {figures['real-time factor']:.2f}); plant {figures['control']['plant']}, "
                 f"actuator commands at {figures['control']['actuator command rate achieved [Hz]']:.0f} Hz")
    margin = figures["smallest ZMP margin inside the support polygon [m]"]
    zmp = ("no ZMP estimated" if margin is None else f"smallest ZMP margin {_millimetres(margin)}" if margin > 0.0
           else f"ZMP outside the support polygon by up to {_millimetres(-margin)}")
    if margin is not None and ZMP_INSIDE not in judged:
        zmp += " (not judged with jumps)" if figures["jumps"] else " (not judged with recovery steps)"
    lines.append(f"  base height {figures['standing base height [m]']:.3f} m standing, lowest "
                 f"{figures['lowest base height [m]']:.3f} m; {zmp}")
    for push in figures["pushes"]:
        lifted = push["feet lifted"]
        lines.append(f"  {push['label']}: CoM peak {_millimetres(push['CoM peak excursion [m]'])}, "
                     + _after(push["settling time to 5 mm [s]"], "settled to 5 mm in",
                              "not settled to 5 mm before the next phase", "settling") + ", "
                     + _after(push["standing still after [s]"], "standing still after",
                              "not standing still before the next phase", "standing still") + ", "
                     + ("no sole lifted" if lifted == 0 else f"{_plural(lifted, 'lift-off')} of a sole"))
    dance = figures["dancing arms"]
    if dance:
        lines.append(f"  dancing arms: CoM held within {dance['CoM horizontal deviation [m]'] * 1000:.1f} mm, ZMP "
                     f"moved {dance['ZMP excursion x, y [m]'][0] * 1000:.0f} / "
                     f"{dance['ZMP excursion x, y [m]'][1] * 1000:.0f} mm")
    for k, jump in enumerate(figures["jumps"]):
        landing = jump["landing depth [m]"]
        drift, pitch = jump["landing drift [m]"], jump["pitch at landing [rad]"]
        lines.append(f"  jump {k + 1}: " + (f"apex {jump['apex above the standing COG [m]'] * 1000:.0f} mm above the "
                                            f"standing COG, landing {landing * 1000:.0f} mm deep, pitched "
                                            f"{math.degrees(pitch):+.1f}°, "
                                            + (f"standing still {drift * 1000:.0f} mm from where it took off"
                                               if drift is not None else "not standing still again")
                                            if jump["left the floor"] and landing is not None else
                                            "did not leave the floor" if not jump["left the floor"] else "no landing"))
    if "recording" in figures:
        recording = figures["recording"]
        lines.append(f"  recording: {recording['path']} ({recording['topics']} topics, {recording['messages']} "
                     f"messages, {recording['size [MB]']:.1f} MB; rosbag2, MCAP)")
    lines.append("  report: " + ", ".join(str(p) for p in paths))
    return lines


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
