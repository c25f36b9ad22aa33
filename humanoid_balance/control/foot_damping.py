"""Foot damping and foot force difference control: each stance sole's wrench under control on position drives
(Kajita, Morisawa, Miura, Nakaoka, Harada, Kaneko, Kanehiro, Yokoi 2010, "Biped walking stabilization based on
linear inverted pendulum tracking", sections III-C and III-D; Caron, Kheddar, Tempier 2019, "Stair climbing
stabilization of the HRP-4 humanoid robot using whole-body admittance control", section IV-D).

Stiff drives realise a posture whatever ankle torque it takes, so a sole's centre of pressure goes where the posture
puts it, up to an edge, over which the sole rolls. These two loops hand the soles' roll, pitch and relative height
to the wrenches instead, as Cartesian motions of the soles (the legs' sections in the embedded-motion resolution):

* **foot damping** (CoP admittance) turns each stance sole, in its own frame, at a rate proportional to its measured
  minus desired ankle torque, ω_x = A_x (τ_x − τ_x,d + T τ̇_x), ω_y = A_y (τ_y − τ_y,d + T τ̇_y): a sole pressed
  harder on its toes than asked lifts its toes, one pressed too little lowers them, until its CoP is the distributed
  one. The lead T on the measured torque's rate at the sole's present load, τ̇ ≈ (τ − τ_prev f_z/f_z,prev)/dt from
  its last two readings (the CoP's move, not a load that lands), is the loop's damping: without it the integral
  action turns a sole a quarter period late against the robot rocking on its stiff legs (kangaroo_like, dropped onto
  its feet, rocked at 4 Hz with ±10 % of its weight for 2 s where the posture alone stopped in 1 s);
* **foot force difference control** raises the soles carrying more than their share and lowers the others, at
  v_z,i = −A_f (e_i − ē) − D (z_i − z̄), e_i = f_z,i,d − f_z,i the normal force error and ē its mean over the soles in
  contact (two feet: Kajita's Δz = A_f (ΔF_d − ΔF) split half and half), the damping D keeping the soles' heights
  together (z̄ their mean);
* **levelling**: a stance sole that has turned off the floor by more than ``tilt_deadband`` (its normal n from the
  leg's kinematics on the IMU's attitude, against the floor's normal n_f, :mod:`~humanoid_balance.control.floor`:
  the vertical on flat ground; its CoP then sits on an edge, where the measured torque no longer grows with the
  tilt and foot damping cannot see it) turns back at ω = k_l (1 − θ_0/θ) n × n_f, θ the tilt: the ankle yields as
  far as the sole rolled, and the sole comes down flat with its CoP on the edge. θ_0 is the estimate's error; while
  the robot may be rolling (a foot up, or a sole's CoP near an edge), the soles level beyond ``edge_deadband``.
  On torque drives the QP sets the soles' wrenches itself, and the levelling alone turns the soles in the posture
  the joint impedance holds (:func:`levelling_twists`, the momentum mode).

The admittances are given per unit weight, so that one set fits robots of any mass: A = a / (m g) with a in rad/s per
metre of CoP error under the robot's whole weight, A_f = a_f / (m g) with a_f in m/s per weight of force error; a is
at most DAMPING_PER_TICK over the control period (a slower loop closes through longer delays). Each sole's rates are
clipped to the given maxima. Units: SI (N, N·m, m, rad, s).
"""
import math
from typing import NamedTuple

import numpy as np

from humanoid_balance.model.soles import VERTICAL, sole_tilt

__all__ = ["FootDampingGains", "sole_twists", "levelling_twists", "levelling_rate", "LEVEL_PER_TICK",
           "DAMPING_PER_TICK", "LEAD_LOAD", "TILT_DEADBAND", "EDGE_TILT_DEADBAND"]

LEAD_LOAD = 0.05
"""A sole's torque rate (foot damping's lead) is taken from a last reading that carried at least this share of the
robot's weight: below it, its CoP is not yet defined (a sole landing)."""

TILT_DEADBAND = 0.0218
"""[rad] the tilt a stance sole keeps without levelling: the estimate's error (an IMU's bias, 1.25°)."""
EDGE_TILT_DEADBAND = 0.0131
"""[rad] the same while the robot may be rolling over an edge (0.75°): sensor noise and biases leave a sole up to 1.8°
off the floor it stands flat on, so only then is a smaller tilt taken for a roll."""

LEVEL_PER_TICK = 0.2
"""Levelling takes back at most this fraction of a sole's tilt per control tick (100 /s at 500 Hz, 20 /s at 100 Hz)."""
DAMPING_PER_TICK = 0.006
"""[rad/m] foot damping's admittance a is at most this over the control period (3 rad/(s·m) at 500 Hz, 0.6 at
100 Hz): its loop closes through the measured wrench's filter and a message's delay at each of the chain's hops, a
tick each, so a slower loop waits longer for the same correction (kangaroo_like, its nodes in separate processes at
100 Hz in lockstep: standing, its ZMP rocked 20 mm RMS at a = 2 and 63 mm at 3; held at its toes' margin and brought
back, it fell in 3 of 8 runs at a = 1 and in none of 8 at 0.6)."""


class FootDampingGains(NamedTuple):
    cop_admittance: float          # a [rad/(s·m)]: a sole's roll and pitch rate per metre of CoP error under m g
    force_difference_admittance: float  # a_f [m/s]: a sole's vertical speed per weight m g of normal force error
    height_damping: float          # D [1/s]: the soles' heights back together
    max_tilt_rate: float           # [rad/s] a sole's roll and pitch rates, each at most
    max_lift_rate: float           # [m/s] a sole's vertical speed at most
    level_gain: float = 0.0        # k_l [1/s]: a tilted sole's rate back to flat per radian of tilt
    tilt_deadband: float = 0.0     # θ_0 [rad]: the tilt a sole keeps without levelling (the estimate's error)
    torque_lead: float = 0.0       # T [s]: the measured ankle torque's rate in foot damping
    edge_deadband: float = None    # [rad] θ_0 while the robot may be rolling (None: tilt_deadband)


def sole_twists(desired, measured, placements, active, weight, gains, dt, floor_normal=VERTICAL, previous=None,
                rolling=False):
    """The stance soles' twists, foot index → [v; ω] world-aligned at the sole frame (6,) [m/s, rad/s].

    Args:
        desired: per foot, the distributed sole wrench [f; τ] in its sole frame about its origin [N, N·m].
        measured: per foot, the measured one (None: unknown; that sole is left still), likewise.
        placements: per foot, the sole's world placement (pin.SE3).
        active: the indices of the feet in contact (the others get none).
        weight: m g of the robot [N].
        gains: FootDampingGains.
        dt: the control period [s]: levelling takes back at most LEVEL_PER_TICK of a tilt per tick (a faster
            loop, seen a tick or two late, would overshoot), and the admittance is at most DAMPING_PER_TICK / dt.
        floor_normal: n_f, the floor's normal the soles level to, world (3,) (control.floor).
        previous: per foot, the measured wrench of the last tick (None, a foot's None, or one carrying less than
            LEAD_LOAD of ``weight``: no torque rate for it).
        rolling: whether the robot may be rolling over an edge (a sole's CoP near one): the soles level beyond
            ``gains.edge_deadband``.
    """
    feet = [i for i in active if measured[i] is not None]
    if not feet:
        return {}
    admittance = min(gains.cop_admittance, DAMPING_PER_TICK / dt) if dt > 0.0 else gains.cop_admittance
    tilt_admittance = admittance / weight
    force_admittance = gains.force_difference_admittance / weight
    lift, tilt = gains.max_lift_rate, gains.max_tilt_rate
    lead = gains.torque_lead / dt if dt > 0.0 else 0.0  # T τ̇ ≈ (T / dt) (τ − τ_prev f_z / f_z,prev)
    force_errors = [float(desired[i][2] - measured[i][2]) for i in feet]  # Python floats: a few feet, where
    heights = [float(placements[i].translation[2]) for i in feet]          # numpy's per-call cost would dominate
    mean_error, mean_height = sum(force_errors) / len(feet), sum(heights) / len(feet)
    deadband = _deadband(gains, rolling)
    twists = {}
    for i, error, height in zip(feet, force_errors, heights):
        vertical = -force_admittance * (error - mean_error) - gains.height_damping * (height - mean_height)
        roll_error, pitch_error = float(measured[i][3] - desired[i][3]), float(measured[i][4] - desired[i][4])
        if lead and previous is not None and previous[i] is not None and previous[i][2] > LEAD_LOAD * weight:
            load = float(measured[i][2] / previous[i][2])  # the torque's change at the load of now: the CoP's move
            roll_error += lead * float(measured[i][3] - load * previous[i][3])
            pitch_error += lead * float(measured[i][4] - load * previous[i][4])
        roll, pitch = tilt_admittance * roll_error, tilt_admittance * pitch_error
        rotation = placements[i].rotation
        twist = np.zeros(6)
        twist[2] = min(max(vertical, -lift), lift)
        twist[3:] = rotation[:, 0] * min(max(roll, -tilt), tilt) + rotation[:, 1] * min(max(pitch, -tilt), tilt)
        # the sole frame's roll and pitch, in world axes
        if gains.level_gain:
            twist[3:] += levelling_rate(rotation[:, 2], floor_normal, gains, dt, deadband)
        twists[i] = twist
    return twists


def levelling_twists(placements, feet, gains, dt, floor_normal=VERTICAL, rolling=False):
    """The levelling alone, for soles whose wrenches a torque-driven mode controls directly (no foot damping): foot
    index → [0; ω] world-aligned at the sole frame (6,) [rad/s], for each of ``feet`` tilted beyond the deadband
    (``gains.edge_deadband`` while ``rolling``). The joint impedance then holds a posture whose ankle has yielded as far
    as the sole rolled, instead of one that levels the body on a tilted sole and presses it further onto its edge."""
    deadband, twists = _deadband(gains, rolling), {}
    for i in feet:
        rate = levelling_rate(placements[i].rotation[:, 2], floor_normal, gains, dt, deadband)
        if rate.any():
            twists[i] = np.concatenate([np.zeros(3), rate])
    return twists


def _deadband(gains, rolling):
    return gains.edge_deadband if rolling and gains.edge_deadband is not None else gains.tilt_deadband


def levelling_rate(normal, floor_normal, gains, dt, deadband=None):
    """The angular velocity (3,) [rad/s], world axes, that turns a sole of normal ``normal`` back flat on a floor of
    normal ``floor_normal``: k_l (1 − θ_0/θ) n × n_f beyond the ``deadband`` θ_0 [rad] (see the module; None:
    ``gains.tilt_deadband``), zero within it; k_l at most LEVEL_PER_TICK / ``dt`` [s]."""
    tilt, deadband = sole_tilt(normal, floor_normal), gains.tilt_deadband if deadband is None else deadband
    if tilt <= deadband:
        return np.zeros(3)
    gain = min(gains.level_gain, LEVEL_PER_TICK / dt) if dt > 0.0 else gains.level_gain
    (nx, ny, nz), (fx, fy, fz) = normal.tolist(), floor_normal.tolist()
    return gain * (tilt - deadband) / math.sin(tilt) * np.array([ny * fz - nz * fy, nz * fx - nx * fz,
                                                                 nx * fy - ny * fx])  # |n × n_f| = sin θ
