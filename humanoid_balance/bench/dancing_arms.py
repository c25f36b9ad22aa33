"""Experiment 2: dancing arms (Choi–Kim; Kim–Choi–Kim's motion-embedded CoM Jacobian).

Mahru I on its position drives keeps its CoM still while both arms follow large 1 Hz joint trajectories,
sent as J-busy joint rates (Kim–Choi–Kim eqs. 14–20); the legs absorb what the arms do to the CoM. Paper
(Choi–Kim, Mahru I): the CoM stays nearly fixed and the ZMP within ±0.01 m. Then the same dance in momentum mode on
the plant's joint impedance (torque-controlled, as in experiment 1): the motion becomes the impedance's targets, the
arms' inverse dynamics its feed-forward, their momentum the reference of Garofalo et al.'s damping. Measured on the
plant's ground truth: the CoM and the floor's centre of pressure, against their means over the 0.3 s before the
dance, and the arms' joints' swing against the commanded one (so that an arm that does not move cannot pass).
Units: SI.
"""
from typing import NamedTuple

import numpy as np

from humanoid_balance.bench.closed_loop import ClosedLoop, robot_config
from humanoid_balance.bench.results import Result
from humanoid_balance.control.balancer import STEPPING_MODES, BalancerConfig

__all__ = ["NOTE", "ROBOT", "run", "dance", "Dance", "AMPLITUDE"]

EXPERIMENT = "2 dancing arms"
ROBOT = "mahru"
AMPLITUDE = np.array([-0.9, 0.6, 0.4, -1.2, 0.5, 0.3])   # left arm, peak-to-peak [rad]; the right one mirrors it
MIRROR = np.array([1.0, -1.0, -1.0, 1.0, -1.0, -1.0])     # roll and yaw change sign on the right
ANTIPHASE = np.array([-1.0, 1.0, 1.0, 1.0, 1.0, 1.0])     # ... and the shoulders swing in antiphase
FREQUENCY, START = 1.0, 0.5                               # [Hz], [s]
NOTE = ("2: Mahru I in kinematic mode on its position drives, then in momentum mode on the plant's joint impedance "
        "(50 N·m/rad, 3 N·m·s/rad, as in 1); each arm joint follows A (1 − cos 2π f t) / 2 at "
        "f = 1 Hz with A = (−0.9, 0.6, 0.4, −1.2, 0.5, 0.3) rad from shoulder pitch to wrist roll, the right arm "
        "mirrored with its shoulder pitch in antiphase (the right shoulder's limit is 1 rad back). CoM and ZMP "
        "are the plant's ground truth; the arms' swing is each joint's peak-to-peak at the plant over the commanded "
        "A. With the CoM held still, the ZMP moves by −L̇/(m g) alone: the arms' own "
        "rate of change of angular momentum (the elbows flex together), which a CoM controller cannot cancel; "
        "shoulders swinging in phase show it in centimetres (the extra row). On another robot, each busy limb "
        "swings through its configured <limb>_swing as A.")


def amplitudes(config, robot, antiphase=True):
    """Busy limb → peak-to-peak joint amplitudes [rad]: the paper's on Mahru I (left, right), else each limb's
    configured swing."""
    if robot != ROBOT:
        return {limb: np.asarray(config.limb_swing[limb], dtype=float) for limb in config.busy_limbs}
    left, right = config.busy_limbs
    return {left: AMPLITUDE, right: MIRROR * (ANTIPHASE if antiphase else 1.0) * AMPLITUDE}


def arm_rates(amplitude, t):
    """J-busy joint rates of each limb, A (1 − cos 2π f t) / 2 differentiated, at time ``t`` after the dance
    starts [rad/s]."""
    w = 2 * np.pi * FREQUENCY
    return {limb: 0.5 * a * w * np.sin(w * t) for limb, a in amplitude.items()}


class Dance(NamedTuple):
    com_deviation: float     # largest horizontal CoM deviation [m]
    zmp_excursion: np.ndarray  # largest ZMP excursion (x, y) [m]
    swing: np.ndarray        # the arms' joints' peak-to-peak swing over the commanded one (every joint that swings)
    fell: bool


def dance(periods, robot=ROBOT, antiphase=True, session=None, mode="kinematic"):
    """Run the dance for ``periods`` periods in balance ``mode`` (momentum: on the plant's joint impedance); returns
    a :class:`Dance`."""
    config = robot_config(robot)
    amplitude = amplitudes(config, robot, antiphase)
    loop = ClosedLoop(config, mode=mode, arms=True, session=session)
    samples, swings, end = [], [], START + periods / FREQUENCY
    times = np.arange(0.0, end - START + 1e-9, loop.period)
    for limb in amplitude:
        loop.follow(limb, times, [arm_rates(amplitude, t)[limb] for t in times], start=START)
    joints = [joint for limb in amplitude for joint in config.limb_joints[limb]]
    commanded = np.abs(np.concatenate(list(amplitude.values())))
    while loop.sim.time < end:
        sample = loop.tick()
        samples.append((sample.time, *sample.com[:2], *sample.true_zmp[:2]))
        if sample.time >= START:
            swings.append(loop.sim.joint_states(joints)[0])
        if loop.fallen(sample):
            return Dance(float("inf"), np.full(2, np.inf), np.zeros(len(commanded)), True)
    samples, swings = np.array(samples), np.array(swings)
    still, dancing = samples[:, 0] < START, samples[:, 0] >= START
    reference = samples[still & (samples[:, 0] >= START - 0.3), 1:].mean(axis=0)
    com_deviation = float(np.linalg.norm(samples[dancing, 1:3] - reference[:2], axis=1).max())
    zmp_excursion = np.abs(samples[dancing, 3:5] - reference[2:]).max(axis=0)
    swinging = commanded > 0.0
    swing = (swings.max(axis=0) - swings.min(axis=0))[swinging] / commanded[swinging]
    return Dance(com_deviation, zmp_excursion, swing, False)


def run(smoke=False, robot=ROBOT, session=None):
    if not robot_config(robot).busy_limbs:
        return [Result(EXPERIMENT, "CoM deviation and ZMP excursion, 1 Hz arm trajectories", "—", "—",
                       "does not apply: the robot has no busy_limbs", None)]
    periods = 2 if smoke else 4
    paper = "Mahru I (Choi–Kim)"
    rows = []
    for mode in STEPPING_MODES:
        suffix = "" if mode == BalancerConfig.mode else f", {mode} mode"  # the default mode's rows: no suffix
        danced = dance(periods, robot, session=session, mode=mode)
        fell = danced.fell
        rows += [Result(EXPERIMENT, f"CoM deviation, 1 Hz arm trajectories{suffix}", f"{paper}: nearly fixed",
                        "≤ 5 mm", "fell" if fell else f"{danced.com_deviation * 1e3:.1f} mm",
                        not fell and danced.com_deviation <= 0.005),
                 Result(EXPERIMENT, f"ZMP excursion x / y{suffix}", f"{paper}: within ±0.01 m", "≤ 10 mm",
                        "fell" if fell else
                        f"{danced.zmp_excursion[0] * 1e3:.1f} / {danced.zmp_excursion[1] * 1e3:.1f} mm",
                        not fell and danced.zmp_excursion.max() <= 0.010),
                 Result(EXPERIMENT, f"arms' swing reached, of the commanded{suffix}", "—", "≥ 95 %",
                        "fell" if fell else
                        f"{danced.swing.min() * 100:.0f}–{danced.swing.max() * 100:.0f} % (joint by joint)",
                        not fell and danced.swing.min() >= 0.95)]
    if smoke or robot != ROBOT:
        return rows
    danced = dance(4, antiphase=False, session=session)
    rows.append(Result(EXPERIMENT, "shoulders in phase: CoM / ZMP x excursion", "—", "reported",
                       "fell" if danced.fell else
                       f"{danced.com_deviation * 1e3:.1f} / {danced.zmp_excursion[0] * 1e3:.0f} mm", None))
    return rows
