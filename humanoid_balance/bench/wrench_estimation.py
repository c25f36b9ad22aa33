"""Experiment 5: quasi-static contact-wrench estimation from actuator forces (Kangaroo section VI-B, Fig. 22).

kangaroo_like swings its CoM from foot to foot in kinematic mode while the contact estimator reconstructs the
sole wrenches from the ball-screw forces alone (eqs. 45–47), low-passed at 5 Hz as in the paper. Compared with
the plant's ground truth: each sole's normal force, their sum (the paper: it sums up to the weight) and the ZMP.
Units: SI.
"""
from dataclasses import replace

import numpy as np

from humanoid_balance.bench.closed_loop import ClosedLoop, robot_config
from humanoid_balance.bench.estimator import median_seconds
from humanoid_balance.bench.results import Result

__all__ = ["NOTE", "ROBOT", "run", "lateral_swing"]

EXPERIMENT = "5 wrench estimation"
ROBOT = "kangaroo_like"
AMPLITUDE, FREQUENCY, START = 0.04, 0.25, 1.0   # lateral CoM swing [m], [Hz]; after standing still [s]
NOTE = ("5: kangaroo_like in kinematic mode, CoM reference swinging ±40 mm sideways at 0.25 Hz; estimates from "
        "the actuator efforts only (no F/T sensors), Butterworth 5 Hz, against the plant's contact forces and "
        "floor centre of pressure. Errors are taken after 1 s of standing, so the filter has settled.")

PAPER_CUTOFF = 5.0  # [Hz] the wrenches' low-pass of the paper's experiment (the suite's default is faster)


def lateral_swing(periods, robot=ROBOT, session=None):
    """Swing for ``periods``; returns (ground-truth normal forces (k, 2), estimated (k, 2), true ZMP (k, 2),
    estimated ZMP (k, 2), weight [N], seconds per wrench estimate)."""
    loop = ClosedLoop(replace(robot_config(robot), cutoff_frequency=PAPER_CUTOFF), mode="kinematic", session=session)
    rows = []
    while loop.sim.time < START + periods / FREQUENCY:
        t = loop.sim.time - START
        offset = (0.0, AMPLITUDE * np.sin(2 * np.pi * FREQUENCY * t) if t > 0 else 0.0, 0.0)
        sample = loop.tick(com_offset=offset)
        if t > 0:
            rows.append(np.r_[sample.sole_forces[:, 2], sample.estimated_wrenches[:, 2], sample.true_zmp[:2],
                              sample.zmp[:2]])
    rows = np.array(rows)
    weight = loop.robot.total_mass * 9.81
    seconds = median_seconds(lambda: loop.loop.contact.quasi_static.estimate(sample.q, sample.efforts), 300)
    return rows[:, 0:2], rows[:, 2:4], rows[:, 4:6], rows[:, 6:8], weight, seconds


def run(smoke=False, robot=ROBOT, session=None):
    truth, estimate, true_zmp, zmp, weight, seconds = lateral_swing(1 if smoke else 2, robot, session)
    foot_error = np.sqrt(np.mean((estimate - truth) ** 2)) / weight
    total_error = np.abs(estimate.sum(axis=1) - weight).max() / weight
    zmp_error = np.sqrt(np.mean(np.sum((zmp - true_zmp) ** 2, axis=1)))
    paper = "Kangaroo hardware"
    return [Result(EXPERIMENT, "sole normal force, RMS error / weight", "—", "≤ 5 %", f"{foot_error * 100:.1f} %",
                   foot_error <= 0.05),
            Result(EXPERIMENT, "sum of normal forces vs weight, worst", f"{paper}: sums to the weight", "≤ 5 %",
                   f"{total_error * 100:.1f} %", total_error <= 0.05),
            Result(EXPERIMENT, "ZMP, RMS error", "—", "≤ 10 mm", f"{zmp_error * 1e3:.1f} mm", zmp_error <= 0.010),
            Result(EXPERIMENT, "time per estimate (eqs. 45–47)", f"{paper}: 0.03 ms (C++)", "≤ 0.20 ms",
                   f"{seconds * 1e3:.3f} ms", seconds <= 2e-4)]
