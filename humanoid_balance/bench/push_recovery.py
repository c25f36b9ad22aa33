"""Experiment 1: push recovery in momentum mode (Garofalo et al., the TORO push experiment).

Mahru I stands on its joint impedance (torque-controlled, as TORO) with the momentum-based balancer; a lateral
impulse hits the pelvis. Paper: TORO (77.5 kg), a pendulum push of 17.4 J at the hip, CoM amplitude 0.045 m,
settled in 4.7 s. The same push with the momentum feedback switched off (K_P = K_D = 0: only gravity
compensation and the joint impedance) shows what the controller adds. Units: SI.
"""
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from humanoid_balance.bench import bisection
from humanoid_balance.bench.closed_loop import ClosedLoop, robot_config, robot_mass
from humanoid_balance.bench.results import Result
from humanoid_balance.control.modes.momentum import MomentumBalanceGains
from humanoid_balance.demo.report import SETTLED_WITHIN, recovery

__all__ = ["NOTE", "ROBOT", "run", "push"]

EXPERIMENT = "1 push recovery"
ROBOT = "mahru"
PAPER = "TORO 77.5 kg, 17.4 J push"
PUSH_TIME, PUSH_DURATION, OBSERVED = 0.5, 0.1, 3.0   # [s]: settle, the push, then watch
SLIP = 0.005        # a sole moving this far on the floor has slipped [m]
NOTE = ("1: Mahru I (67.7 kg) in momentum mode on the plant's joint impedance (50 N·m/rad, 3 N·m·s/rad) with the "
        "balancer's efforts fed forward; a lateral force of 0.1 s on the pelvis. Settling: the CoM stays within "
        f"{SETTLED_WITHIN * 1e3:.0f} mm of where it stood. Slip: a sole moves more than {SLIP * 1e3:.0f} mm. The "
        "largest impulse is found by bisection (recovered: no fall, no slip, settled within the 3 s watched). On another "
        "robot the impulses scale with its mass (the same change of velocity).")


class PushOutcome(NamedTuple):
    impulse: float      # [N·s]
    peak: float         # CoM excursion [m]
    settling: float     # [s], inf when not settled
    slip: float         # largest sole displacement [m]
    fell: bool

    @property
    def recovered(self):
        return not self.fell and self.slip <= SLIP and np.isfinite(self.settling)


def push(impulse, robot=ROBOT, feedback=True, session=None):
    """Push ``robot`` (Mahru I) sideways at its base with ``impulse`` [N·s] and watch it for 3 s."""
    gains = MomentumBalanceGains()
    if not feedback:
        gains = replace(gains, com_stiffness=(0.0, 0.0, 0.0), linear_damping=(0.0, 0.0, 0.0))
    loop = ClosedLoop(robot_config(robot), mode="momentum", gains={"momentum": gains}, session=session)
    com, soles_before, fell = [], None, False
    while loop.sim.time < PUSH_TIME + OBSERVED and not fell:
        sample = loop.tick()
        com.append((sample.time, *sample.com))
        fell = loop.fallen(sample)
        if soles_before is None and sample.time >= PUSH_TIME - 1e-9:
            loop.push([0.0, impulse / PUSH_DURATION, 0.0], PUSH_DURATION)
            soles_before = sample.soles.copy()
    com = np.array(com)
    baseline = com[(com[:, 0] > PUSH_TIME - 0.2) & (com[:, 0] <= PUSH_TIME), 1:3].mean(axis=0)
    peak, settling = recovery(com, PUSH_TIME, PUSH_TIME + OBSERVED + 1.0, baseline)
    slip = float(np.linalg.norm((sample.soles - soles_before)[:, :2], axis=1).max())
    return PushOutcome(impulse, peak, float("inf") if fell else settling, slip, fell)


def largest_recovered(low, high, robot=ROBOT, tolerance=1.0, session=None):
    """Bisection on the impulse [N·s] between a recovered ``low`` and an unrecovered ``high``."""
    return bisection.largest_recovered(lambda impulse: push(impulse, robot, session=session),
                                       lambda outcome: outcome.recovered, low, high, tolerance)[0]


def run(smoke=False, robot=ROBOT, session=None):
    scale = 1.0 if robot == ROBOT else robot_mass(robot) / robot_mass(ROBOT)  # the same velocity change
    impulse = 12.0 * scale
    pushed = push(impulse, robot, session=session)
    rows = [Result(EXPERIMENT, f"CoM amplitude, {impulse:.3g} N·s lateral at the pelvis", f"{PAPER}: 0.045 m",
                   "≤ 0.045 m",
                   f"{pushed.peak:.3f} m", pushed.peak <= 0.045),
            Result(EXPERIMENT, "settling to 5 mm", f"{PAPER}: 4.7 s", "≤ 2.5 s", f"{pushed.settling:.2f} s",
                   pushed.settling <= 2.5),
            Result(EXPERIMENT, "fall / largest sole slip", "no fall", f"no fall, ≤ {SLIP * 1e3:.0f} mm",
                   f"{'fell' if pushed.fell else 'no fall'}, {pushed.slip * 1e3:.1f} mm",
                   not pushed.fell and pushed.slip <= SLIP)]
    if smoke:
        return rows
    open_loop = push(impulse, robot, feedback=False, session=session)
    settled = f"settled in {open_loop.settling:.2f} s" if np.isfinite(open_loop.settling) else "not settled in 3 s"
    rows.append(Result(EXPERIMENT, "same push, momentum feedback off", "—", "reported",
                       f"{open_loop.peak:.3f} m, {settled}", None))
    limit = largest_recovered(impulse, 40.0 * scale, robot, scale, session) if pushed.recovered else float("nan")
    rows.append(Result(EXPERIMENT, "largest lateral impulse recovered", "—", "reported", f"{limit:.3g} N·s", None))
    return rows
