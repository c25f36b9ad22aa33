"""The kinematic mode (Choi–Kim): the CoM command of eq. 24 horizontally (and a CoM height P term) resolved through
the CoM Jacobian with the embedded motions (eqs. 14–20) into serial-equivalent joint rates, integrated into position
targets for stiff drives. Eq. 24 feeds the measured ZMP back: without a fresh one, or without a foot on the ground, the
posture is held.

Stiff drives realise the posture whatever ankle torque it takes, so each stance sole's wrench is put under control
too (control.foot_damping): the capture point's feedback (control.dcm_feedback) gives the ZMP the pendulum needs,
within the support polygon; its wrench is distributed over the soles in contact by the QP every mode uses (the
momentum mode's, eq. 38), and each stance sole turns and rises by its measured minus distributed wrench (foot damping,
foot force difference control) as a Cartesian motion of its leg's section in the same resolution. The efforts are the
quasi-static torques of the distributed wrenches (gravity compensation, Kangaroo eq. 44).

With ``dcm_zmp_tracking`` (the default), eq. 24's desired ZMP p_d is that same capture point's desired ZMP, as in the
ZMP compensation of mc_rtc's LIPM stabilizer (its CoM admittance, of eq. 24's form, on the distributed ZMP): pushed,
the posture first resists until the ZMP reaches the support's edge, instead of giving way with the push while the ZMP
lags 0.2 s behind (Choi–Kim's p_d, the reference's LIPM ZMP, ``dcm_zmp_tracking`` false: kangaroo_like fell sideways
from 85 % of its feet's LIPM bound). Eq. 25's conditions bound k_p, k_c whatever p_d is: to them it is an input.
Units: SI.
"""
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from humanoid_balance.control.balance_controller import BalanceController, Plan
from humanoid_balance.control.capture_point import capture_point
from humanoid_balance.control.dcm_feedback import DcmFeedback, zmp_wrench
from humanoid_balance.control.foot_damping import (DAMPING_PER_TICK, EDGE_TILT_DEADBAND, TILT_DEADBAND,
                                                   FootDampingGains, sole_twists)
from humanoid_balance.control.tunables import tunable
from humanoid_balance.control.zmp_com import GRAVITY, balancing_input, slowed

__all__ = ["KinematicBalance", "KinematicGains"]

MAX_AVERAGE_DCM_ERROR = 0.05  # [m] the DCM error's moving average saturates here (mc_rtc's MAX_AVERAGE_DCM_ERROR)
ROLLING_EDGE = 0.15  # of a sole's length and width: a stance sole's CoP this near an edge may be rolling over it
# (kinematic.edge_tilt_deadband); at the floor's EDGE_MARGIN, 25 %, it took in the CoPs that CoM errors of 2 cm shift
# while standing (bench robustness (d): its pushes never settled), at 10 % TALOS's toes tipped 1.76° instead of 1.52°
RETURN_TURN_RATE = 100.0  # [1/s] a foot a push has lifted (no step) turns back level at this rate per radian: the
# position drives hold it to the base, which rocks on the carrying sole, and at swing_gain (20 /s) it lagged and landed
# on its edge (kangaroo_like pushed sideways at 90 % of its feet's LIPM bound: 2.6°, here 1.8°); on torque drives the
# faster turn rocked the carrying sole further (TALOS: 6.9 -> 8.9°), so the other modes keep swing_gain


@dataclass(frozen=True)
class KinematicGains:
    """The kinematic mode's gains (its ZMP and CoM gains k_p, k_c are the robot's, shared: BalancerConfig.zmp_com)."""

    com_height_gain: float = tunable(5.0, "the CoM height's P term", "1/s")
    dcm_gain: float = tunable(1.0, "k_ξ: the rate the capture point's error decays at in the soles' desired wrenches "
                                   "(control.dcm_feedback)", "1/s")
    dcm_zmp_tracking: bool = tunable(True, "eq. 24 tracks the capture point's desired ZMP (in the support polygon, "
                                           "as mc_rtc's ZMP compensation does), so that a push meets the "
                                           "support's edge at once; false: the reference's own LIPM ZMP (Choi-Kim)")
    dcm_integral_gain: float = tunable(0.0, "k_i: the DCM error's moving average in the desired ZMP", "1/s")
    dcm_integral_window: float = tunable(15.0, "the window of the DCM error's moving average", "s")
    cop_admittance: float = tunable(3.0, "foot damping: a stance sole's roll and pitch rate per metre of CoP error "
                                         "under the robot's weight (0: off; control.foot_damping); its loop closes "
                                         "through the measured wrench's filter and the chain's message delays, so "
                                         f"it is at most {DAMPING_PER_TICK:g} rad/m over the control period "
                                         f"({DAMPING_PER_TICK / 0.01:g} at 100 Hz)",
                                    "rad/(s·m)")
    cop_damping_lead: float = tunable(0.05, "foot damping's lead: a stance sole turns by its measured ankle "
                                            "torque's rate at its present load (its CoP's move) times this, as by "
                                            "its error this much later (0: off); it damps the robot's rocking on "
                                            "its stiff legs", "s")
    force_difference_admittance: float = tunable(0.05, "foot force difference control: a stance sole's vertical speed "
                                                      "per weight of normal force error (0: off)", "m/s")
    sole_height_damping: float = tunable(1.0, "foot force difference control: the soles' heights back together",
                                         "1/s")
    max_sole_tilt_rate: float = tunable(0.5, "a stance sole's roll and pitch rates by foot damping, each at most",
                                        "rad/s")
    max_sole_lift_rate: float = tunable(0.05, "a stance sole's vertical speed by force difference control, at most",
                                        "m/s")
    sole_level_gain: float = tunable(50.0, "a stance sole tilted off the floor turns back flat at this rate per "
                                           "radian of tilt (0: off); well below the drives' own bandwidth (TALOS's "
                                           "position drives, 10 ms: at 100 /s the levelling pumped the robot's "
                                           "bounce on its legs and the carrying sole hopped)", "1/s")
    sole_tilt_deadband: float = tunable(TILT_DEADBAND, "the tilt a stance sole keeps without levelling (the "
                                                       "estimate's error: an IMU's bias, 1.25°)", "rad")
    edge_tilt_deadband: float = tunable(EDGE_TILT_DEADBAND, "the tilt a stance sole keeps without levelling while the "
                                                            "robot may be rolling over an edge: a foot has left the "
                                                            "floor, or a stance sole's CoP, distributed or measured, "
                                                            "lies within 15 % of the sole of an edge. 0.75°, within "
                                                            "the estimate's error otherwise (sensor noise and biases "
                                                            "leave a sole up to 1.8° off the floor it stands flat on)",
                                        "rad")


class KinematicBalance(BalanceController):
    """Choi–Kim's CoM/ZMP control with embedded limb motions, on position drives (see the module)."""

    mode = "kinematic"
    Gains = KinematicGains
    lever_rule = True
    return_turn_rate = RETURN_TURN_RATE

    def __init__(self, robot, config, extra_sections=()):
        super().__init__(robot, config, extra_sections)
        gains = self.gains
        self.dcm = DcmFeedback(gains.dcm_gain, gains.dcm_integral_gain, gains.dcm_integral_window,
                               MAX_AVERAGE_DCM_ERROR)
        self.foot_damping = FootDampingGains(gains.cop_admittance, gains.force_difference_admittance,
                                             gains.sole_height_damping, gains.max_sole_tilt_rate,
                                             gains.max_sole_lift_rate, gains.sole_level_gain, gains.sole_tilt_deadband,
                                             gains.cop_damping_lead, gains.edge_tilt_deadband)
        self.controls_soles = bool(gains.cop_admittance or gains.force_difference_admittance or gains.sole_level_gain)
        self.inner_soles = [rectangle.inset(ROLLING_EDGE) for rectangle in self.distribution.rectangles]
        self.sole_twists = {}  # the stance soles' twists of the last update, foot index → [v; ω] (world-aligned)
        self.last_sole_wrenches = None  # the measured sole wrenches of the last update (foot damping's torque rates)

    def plan(self, tick):
        state = tick.state
        if not tick.active or state.zmp is None:
            self.dcm.reset()
            self.sole_twists, self.last_sole_wrenches = {}, None
            wrench = np.array([0.0, 0.0, self.mass * GRAVITY, 0.0, 0.0, 0.0])
            return Plan(wrench, np.zeros(6 + len(self.robot.output_names)), np.zeros(6))
        zmp = self._desired_zmp(tick)
        wrench = zmp_wrench(self.mass, tick.com, zmp, tick.omega)  # the pendulum's on that ZMP
        distribution = self.distribute(tick, wrench)
        return Plan(wrench, self._motion(tick, distribution, zmp), np.zeros(6), distribution=distribution)

    def _desired_zmp(self, tick):
        """The capture point's desired ZMP, brought into the support polygon (2,) [m]."""
        omega, granted = tick.omega, tick.granted
        zmp = self.dcm.desired_zmp(capture_point(tick.com, tick.com_velocity, omega),
                                   capture_point(granted.position, granted.velocity, omega), tick.zmp_reference,
                                   omega, tick.dt)
        return tick.support.polygon.nearest(zmp)

    def _motion(self, tick, distribution, desired_zmp):
        """ν_o: the base twist and output rates of the CoM command's resolution (eqs. 14–20, 24), tracking the
        granted reference: eq. 24 (k_p slowed to the share of ticks computed on) with c_d, ċ_d its position and
        velocity and p_d the capture point's ``desired_zmp`` (or, without dcm_zmp_tracking, the reference's LIPM
        ZMP); the stance soles turning and rising by their wrenches' errors."""
        config, state, granted, com, R_base = self.config, tick.state, tick.granted, tick.com, tick.R_base
        u = np.zeros(3)
        zmp_desired = desired_zmp if self.gains.dcm_zmp_tracking else tick.zmp_reference
        u[:2] = balancing_input(granted.velocity, zmp_desired, state.zmp, granted.position, com,
                                slowed(config.zmp_com, self.computed_share))
        u[2] = granted.velocity[2] + self.gains.com_height_gain * (granted.position[2] - com[2])
        omega = -config.attitude_gain * (R_base @ pin.log3(R_base))  # back to level, world axes
        twists = tick.twists
        stepping = self.stepping is not None and self.stepping.step is not None  # a step under way: the stance
        # sole's CoP is put on its edge towards the capture point (the ankle's share), the swing lands where asked
        self.sole_twists = sole_twists(distribution.wrenches, state.sole_wrenches, tick.placements, tick.active,
                                       self.mass * GRAVITY, self.foot_damping, tick.dt, self.floor.normal,
                                       self.last_sole_wrenches,
                                       self._rolling(tick.active, distribution.wrenches, state.sole_wrenches)) \
            if self.controls_soles and state.sole_wrenches and not stepping else {}
        self.last_sole_wrenches = state.sole_wrenches
        if self.sole_twists:
            twists = dict(twists)
            for foot, twist in self.sole_twists.items():
                name = self.foot_names[foot]
                twists[name] = twist if name not in twists else twists[name] + twist
        resolution = self.resolver.resolve(state.q, u, omega, twists=twists, joint_rates=tick.rates,
                                           rate_bounds=self._range_rates(tick.twists, tick.dt))
        return resolution.output_velocity

    def _rolling(self, active, desired, measured):
        """Whether the robot may be rolling over an edge of its support, so that its soles' tilts are no estimate's
        error: a foot has left the floor (no step lifted it: a push has tipped the robot), or a stance sole's
        ``desired`` (distributed) or ``measured`` wrench puts its CoP within ROLLING_EDGE of an edge (a measured None:
        unknown)."""
        inner = self.inner_soles
        return len(active) < len(desired) or any(
            not inner[foot].holds_cop(desired[foot]) or
            (measured[foot] is not None and not inner[foot].holds_cop(measured[foot])) for foot in active)
