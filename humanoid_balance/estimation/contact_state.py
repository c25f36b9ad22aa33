"""Contact estimation: the contact_estimator node's core.

Per update, every foot's wrench comes either from its F/T sensor (changed into the sole frame) or from
the actuator efforts through the closed chains (Kangaroo eqs. 45–47). Each wrench is low-pass filtered
(2nd-order Butterworth), then gives the foot's centre of pressure, its contact phase (hysteresis on the
normal force) and whether the CoP lies inside the sole; all feet together give the ZMP on the ground
plane (from what each sole can bear: contact_wrench.bearable_wrenches) and the support polygon (convex hull
of the soles in contact). Units: N, N·m, m.
"""
from typing import NamedTuple, Optional

import numpy as np
import pinocchio as pin
from scipy.spatial import ConvexHull, QhullError

from humanoid_balance.estimation.butterworth import ButterworthLowPass
from humanoid_balance.estimation.support_load import SupportLoad
from humanoid_balance.estimation.contact_wrench import (CONTACT, UNKNOWN, ContactHysteresis, bearable_wrenches,
                                                        center_of_pressure, wrench_in_frame, zero_moment_point)
from humanoid_balance.estimation.lift_claims import LiftClaims
from humanoid_balance.estimation.quasi_static_contact import QuasiStaticContactEstimator
from humanoid_balance.model.projected_dynamics import gravity_from_joint_jacobians
from humanoid_balance.model.robot_config import ROBOT_DEFAULTS
from humanoid_balance.model.legs import leg_joints
from humanoid_balance.model.soles import SoleRectangle, free_contact_twists, sole_rectangle

__all__ = ["ContactEstimator", "ContactEstimate", "FootContact", "CONTACT_MODES", "FT_SENSORS", "ACTUATOR_FORCES"]

FT_SENSORS, ACTUATOR_FORCES = "ft_sensors", "actuator_forces"
CONTACT_MODES = (FT_SENSORS, ACTUATOR_FORCES)  # where the feet's wrenches come from: F/T sensors, or actuator forces


class FootContact(NamedTuple):
    wrench: Optional[np.ndarray]      # filtered [f; τ] in the sole frame about its origin, None if unknown
    cop_sole: Optional[np.ndarray]    # CoP (x, y) in the sole frame, None below the CoP force threshold
    state: int                        # CONTACT, AERIAL or UNKNOWN
    sole_placement: pin.SE3           # sole frame in the world
    rectangle: SoleRectangle          # the sole's contact rectangle, in the sole frame

    def cop_world(self):
        """The CoP in the world frame [m], None without one — for display, away from the estimation path."""
        return None if self.cop_sole is None else self.sole_placement.act(np.array([*self.cop_sole, 0.0]))

    def cop_inside(self):
        """Whether the CoP lies within the sole rectangle, None without one — for diagnostics."""
        return None if self.cop_sole is None else bool(self.rectangle.contains(*self.cop_sole))


class ContactEstimate(NamedTuple):
    feet: tuple                       # FootContact per foot, in the order of the constructor's ``soles``
    zmp: Optional[np.ndarray]         # world frame, on the ground plane; None without load
    ground: float                     # height of the ground plane: the mean sole height of the feet in contact [m]
    normal_force: float               # total f_z the known feet bear (a pulling reading as none) [N]

    def phases(self):
        """Per foot, whether it is in contact, if every foot's phase is known; None otherwise (the state estimator
        then takes the lowest soles)."""
        states = [foot.state for foot in self.feet]
        return None if UNKNOWN in states else tuple(state == CONTACT for state in states)


SUPPORT_CUTOFF = 20.0
"""Low-pass cutoff of the CoM's specific force [Hz]: fast enough to see a flight of a few hundred ms, slow enough
for the drives' shaking, which the relative CoM's motion cancels in it (estimation/support_load.py)."""


class ContactEstimator:
    """Foot wrenches, CoPs, ZMP and contact phases of a floating-base :class:`RobotModel`.

    Args:
        soles: sole frame names, one per foot.
        mode: ``ft_sensors`` or ``actuator_forces``.
        cutoff, sample_rate: low-pass cutoff [Hz] (paper: 5 Hz) and the update rate it is designed for until the
            measurements' times tell the real one [Hz].
        contact_on, contact_off: hysteresis thresholds on the normal force [N].
        min_cop_force: normal force below which a foot's CoP is undefined [N].
        rectangles: the soles' contact rectangles (SoleRectangle per sole), or None to read them from the
            feet's collision boxes.
        imu_frame: the frame of the accelerometer :meth:`update` may be given readings of (default: the root
            link), rigidly mounted at the base's origin.
    """

    def __init__(self, robot, soles, mode=FT_SENSORS, cutoff=ROBOT_DEFAULTS["cutoff_frequency"], sample_rate=500.0,
                 contact_on=40.0, contact_off=20.0, min_cop_force=5.0, efforts_are_motor_torques=False, rectangles=None,
                 imu_frame=None):
        if mode not in (FT_SENSORS, ACTUATOR_FORCES):
            raise ValueError(f"mode must be '{FT_SENSORS}' or '{ACTUATOR_FORCES}', got '{mode}'")
        self.robot = robot
        self.model = robot.model
        self.mode = mode
        self.soles = tuple(soles)
        self.sole_ids = [robot.frame_id(name) for name in self.soles]
        self.rectangles = list(rectangles) if rectangles else [sole_rectangle(robot, name) for name in self.soles]
        self.rectangle_bounds = np.array(self.rectangles, dtype=float)  # (feet, 4): x_min, x_max, y_min, y_max
        self.lowpass = ButterworthLowPass(cutoff, sample_rate, 6 * len(self.soles))  # every foot's wrench at once
        self.known = np.zeros(len(self.soles), dtype=bool)  # feet whose wrench the last update knew
        self.all_known = np.ones(len(self.soles), dtype=bool)  # actuator_forces mode estimates every foot's wrench
        self.phases = [ContactHysteresis(contact_on, contact_off) for _ in self.soles]
        self.min_cop_force = min_cop_force
        free_twists = [free_contact_twists(len(leg_joints(robot, sole)), rectangle, sole)
                       for sole, rectangle in zip(self.soles, self.rectangles)]
        self.quasi_static = (QuasiStaticContactEstimator(robot, self.soles, efforts_are_motor_torques, free_twists)
                             if mode == ACTUATOR_FORCES else None)
        # from actuator forces the kinematics are the quasi-static chain's linearization pass: one pass, one Data
        self.data = self.quasi_static.chain.data if self.quasi_static else robot.model.createData()
        self.support = (SupportLoad(robot, imu_frame, SUPPORT_CUTOFF, sample_rate) if mode == ACTUATOR_FORCES
                        else None)
        self.airborne = False  # the support's share was 0 at the last update
        self.not_lifted = np.zeros(len(self.soles), dtype=bool)
        self.lifted = self.not_lifted  # the feet taken as lifted at the last update
        self.lift_claims = LiftClaims([rectangle.corners() for rectangle in self.rectangles], 1.0 / sample_rate)

    def configuration(self, joint_positions, base_position, base_quaternion_xyzw):
        """Pinocchio configuration from the base pose and every joint (``robot.joint_names`` order)."""
        return np.concatenate([base_position, base_quaternion_xyzw, joint_positions])

    def update(self, q, actuator_efforts=None, sensor_wrenches=None, time=None, specific_force=None, lifted=None):
        """One estimate at configuration ``q``.

        Args:
            lifted: per foot, whether the controller says it has lifted it for a step (None: none): once its sole
                has risen (:mod:`~humanoid_balance.estimation.lift_claims`), such a foot is aerial and, from
                actuator forces, carries no wrench (the other feet carry the weight); its wrench and the others'
                start over from their new values when it is taken as lifted and when it is put down.
            specific_force: ``actuator_forces`` mode, with ``time``: the accelerometer's reading in its own frame
                [m/s²], from which the share of the weight the supports carry follows (0 in the air: no
                contact); None: the robot is taken as supported.
            time: the measurement's time [s]: the low-pass follows the rate the estimates really come at (None:
                they come at ``sample_rate``).
            actuator_efforts: ``actuator_forces`` mode, in ``robot.actuated_names`` order [N or N·m].
            sensor_wrenches: ``ft_sensors`` mode, per foot ``(sensor_frame, [f; τ])`` or None when unknown
                (e.g. the topic went silent); None: no foot's reading is known.

        Without the readings of its mode (``actuator_efforts`` or ``sensor_wrenches`` None), every foot's contact is
        unknown.

        Raises:
            ValueError: ``sensor_wrenches`` names more or fewer feet than the estimator has.
        """
        model, data = self.model, self.data
        if self.mode == ACTUATOR_FORCES:
            self.quasi_static.chain.linearize(q, kinematics=True)  # its J_m follows (eq. 66b)
        else:
            pin.forwardKinematics(model, data, q)
        sole_placements = [pin.updateFramePlacement(model, data, frame).copy() for frame in self.sole_ids]
        lifted = self.lift_claims.update(self.not_lifted if lifted is None else np.asarray(lifted, dtype=bool),
                                         sole_placements, time)
        if self.mode == ACTUATOR_FORCES:
            J_c = np.vstack([pin.getFrameJacobian(model, data, frame, pin.LOCAL) for frame in self.sole_ids])
            gravity = gravity_from_joint_jacobians(model, data)
            if specific_force is not None and time is not None:
                self.support.update(data, np.asarray(specific_force, dtype=float), time)
            support = self.support.fraction()
            if actuator_efforts is None:
                samples, known = np.zeros((len(self.soles), 6)), ~self.all_known
            else:
                samples = self.quasi_static.estimate(q, actuator_efforts, J_c, support, gravity,
                                                     ~lifted if lifted.any() else None)  # (feet, 6)
                known = self.all_known
            # at lift-off and touchdown the wrenches start over from their new value, without the low-pass's lag
            airborne = support == 0.0
            restart_all, self.airborne = airborne != self.airborne, airborne
        else:
            restart_all = False
            if sensor_wrenches is None:
                sensor_wrenches = (None,) * len(self.soles)
            elif len(sensor_wrenches) != len(self.soles):
                raise ValueError(f"sensor_wrenches: {len(sensor_wrenches)} readings for {len(self.soles)} feet")
            sensors = [None if reading is None else pin.updateFramePlacement(model, data, model.getFrameId(reading[0]))
                       for reading in sensor_wrenches]
            raw = [None if reading is None else wrench_in_frame(placement.actInv(sensor), reading[1])
                   for placement, sensor, reading in zip(sole_placements, sensors, sensor_wrenches)]
            known = np.array([wrench is not None for wrench in raw])
            samples = np.array([np.zeros(6) if wrench is None else wrench for wrench in raw])
        restart_all |= bool((lifted != self.lifted).any())
        self.lifted = lifted
        entering = known & ~self.known
        restart = np.repeat(entering, 6) | restart_all if restart_all or entering.any() else None
        filtered = self.lowpass.update(samples.reshape(-1), restart=restart, time=time).reshape(-1, 6)
        self.known = known

        feet, total = [], None
        bearable = bearable_wrenches(filtered, self.rectangle_bounds)  # the ZMP's: never off the soles
        for foot_known, wrench, borne, placement, rectangle, phase, foot_lifted in zip(
                known, filtered, bearable, sole_placements, self.rectangles, self.phases, lifted):
            if not foot_known:
                phase.update(None)
                feet.append(FootContact(None, None, UNKNOWN, placement, rectangle))
                continue
            feet.append(FootContact(wrench, center_of_pressure(wrench, self.min_cop_force),
                                    phase.update(wrench[2], foot_lifted), placement, rectangle))
            world = placement.act(pin.Force(borne))
            total = world if total is None else total + world
        if total is None:
            return ContactEstimate(tuple(feet), None, 0.0, 0.0)
        on_ground = ([foot for foot in feet if foot.state == CONTACT]
                     or [foot for foot in feet if foot.wrench is not None])
        ground = float(sum(foot.sole_placement.translation[2] for foot in on_ground) / len(on_ground))
        total = total.vector
        return ContactEstimate(tuple(feet), zero_moment_point(total, ground, self.min_cop_force), ground,
                               float(total[2]))

    def support_polygon(self, estimate):
        """Convex hull of the soles in contact, (k, 3) counter-clockwise world points on the ground plane — for
        display, away from the estimation path."""
        corners = [foot.sole_placement.act(corner)[:2] for foot in estimate.feet
                   if foot.state == CONTACT for corner in foot.rectangle.corners()]
        if len(corners) < 3:
            return np.zeros((0, 3))
        corners = np.array(corners)
        try:
            hull = corners[ConvexHull(corners).vertices]  # counter-clockwise in 2-D
        except QhullError:
            return np.zeros((0, 3))
        return np.column_stack([hull, np.full(len(hull), estimate.ground)])
