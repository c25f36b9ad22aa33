"""Plausibility of the state a node reads (issue 54, item 1): a reading that implies what the robot cannot have done
since the last one it accepted is not a measurement, whatever its format — a base that moves 0.9 m in one tick, a
joint beyond its speed limit or its range, a ZMP outside every sole in contact, a foot pushing with many times the
robot's weight.

:class:`MotionGate` bounds a quantity's rate: a reading more than ``rate · dt + tolerance`` away from the last one
accepted (``dt`` between their stamps) is implausible. A sustained disagreement — readings that stay away from the
last accepted one, yet agree with each other, for ``persistence`` seconds of their stamps (the robot really was
moved: a reset, a relocalisation) — is taken over, and the node says so; readings that do not agree with each other
(noise, a fuzzer) are never taken over. :class:`ChangeGate` bounds how often a state can change to a value (a foot
lifted again sooner than any step lifts and puts it down). :class:`RangeGate` bounds a joint's jump beyond its URDF
range, whatever time the rate bound gives (a receiver that missed readings for a while gives it time enough to let
any step in). One reading alone is bounded by :func:`weight_ratio` (a foot's force against the robot's weight) and
by the support polygon (the balancer's ZMP margin). Units: SI.
"""
import math
from typing import NamedTuple

import numpy as np
import pinocchio as pin

__all__ = ["ChangeGate", "MotionGate", "RangeGate", "GateVerdict", "PERSISTENCE", "base_bounds", "joint_speed_bounds",
           "pose_difference", "rotation_difference", "weight_ratio"]

PERSISTENCE = 0.5
"""[s of stamps] how long readings must disagree with the last accepted one, and agree with each other, before they
are taken over (the ``implausible_takeover_time`` parameter)."""
MIN_RUN = 3
"""Readings of a disagreement at least, whatever their stamps, before it is taken over."""


class GateVerdict(NamedTuple):
    accepted: bool     # the reading is the quantity's new value
    taken_over: bool   # accepted after a sustained disagreement (a reset, a relocalisation): to be reported
    component: int     # the component furthest beyond its bound (when not accepted, or taken over)
    step: float        # its difference from the last accepted value
    allowed: float     # and what it could have moved since


def absolute_difference(a, b):
    return np.abs(np.asarray(a, dtype=float) - b)


def rotation_difference(a, b):
    """The angle between two rotation matrices [rad], as a one-component array."""
    return np.array([np.linalg.norm(pin.log3(a.T @ b))])


def pose_difference(a, b):
    """Between two poses (position [m], rotation matrix): |Δx|, |Δy|, |Δz| [m] and the angle between them [rad]."""
    return np.append(np.abs(a[0] - b[0]), rotation_difference(a[1], b[1]))


class MotionGate:
    """Readings of a quantity whose components move at most ``rate`` per second (scalar or per component; inf: any
    step), give or take ``tolerance``; ``difference(a, b)``: the per-component distance between two readings (default
    |a − b|)."""

    def __init__(self, rate, tolerance, persistence=PERSISTENCE, difference=absolute_difference):
        self.rate, self.tolerance = np.asarray(rate, dtype=float), np.asarray(tolerance, dtype=float)
        self.persistence, self.difference = persistence, difference
        self.value, self.time = None, None          # the last accepted reading and its stamp [s]
        self.clock = None                           # the receiver's clock when it was accepted [s]
        self.run = None                             # the Disagreement under way
        self.taken_over = 0                         # disagreements taken over so far

    def check(self, value, time, clock=None):
        """The GateVerdict of ``value`` stamped ``time`` [s] and received at ``clock`` [s] on the receiver's clock
        (None: not known); an accepted value becomes the last accepted one. The time the quantity had to move is the
        stamps' gap, at most the receiver's clock's since the last accepted reading: a stamp ahead of the clock claims
        no more time (the same for how long a disagreement has lasted), and an accepted reading's time is the last
        one's plus that time, not a stamp ahead of its arrival."""
        if self.value is None:
            return self._accept(value, time, clock, False, 0, 0.0, 0.0)
        step = self.difference(value, self.value)
        elapsed = _elapsed(time, self.time, clock, self.clock)
        allowed = self._allowed(elapsed)
        excess = step - allowed
        worst = int(np.argmax(excess))
        allowed_worst = float(np.broadcast_to(allowed, step.shape)[worst])
        if excess[worst] <= 0.0:  # its time: the last one's and the time it had, not a stamp ahead of its arrival,
            # which would leave the readings after it no time to move (1,000 copies of estimated_joint_states stamped
            # up to 0.5 s ahead, those within bounds accepted, held the real stream off as implausible till it fell)
            return self._accept(value, self.time + elapsed, clock, False, worst, float(step[worst]), allowed_worst)
        run = self.run
        if run is not None and np.all(self.difference(value, run.value) <= self._allowed(time - run.time)):
            run = self.run = run._replace(value=value, time=time, count=run.count + 1)
        else:
            run = self.run = Disagreement(time, clock, value, time, 1)
        if run.count >= MIN_RUN and _elapsed(time, run.since, clock, run.since_clock) >= self.persistence:
            self.taken_over += 1
            return self._accept(value, time, clock, True, worst, float(step[worst]), allowed_worst)
        return GateVerdict(False, False, worst, float(step[worst]), allowed_worst)

    def _allowed(self, elapsed):
        """What each component can have moved in ``elapsed`` [s] (an unbounded one: anything)."""
        with np.errstate(invalid="ignore"):  # inf × 0: unbounded all the same
            return np.nan_to_num(self.rate * max(elapsed, 0.0), nan=math.inf) + self.tolerance

    def _accept(self, value, time, clock, taken_over, component, step, allowed):
        self.value, self.time, self.clock, self.run = value, time, clock, None
        return GateVerdict(True, taken_over, component, step, allowed)


class Disagreement(NamedTuple):
    """Readings away from the last accepted one that agree with each other."""

    since: float        # the first one's stamp [s]
    since_clock: float  # and the receiver's clock then [s] (None: not known)
    value: object       # the last one
    time: float         # its stamp [s]
    count: int


def _elapsed(time, since, clock, since_clock):
    """The stamps' gap from ``since`` to ``time``, at most the receiver's clock's when both clocks are known [s]."""
    if clock is None or since_clock is None:
        return time - since
    return min(time - since, clock - since_clock)


class RangeGate:
    """Readings whose components lie in [``lower``, ``upper``] give or take ``tolerance`` (a joint in its URDF range),
    or moved at most ``step_tolerance`` from the last accepted reading (a joint that rests beyond a limit the model
    puts too tight: iCub's elbows sit 0.1 rad beyond theirs in MuJoCo); one that jumped beyond is implausible. Readings
    beyond for ``persistence`` s of their stamps (and MIN_RUN of them), none back in between, are taken over, and the
    components beyond are no longer held to their range (the model's limits are wrong there: the node says so). A
    component whose range is empty (lower ≥ upper) is not bounded."""

    def __init__(self, lower, upper, tolerance, step_tolerance, persistence=PERSISTENCE):
        lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        bounded = lower < upper
        self.lower = np.where(bounded, lower - tolerance, -math.inf)
        self.upper = np.where(bounded, upper + tolerance, math.inf)
        self.tolerance, self.step_tolerance, self.persistence = tolerance, step_tolerance, persistence
        self.run = None  # (first stamp, receiver's clock then, readings) of the readings beyond, under way

    def check(self, value, time, clock=None, last=None):
        """The GateVerdict of ``value`` stamped ``time`` [s], received at ``clock`` [s] (None: not known), after the
        ``last`` accepted reading (None: none); its ``step``: how far the worst component lies beyond its range,
        ``allowed``: the tolerance."""
        excess = np.maximum(self.lower - value, value - self.upper)
        if last is not None:
            excess[np.abs(value - last) <= self.step_tolerance] = -math.inf
        worst = int(np.argmax(excess))
        beyond = float(excess[worst]) + self.tolerance
        if not excess[worst] > 0.0:
            self.run = None
            return GateVerdict(True, False, worst, beyond, self.tolerance)
        since, since_clock, count = self.run if self.run is not None else (time, clock, 0)
        self.run = since, since_clock, count + 1
        if count + 1 >= MIN_RUN and _elapsed(time, since, clock, since_clock) >= self.persistence:
            outside = excess > 0.0
            self.lower[outside], self.upper[outside], self.run = -math.inf, math.inf, None
            return GateVerdict(True, True, worst, beyond, self.tolerance)
        return GateVerdict(False, False, worst, beyond, self.tolerance)


class ChangeGate:
    """A state that changes to ``value`` at most once per ``min_interval`` [s]: such a change sooner after the last
    accepted change is implausible (a foot lifted again faster than any step lifts and puts it down); a change to
    another value is always plausible (a foot put down)."""

    def __init__(self, value, min_interval):
        self.bounded, self.min_interval = value, min_interval
        self.value, self.changed = None, None  # the state, and when it last changed [s]

    def check(self, value, time):
        """Whether ``value`` at ``time`` [s] is plausible; if so, it is the state. The first value always is."""
        if value == self.value:
            return True
        if value == self.bounded and self.changed is not None and time - self.changed < self.min_interval:
            return False
        self.value, self.changed = value, time
        return True

    def since(self, time):
        """How long before ``time`` [s] the state last changed [s]."""
        return time - self.changed


def joint_speed_bounds(robot, names, ratio):
    """Per joint of ``names``, ``ratio`` times its URDF velocity limit [rad/s or m/s]; inf where the URDF gives none."""
    limits = robot.velocity_limits(names)
    return np.where(limits > 0.0, ratio * limits, math.inf)


def base_bounds(robot, com_height):
    """The floating base's speed [m/s] and angular speed [rad/s] no humanoid standing with its CoM ``com_height`` [m]
    above its soles reaches: the speed of a fall from that height, √(2 g h) (a push that throws it faster is not
    one it stands), and that speed about the feet."""
    speed = math.sqrt(2.0 * _gravity(robot) * com_height)
    return speed, speed / com_height


def weight_ratio(force, robot):
    """‖f‖ of a contact force [N] as a multiple of the robot's weight."""
    return float(np.linalg.norm(force)) / (robot.total_mass * _gravity(robot))


def _gravity(robot):
    return float(np.linalg.norm(robot.model.gravity.linear))  # [m/s²]
