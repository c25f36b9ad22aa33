"""Experiment 3: a vertical jump with the VIIP controller (Sugihara–Nakamura, Fig. 2, eqs. 8–15).

kangaroo_like stands in viip mode, then jumps: stoop by z_d = 50 mm, lift-off on the spring of eqs. 10–11 that
should carry the COG z_H = 50 mm above its standing height, flight, touchdown on the spring of eq. 12 that should
stop the fall within z_d. Measured on the plant's ground-truth COG: the height held while standing, the apex above
the standing height, the lowest point after touchdown below the touchdown height, whether it fell, and the state
estimator's base height against the plant's from the jump request to 0.2 s after touchdown. Units: SI.
"""
import math

import numpy as np
import pinocchio as pin

from humanoid_balance.bench.closed_loop import ClosedLoop, robot_config
from humanoid_balance.bench.results import Result

__all__ = ["NOTE", "ROBOT", "run", "jump"]

EXPERIMENT = "3 VIIP jump"
ROBOT = "kangaroo_like"
JUMP_AT, WATCH = 1.0, 2.5          # [s]
JUMPS, JUMP_INTERVAL = 10, 2.0      # jumps in a row and the time between their requests [s]
NOTE = ("3: kangaroo_like in viip mode on its position drives, contact phases from the actuator forces; the "
        "jump is requested after 1 s of standing. Apex: the highest ground-truth COG above its standing height; "
        "landing: the lowest COG after the soles touch the floor again, below the touchdown height. In a row: a "
        "jump counts when the robot is still up when the next is requested.")


def jump(robot=ROBOT, session=None):
    """Stand, jump, watch; returns (standing COG deviation [m], apex [m], landing depth [m], planned (z_H, z_d),
    fell, mapper refusals, largest base height estimate error through flight and touchdown [m])."""
    loop = ClosedLoop(robot_config(robot), mode="viip", session=session)
    gains = loop.balancer.gains
    rows, fell, requested = [], False, False
    while loop.sim.time < JUMP_AT + WATCH and not fell:
        if loop.sim.time >= JUMP_AT and not requested:
            loop.balancer.jump()
            requested = True
        sample = loop.tick()
        estimate = loop.signals.state.base.position[2] - loop.signals.truth.base_position[2]
        rows.append((sample.time, sample.com[2], sample.sole_forces[:, 2].sum(), estimate))
        fell = loop.fallen(sample)
    rows = np.array(rows, dtype=float)
    time, height, normal, estimate = rows.T
    standing = height[(time > 0.3) & (time < JUMP_AT)]
    z_0 = standing.mean()
    airborne = np.flatnonzero((time >= JUMP_AT) & (normal <= 0.0))
    apex = float(height[time >= JUMP_AT].max() - z_0)
    touchdown = airborne[-1] + 1 if len(airborne) else len(time)  # the first tick on the floor after the last aloft
    landing = float(height[touchdown] - height[touchdown:].min()) if touchdown < len(time) else float("nan")
    window = (time >= JUMP_AT) & (np.arange(len(time)) <= touchdown + round(0.2 / loop.period))
    error = float(np.abs(estimate[window]).max())
    return (float(np.abs(standing - z_0).max()), apex, landing, (gains.jump_height, gains.stoop_depth), fell,
            loop.refusals, error)


def jumps_in_a_row(count=JUMPS, robot=ROBOT, session=None):
    """Jump ``count`` times, JUMP_INTERVAL apart after JUMP_AT of standing; returns (jumps made before a fall, fell,
    the largest landing drift [m], the largest pitch at a touchdown [rad]). A jump is made when the robot is still up
    when the next one is asked for (the last: at the end); its landing drift is the base's horizontal displacement
    from where it stood when the jump was asked to where it stands when the next is, its pitch the base's at the
    first contact after the flight (ground truth)."""
    loop = ClosedLoop(robot_config(robot), mode="viip", session=session)
    made, drift, pitch = 0, 0.0, 0.0
    for k in range(count + 1):
        aloft = False
        while loop.sim.time < JUMP_AT + k * JUMP_INTERVAL:
            sample = loop.tick()
            if loop.fallen(sample):
                return made, True, drift, pitch
            flying = not sample.sole_forces[:, 2].any()
            if aloft and not flying:
                attitude = pin.Quaternion(loop.signals.truth.base_quaternion).matrix()  # (x, y, z, w)
                pitch = max(pitch, abs(pin.rpy.matrixToRpy(attitude)[1]))
            aloft = flying
        if k:
            made += 1
            drift = max(drift, float(np.linalg.norm(loop.sim.ground_truth().base_position[:2] - start)))
        if k < count:
            start = loop.sim.ground_truth().base_position[:2].copy()
            loop.balancer.jump()
    return made, False, drift, pitch


def run(smoke=False, robot=ROBOT, session=None):
    deviation, apex, landing, (planned_apex, stoop), fell, refusals, error = jump(robot, session)
    paper = "Sugihara–Nakamura: stoop 50 mm, apex 50 mm"
    apex_met = not fell and abs(apex - planned_apex) <= 0.1 * planned_apex
    landed = f"{landing * 1e3:.0f} mm" if np.isfinite(landing) else "no landing"
    return [Result(EXPERIMENT, "COG height held while standing", "—", "≤ 5 mm", f"{deviation * 1e3:.1f} mm",
                   deviation <= 0.005),
            Result(EXPERIMENT, "apex above standing COG", paper, f"{planned_apex * 1e3:.0f} mm ± 10 %",
                   f"{apex * 1e3:.0f} mm", apex_met),
            Result(EXPERIMENT, "landing depth / fall", f"absorbed within {stoop * 1e3:.0f} mm",
                   f"≤ {stoop * 1e3:.0f} mm, no fall",
                   f"{landed}, {'fell' if fell else 'no fall'}, {refusals} mapper refusals",
                   not fell and landing <= stoop),
            Result(EXPERIMENT, "base height estimate, largest error through flight and touchdown", "—", "≤ 10 mm",
                   f"{error * 1e3:.1f} mm", error <= 0.010)] + ([] if smoke else [in_a_row(robot, session)])


def in_a_row(robot, session=None):
    made, fell, drift, pitch = jumps_in_a_row(JUMPS, robot, session)
    return Result(EXPERIMENT, f"{JUMPS} jumps in a row, {JUMP_INTERVAL:g} s apart: each landing's drift and pitch",
                  "—", f"{JUMPS} of {JUMPS}, no fall, ≤ 20 mm, ≤ 2°",
                  f"{made} of {JUMPS}" + (", fell" if fell else "") + f", {drift * 1e3:.0f} mm, "
                  f"{math.degrees(pitch):.1f}°", made == JUMPS and not fell and drift <= 0.02
                  and pitch <= math.radians(2.0))
