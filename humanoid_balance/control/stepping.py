"""Steps in the balance: the steps a user asks for, and a recovery step when the capture point leaves the support
polygon (:mod:`humanoid_balance.control.capture_point` plans where).

A step asked for (:meth:`Stepping.request`, standing on both feet, its target within the :class:`StepRegion` of the
other foot) first puts the CoM reference over the stance sole's centre (the governor moves it there at its speed and
acceleration limits, the CoM kept over the stance sole only); once the CoM is within SHIFTED of it and slower than
SETTLED, the foot lifts. A recovery step (``stepping``: standing on both feet, the capture point ξ = c + ċ/ω beyond the
support polygon's edge by more than ``step_trigger``; or a push has tipped the robot onto one foot, below) lifts at
once, and its landing point follows ξ through the swing (step adjustment: re-planned every tick for the time left, as
the DCM step adaptation of Englsberger et al. and IHMC's ICP control do). The swing foot leaves the balance's contacts
(the support section and the wrench distribution are the stance foot's; the contact estimator is told,
balance/<foot>/lifted, and reads it aerial) and follows a
:class:`~humanoid_balance.control.capture_point.SwingTrajectory` as a C-busy section (Choi–Kim eqs. 14–20), its pose
error fed back at ``swing_gain``. Past the trajectory's end the sole goes on down at LANDING_SPEED until it touches: in
the swing's second half, its lowest corner within TOUCHDOWN_CLEARANCE of the floor it left, or of the stance sole's
lowest corner or below it (a sole pressed on down there lifts the robot off its stance foot) — a lifted foot reads
aerial, so its load cannot tell —, or LANDING_TIME has passed. Then both feet carry the robot again, standing level
beside each other if it touched (the height a push must lift one by to have tipped the robot is counted from there): the
foot put down counts as in contact until the contact estimator reads its load (LOADING_TIME at most), its sole pressed
down at PRESS_SPEED meanwhile (PRESS_DEPTH at most) — a sole the kinematics put on the ground may hover a millimetre
above it, or touch without load, and a load the position drives do not make never comes —, the CoM reference moves with
the feet's midpoint and its approach starts from the measured CoM. A capture point still outside asks for the next
recovery step, up to ``max_steps`` in a row. A step asked for whose swing leg stops following its trajectory (its joints
or actuators at their limits: the sole SWING_TOLERANCE from where it should be) puts its foot straight down where it is,
the step cut short and counted (a recovery step goes on: its target moves with ξ, and a foot put down short of it does
not catch the robot).

A push may tip the robot onto one foot: the other's sole, which no step lifted, rises more than TIPPED_CLEARANCE
above the height it had beside it when both last stood (on a flat floor or not). That foot no longer carries the
robot, whatever its efforts read — a position-controlled leg pressing towards a floor it has left reads as load —,
until it is back within TOUCHDOWN_CLEARANCE: the balance's wrenches are the other's, and the contact estimator is
told it is lifted, so that the ZMP is the carrying sole's. The foot takes a recovery step where ξ goes; or, when it is
not to step (steps are off, or ``max_steps`` were taken), it goes back down where it stood beside the other when
both last stood flat (at the start, or when the last step landed; moved with the carrying sole if that has slid or
turned since), at ``swing_gain`` up to RETURN_SPEED, turning back level at the mode's turn rate (the kinematic
mode's position drives hold the foot to the base, which rocks on the carrying sole: it turns faster). (Its home
followed it before, wherever it touched: a foot skimming the floor as the robot rocked came down 3-4 cm inwards after
a sideways push.) The CoM reference stays where it was, over both feet (``over``): the robot is to come back onto
them. (Restarted from the CoM over the carrying sole instead, it led the robot on outwards: kangaroo_like pushed
sideways at 90 % of its feet's LIPM bound ended with its CoM 1.3 cm inside that sole's outer edge, and fell or
rocked.) Units: SI.
"""
from typing import NamedTuple, Optional

import numpy as np
import pinocchio as pin

from humanoid_balance.control.capture_point import (StepRegion, SwingTrajectory, capture_point, heading,
                                                    plan_step, stance_frame)
from humanoid_balance.control.foot_damping import LEVEL_PER_TICK
from humanoid_balance.errors import HumanoidBalanceError

__all__ = ["Stepping", "StepTick", "StepRequestError", "LandedShort", "LANDED_SHORT", "step_region", "LANDING_SPEED", "LANDING_TIME"]

LANDING_SPEED = 0.1    # [m/s] the sole's descent after the trajectory's end, until it touches
LANDING_TIME = 0.3     # [s] after the trajectory's end the foot counts as landed even if no contact is read
TOUCHDOWN_AFTER = 0.5  # fraction of the swing before which a sole near the ground is lifting off, not landing
TOUCHDOWN_CLEARANCE = 0.002  # [m] a swing sole's lowest corner this close to the floor it left has landed
LOADING_TIME = 2.0     # [s] a foot put down counts as in contact until the contact estimator says so, this long at most
PRESS_SPEED, PRESS_DEPTH = 0.02, 0.01  # [m/s, m] meanwhile its sole is pressed down, this far at most
STEP_REACH = 0.4       # of the legs' length: how far ahead, behind and outwards a recovery step goes
INWARD_FRACTION = 0.8  # of the standing width: the nearest a swing sole lands to the stance sole
TIPPED_CLEARANCE = 0.01  # [m] a sole no step lifted risen this high beside the other: the robot has tipped onto one
SWING_TOLERANCE = 0.05  # [m] a step asked for whose sole is this far from its trajectory is put down where it is
PUT_DOWN_TIME = 0.2    # [s] ... in this time
SOLE_STILL_SPEED, SOLE_STILL_TIME = 0.01, 0.1  # [m/s, s] a sole put down this slow this long stands where it landed
RETURN_SPEED = 0.3     # [m/s] a foot in the air that no step lifted goes back down where it stood, this fast at most
SHIFTED = 0.015        # [m] a commanded step lifts its foot once the CoM is this close over the stance sole's centre
SETTLED = 0.1          # [m/s] ... and slower than this


PRESS = np.array([0.0, 0.0, -PRESS_SPEED, 0.0, 0.0, 0.0])  # the sole's twist while it is pressed down


class StepRequestError(HumanoidBalanceError):
    """A step the robot cannot take now or cannot reach; the message says why."""


LANDED_SHORT = "landed short of its target: the swing leg could not follow"


class LandedShort(NamedTuple):
    """A step put down where the swing leg stopped following, short of its target (world frame [m])."""

    foot: str
    target: np.ndarray   # (3,) where it was asked to land
    landing: np.ndarray  # (3,) where its sole came down


class StepTick(NamedTuple):
    active: tuple                  # the feet the balance stands on this tick
    twists: dict                   # the swing foot's name → its sole's twist [v; ω], world-aligned [m/s, rad/s]
    shift: np.ndarray              # (3,) the CoM reference's displacement with the feet since the start [m]
    capture_point: np.ndarray      # ξ (2,) [m]
    target: Optional[pin.SE3]      # the swing sole's landing placement (None: standing)
    reset_reference: bool          # a foot has landed: the CoM reference's approach starts from the measured CoM
    over: Optional[tuple]          # the feet the CoM reference is to stay over (None: those in contact)


class Stepping:
    """The step phases of one balance controller (see the module).

    Args:
        feet: the Foot tuples (names, soles); rectangles: their SoleRectangles.
        config: the BalancerConfig (step_trigger, step_duration, step_height, swing_gain, max_steps,
            commanded_step_duration).
        region: the StepRegion each swing foot may land in, relative to the stance foot (None: set it before the
            first update, :func:`step_region`).
    """

    def __init__(self, feet, rectangles, config, region, turn_rate=None):
        self.names = [foot.name for foot in feet]
        self.turn_rate = turn_rate  # [1/s] a foot in the air that no step lifted turns back level (None: swing_gain)
        self.rectangles = list(rectangles)
        self.sole_corners = [rectangle.corners() for rectangle in self.rectangles]  # (4, 3) each, sole frame [m]
        self.config, self.region = config, region
        self.step = None          # the Step under way
        self.swing = None         # its SwingTrajectory, from lift-off (None while the weight shifts)
        self.elapsed = 0.0        # since lift-off [s]
        self.in_a_row = 0         # recovery steps since the robot last stood
        self.taken = 0            # steps taken since the start
        self.cut_short = 0        # of them, put down where the swing leg stopped following (SWING_TOLERANCE)
        self.cut = None           # the target of the step under way when it was cut short (pin.SE3; None: not cut)
        self.landed_short = None  # a cut step that has landed: LandedShort (None: none this tick)
        self.settling = None      # a cut step landing: [foot, target, where its sole was, how long it has been still]
        self.floor = 0.0          # height of the floor the swing foot left: the stance sole's lowest corner [m]
        self.lift_off = None      # where the swing sole was at lift-off (3,) [m]
        self.shift = np.zeros(3)  # the CoM reference's displacement with the feet [m]
        self.requested = None     # (swing foot, target) asked for (request), begun at the next tick on both feet
        self.recovery = False     # whether the step under way is a recovery step (no weight shift before it)
        self.landed, self.loading = None, 0.0  # the foot just put down, and how long it counts as in contact [s]
        self.stood = [None] * len(self.names)  # per foot, its sole's placement when both last stood (first, or landed)
        self.level = None         # how high the first foot's sole stood above the second's when both last stood [m]
        self.tipped = None        # the foot a push has lifted (no step): the robot stands on the other (None: none)
        self.rise = 0.0           # how much higher the first foot's sole is beside the second's than at ``level`` [m]

    @property
    def phase(self):
        if self.step is None:
            return "standing"
        if self.swing is None:
            return "weight shift"
        return "swing" if self.elapsed < self.step.duration else "landing"

    @property
    def recovering(self):
        """Whether a recovery step may be taken now: ``stepping`` on, fewer than ``max_steps`` in a row."""
        return self.config.stepping and self.in_a_row < self.config.max_steps

    @property
    def lifted(self):
        """Per foot, whether it does not carry the robot: swinging, landing, or tipped up by a push (tuple of bool)."""
        lifted = self.tipped if self.swing is None else self.step.swing
        return tuple(index == lifted for index in range(len(self.names)))

    def request(self, foot, target, placements, active):
        """Ask for a step of ``foot`` (name) to ``target`` (pin.SE3 of its sole, world); StepRequestError when it is
        not standing on both feet, already stepping, or the target is outside the StepRegion or across the other
        foot."""
        if foot not in self.names:
            raise StepRequestError(f"no foot '{foot}' (feet: {', '.join(self.names)})")
        if self.step is not None or self.requested is not None:
            raise StepRequestError("a step is under way")
        if len(active) != len(self.names) or len(self.names) != 2:
            raise StepRequestError("not standing on both feet")
        swing = self.names.index(foot)
        stance = placements[1 - swing]
        offset = self._offset(stance, placements[swing], target.translation)
        if not np.allclose(self.region.clamp(offset), offset, atol=1e-9):
            raise StepRequestError(f"the target is {offset[0]:+.3f} m ahead and {offset[1]:+.3f} m out from the "
                                   f"stance foot, outside the step region (ahead {-self.region.backward:+.2f} to "
                                   f"{self.region.forward:+.2f} m, out {self.region.inward:.2f} to "
                                   f"{self.region.outward:.2f} m)")
        self.requested = (swing, _flat(target, stance.translation[2]))

    def update(self, dt, com, com_velocity, omega, placements, active, polygon, reference):
        """The tick's :class:`StepTick`: ``active`` the feet the contact estimator says are in contact, ``polygon``
        their support polygon (None: none), ``placements`` every sole's pin.SE3, ``reference`` the CoM reference
        asked for [m]."""
        xi = capture_point(com, com_velocity, omega)
        self.landed_short = self._settled(dt, placements)
        active = self._carrying(placements, active)
        return self._tick(dt, xi, com, com_velocity, omega, placements, active, polygon, reference)

    def _tick(self, dt, xi, com, com_velocity, omega, placements, active, polygon, reference):
        """:meth:`update` once ``active`` are the feet that carry the robot."""
        if self.stood[0] is None and self.step is None and len(active) == len(self.names) and \
                abs(self.rise) < TOUCHDOWN_CLEARANCE:  # where the feet stand, flat beside each other
            self.stood = list(placements)
        if self.step is None and len(active) == len(self.names) == 2:
            if self.requested is not None:  # the weight goes onto the stance foot first
                swing, target = self.requested
                self.requested = None
                self.step = plan_step(xi, placements, self.rectangles, omega, self.config.commanded_step_duration,
                                      self.region, swing)._replace(target=target)
                self.recovery = False
            elif self.recovering and polygon is not None and polygon.depth(xi) < -self.config.step_trigger:
                self._lift(plan_step(xi, placements, self.rectangles, omega, self.config.step_duration,
                                     self.region), placements)
                self.recovery = True
                self.in_a_row += 1
            elif polygon is not None and polygon.depth(xi) >= 0.0:
                self.in_a_row = 0
        elif self.step is None and self.landed is None and self.tipped is not None and self.recovering:
            # a push has tipped the robot onto one foot: the other, in the air already, steps where ξ goes
            self._lift(plan_step(xi, placements, self.rectangles, omega, self.config.step_duration, self.region,
                                 self.tipped), placements)
            self.tipped = None
            self.recovery = True
            self.in_a_row += 1
        step = self.step
        if step is None:
            if self.landed is not None:  # put down: it carries the robot before the contact estimator says so
                foot, self.loading = self.landed, self.loading - dt
                if foot in active or self.loading <= 0.0:
                    self.landed = None
                else:
                    active = tuple(sorted(active + (foot,)))
                    if LOADING_TIME - self.loading < PRESS_DEPTH / PRESS_SPEED:
                        return StepTick(active, {self.names[foot]: PRESS}, self.shift, xi, None, False, None)
            over = None if self.tipped is None or self.recovering else tuple(range(len(self.names)))
            return StepTick(active, self._returns(placements, active, dt), self.shift, xi, None, False, over)
        if self.swing is None:  # weight shift: the CoM reference over the stance sole's centre, then lift-off
            centre = sole_centre(placements[step.stance], self.rectangles[step.stance])
            shift = np.r_[centre - np.asarray(reference)[:2], 0.0]
            if np.linalg.norm(np.asarray(com)[:2] - centre) < SHIFTED and np.linalg.norm(com_velocity[:2]) < SETTLED:
                self._lift(step, placements)
            return StepTick(active, {}, shift, xi, step.target, False, (step.stance,))
        self.elapsed += dt
        sole = placements[step.swing]
        lowest = self._lowest(placements, step.swing)  # above the floor it left, or pressed below the stance sole
        clearance = min(lowest - self.floor, lowest - self._lowest(placements, step.stance))
        touching = self.elapsed >= TOUCHDOWN_AFTER * step.duration and clearance < TOUCHDOWN_CLEARANCE
        if touching or self.elapsed >= step.duration + LANDING_TIME:
            self._land(placements, touching)
            return StepTick(active, {}, self.shift, xi, None, True, None)
        if self.recovery and self.elapsed < step.duration:  # where ξ will be at touchdown, as it goes now
            replanned = plan_step(xi, placements, self.rectangles, omega, step.duration - self.elapsed, self.region,
                                  step.swing)
            target = pin.SE3(replanned.target.rotation, np.r_[replanned.target.translation[:2],
                                                                self.floor])  # on the floor it left
            step = self.step = replanned._replace(target=target, duration=step.duration)
            self.swing.target = target
        desired, twist = self.swing.at(self.elapsed)
        if not self.recovery and self.swing.height > 0.0 and \
                np.linalg.norm(desired.translation[:2] - sole.translation[:2]) > SWING_TOLERANCE:
            step = self._put_down(sole)  # the leg cannot follow: down where it is
            desired, twist = self.swing.at(self.elapsed)
        if self.elapsed > step.duration:  # on down until it touches
            desired = pin.SE3(desired.rotation, desired.translation - [0.0, 0.0, LANDING_SPEED *
                                                                       (self.elapsed - step.duration)])
            twist = twist - [0.0, 0.0, LANDING_SPEED, 0.0, 0.0, 0.0]
        feedback = np.r_[desired.translation - sole.translation, pin.log3(desired.rotation @ sole.rotation.T)]
        twist = twist + self.config.swing_gain * feedback
        shift = self.shift if self.recovery else \
            np.r_[sole_centre(placements[step.stance], self.rectangles[step.stance]) - np.asarray(reference)[:2], 0.0]
        return StepTick(tuple(i for i in active if i != step.swing), {self.names[step.swing]: twist}, shift, xi,
                        step.target, False, (step.stance,))

    def abort(self):
        """Forget the step under way, any asked for and where the feet stood (the posture is held from the measured
        one)."""
        self.step = self.swing = self.requested = self.landed = self.level = self.tipped = self.settling = None
        self.stood = [None] * len(self.names)

    def _carrying(self, placements, active):
        """``active`` less the foot a push has tipped the robot off (see the module), which :attr:`tipped` names."""
        self.rise = 0.0
        if len(self.names) != 2 or self.step is not None or self.landed is not None:
            return active
        height = self._lowest(placements, 0) - self._lowest(placements, 1)
        if self.level is None:
            if len(active) == 2:
                self.level = height
            return active
        rise = self.rise = height - self.level
        if self.tipped is None and abs(rise) > TIPPED_CLEARANCE:
            self.tipped = 0 if rise > 0.0 else 1
        elif self.tipped is not None and abs(rise) < TOUCHDOWN_CLEARANCE:
            self.tipped = None
        return active if self.tipped is None else tuple(foot for foot in active if foot != self.tipped)

    def _returns(self, placements, active, dt):
        """Foot name → its sole's twist back down where it last stood, for each foot in the air that no step lifted
        while another carries the robot (see the module): horizontally to where it stood beside the carrying sole
        (moved as that sole has moved since, in the horizontal and in yaw: a sole that slid, or an estimate that
        drifted, carries the other's home along), down by its rise beside the other; turned back level at
        ``turn_rate``, at most LEVEL_PER_TICK of its error per tick of ``dt`` [s] (or at swing_gain)."""
        anchor = active[0] if active else None
        if anchor is None or len(active) == len(self.stood) or self.recovering or self.stood[anchor] is None:
            return {}  # none in the air, or none carrying the robot, or a foot in the air steps (a tipped robot)
        moved = _flat(placements[anchor]) * _flat(self.stood[anchor]).inverse()
        turn = min(self.turn_rate, LEVEL_PER_TICK / dt) if self.turn_rate and dt > 0.0 else self.config.swing_gain
        twists = {}
        for foot, stood in enumerate(self.stood):
            if foot in active:
                continue
            home, sole = moved * stood, placements[foot]
            down = self.rise if foot == 0 else -self.rise  # to the height it stood at beside the other
            error = np.r_[home.translation[:2] - sole.translation[:2], -down,
                          pin.log3(home.rotation @ sole.rotation.T)]
            twist = self.config.swing_gain * error
            twist[3:] = turn * error[3:]
            speed = np.linalg.norm(twist[:3])
            if speed > RETURN_SPEED:
                twist[:3] *= RETURN_SPEED / speed
            twists[self.names[foot]] = twist
        return twists

    def _lift(self, step, placements):
        self.step, self.elapsed = step, 0.0
        self.floor = self._lowest(placements, step.stance)
        self.lift_off = placements[step.swing].translation.copy()
        self.swing = SwingTrajectory(placements[step.swing], step.target, step.duration, self.config.step_height)

    def _settled(self, dt, placements):
        """The LandedShort of a cut step once its sole has stood still for SOLE_STILL_TIME (a sole put down can still be
        pressed into place), else None."""
        if self.step is not None:  # stepping again
            self.settling = None
        if self.settling is None:
            return None
        foot, target, before, still = self.settling
        now = placements[foot].translation
        still = still + dt if np.linalg.norm(now - before) <= SOLE_STILL_SPEED * dt else 0.0
        self.settling = [foot, target, now.copy(), still]
        if still < SOLE_STILL_TIME:
            return None
        self.settling = None
        return LandedShort(self.names[foot], target, now.copy())

    def _lowest(self, placements, foot):
        """The height of the lowest corner of ``foot``'s sole [m]."""
        placement = placements[foot]
        return float((self.sole_corners[foot] @ placement.rotation[2]).min() + placement.translation[2])

    def _put_down(self, sole):
        """Cut the step short: the swing sole (pin.SE3) straight down onto the floor in PUT_DOWN_TIME; the Step."""
        target = _flat(sole, self.floor)
        self.cut = self.step.target
        self.step, self.elapsed, self.recovery = self.step._replace(target=target, duration=PUT_DOWN_TIME), 0.0, False
        self.swing = SwingTrajectory(sole, target, PUT_DOWN_TIME, 0.0)
        self.cut_short += 1
        return self.step

    def _land(self, placements, touching):
        """Both feet carry the robot: the CoM reference moves with their midpoint. ``touching``: the swing sole has
        touched the floor it left, where the stance sole stands (else their level is measured once both carry)."""
        step = self.step
        before = (self.lift_off + placements[step.stance].translation) / 2
        after = (placements[step.swing].translation + placements[step.stance].translation) / 2
        self.shift = self.shift + np.r_[(after - before)[:2], 0.0]
        self.landed, self.loading = step.swing, LOADING_TIME
        if self.cut is not None:  # where it comes down is reported once it stands still there
            self.settling = [step.swing, self.cut.translation.copy(), placements[step.swing].translation.copy(), 0.0]
            self.cut = None
        self.stood = list(placements)
        self.level = 0.0 if touching else None  # both on the floor the swing foot left
        self.step, self.swing = None, None
        self.taken += 1

    def _offset(self, stance, swing, target):
        """``target`` relative to the ``stance`` sole, in its frame turned to the ``swing`` sole's side (2,) [m]."""
        _, turn, side = stance_frame(stance, swing)
        return turn.T @ (np.asarray(target)[:2] - stance.translation[:2]) * [1.0, side]


def _flat(placement, height=0.0):
    """``placement`` (pin.SE3) laid flat at ``height`` [m]: its horizontal position and yaw only."""
    return pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, heading(placement.rotation)),
                   np.r_[placement.translation[:2], height])


def sole_centre(placement, rectangle):
    """The centre of a sole rectangle in the world's xy plane (2,) [m]."""
    return placement.act(rectangle.centre())[:2]


def step_region(config, leg_reach, placements):
    """The configured StepRegion, or one from the legs: ahead and behind up to STEP_REACH of their length, outwards
    the standing width plus as much, inwards no nearer than INWARD_FRACTION of the standing width; and that width."""
    width = float(np.linalg.norm(placements[0].translation[:2] - placements[1].translation[:2]))
    if config.step_region is not None:
        return StepRegion(*config.step_region, width)
    return StepRegion(STEP_REACH * leg_reach, STEP_REACH * leg_reach, width + STEP_REACH * leg_reach,
                      INWARD_FRACTION * width, width)
