"""Balance first: a CoM reference is a wish, granted only as far as the robot stays up (a reference governor).

The reference c_w a user sends is

1. projected into what the robot can hold: horizontally into the support polygon of the soles in contact (the part of
   it where each sole keeps a share of the weight: the balancer's) shrunk by ``margin``, vertically into the height
   range its legs reach [z_low, z_high] (the balancer's: the legs' length, and where the joint limits stopped a rise
   or a descent);
2. approached along a path whose speed and acceleration are bounded, |ċ_r| ≤ v_max and |c̈_r| ≤ a with
   a = min(a_max, ω² margin): by the LIPM (Choi–Kim eq. 23) the reference's own ZMP p_r = c_r − c̈_r/ω² then lies
   within ``margin`` of c_r, which stays in the shrunk polygon, so p_r stays in the support polygon however far the
   wish. Braking follows the discrete v ≈ √(2 a d) towards the target at distance d (:func:`braking_speed`), so the path
   stops on it without overshoot.

The controller tracks (c_r, ċ_r, p_r) — eq. 24's c_d, ċ_d and p_d — instead of the raw wish. What was not granted
as asked (by more than GRANTED_AS_ASKED) comes back as :class:`Limitation` records, typed: the wish projected, and
the target on its way; nodes turn them into diagnostics. Units: m, s.
"""
import math
from typing import NamedTuple, Optional

import numpy as np

__all__ = ["Limitation", "GrantedCom", "ComGovernor", "differs", "OUTSIDE_SUPPORT", "HEIGHT_OUT_OF_REACH",
           "APPROACHING", "MIN_MARGIN", "GRANTED_AS_ASKED"]

OUTSIDE_SUPPORT = "outside the support polygon"
HEIGHT_OUT_OF_REACH = "height out of the legs' reach"
APPROACHING = "approached at the speed and acceleration limits"
MIN_MARGIN = 0.005    # [m] the acceleration bound ω² margin never uses less (a zero margin would freeze the reference)
WIDEN_STEP = 0.005    # [m] the grid of the extra margin on a starved computer
GRANTED_AS_ASKED = 1e-3  # [m] a value granted within this of the one asked, in every coordinate, is granted as asked
                         # (and a reference this close to its target is on it): a limitation is one the diagnostics,
                         # in millimetres, can show
RANGE_TOLERANCE = 1e-6    # [m] a reference landing this close outside its height range is in it


class Limitation(NamedTuple):
    """A reference the balancer did not grant as asked, while it lasts."""

    reference: str     # the input it concerns: "com_reference", "<limb>/pose", "<limb>/trajectory"
    reason: str        # why, in words (the module constants)
    requested: tuple   # the value asked (units of the reference: m, or s of trajectory time per s)
    granted: tuple     # the value granted
    current: tuple = ()  # an approach: where the reference is now on its way to ``granted``; () when held there


def differs(requested, granted):
    """Whether ``granted`` differs from ``requested`` by more than GRANTED_AS_ASKED in some coordinate [m]."""
    return bool(np.abs(np.subtract(requested, granted)).max(initial=0.0) > GRANTED_AS_ASKED)  # (the method, not
    # np.max: ~1.5 µs less a call)


class GrantedCom(NamedTuple):
    position: np.ndarray      # c_r, world frame [m]
    velocity: np.ndarray      # ċ_r [m/s]
    acceleration: np.ndarray  # c̈_r [m/s²]
    target: np.ndarray        # the wish projected into what the robot can hold, where c_r is heading [m]
    limitations: tuple        # Limitation records


class ComGovernor:
    """The CoM reference actually asked of the controller (see the module).

    Args:
        margin: how far inside the support polygon's edges the CoM reference stays [m].
        max_speed: |ċ_r| bound [m/s].
        max_acceleration: |c̈_r| bound [m/s²], lowered to ω² margin where the LIPM asks it.
    """

    def __init__(self, margin=0.04, max_speed=0.05, max_acceleration=0.5):
        if not margin >= 0.0:
            raise ValueError(f"support_margin must be ≥ 0 m, got {margin}")
        if not (max_speed > 0.0 and max_acceleration > 0.0):
            raise ValueError(f"max_com_speed and max_com_acceleration must be > 0, got {max_speed} m/s and "
                             f"{max_acceleration} m/s²")
        self.margin, self.max_speed, self.max_acceleration = margin, max_speed, max_acceleration
        self.extra_margin = 0.0  # [m] further inside on a starved computer (widen)
        self.position: Optional[np.ndarray] = None
        self.velocity = np.zeros(3)
        self._polygon, self._shrunk = None, None

    def reset(self, com):
        """Start again at rest at ``com`` [m] (on activation, after a hold)."""
        self.position = np.array(com, dtype=float)
        self.velocity = np.zeros(3)

    def move(self, offset):
        """The ground the reference is given on moved by ``offset`` [m] (a landing, the base estimate settling on
        the soles): the reference moves with it at once, as the same point on that ground, not as a new wish."""
        if self.position is not None:
            self.position = self.position + offset

    def widen(self, extra):
        """Keep the reference ``extra`` [m] further inside the support than the margin (a starved computer:
        loop.BalanceStage), on a grid of WIDEN_STEP so that the shrunk polygon is not made again every tick."""
        extra = WIDEN_STEP * round(extra / WIDEN_STEP)
        if extra != self.extra_margin:
            self.extra_margin, self._polygon = extra, None

    def acceleration_bound(self, omega):
        """a = min(a_max, ω² margin) [m/s²]: the reference's ZMP stays within the margin of it (LIPM, eq. 23)."""
        return min(self.max_acceleration, omega ** 2 * max(self.margin, MIN_MARGIN))

    def target(self, wish, support, height_range):
        """The wish projected: into ``support`` (a SupportPolygon, None: no contact, the horizontal part held) shrunk
        by the margin, and into ``height_range`` (z_low, z_high) [m]; with its limitations."""
        wish = np.asarray(wish, dtype=float)
        target = self.position.copy()
        limitations = []
        if support is not None:  # in the air the horizontal reference is held (a jump's flight, a fall)
            target[:2] = self._shrunk_polygon(support).nearest(wish[:2])
        target[2] = min(max(wish[2], height_range[0]), height_range[1])
        if support is not None and differs(wish[:2], target[:2]):
            limitations.append(Limitation("com_reference", OUTSIDE_SUPPORT, _values(wish), _values(target)))
        if abs(wish[2] - target[2]) > GRANTED_AS_ASKED:  # differs() of one coordinate, without numpy's calls
            limitations.append(Limitation("com_reference", HEIGHT_OUT_OF_REACH, (float(wish[2]),),
                                          (float(target[2]),)))
        return target, limitations

    def update(self, wish, support, height_range, omega, dt):
        """One tick towards the projected wish (:class:`GrantedCom`). ``omega``: the LIPM's ω = √(g / c_z) [1/s]."""
        if self.position is None:
            raise RuntimeError("ComGovernor.update before reset")
        target, limitations = self.target(wish, support, height_range)
        acceleration = np.zeros(3)
        error = target - self.position
        distance = math.sqrt(error @ error)
        if distance == 0.0 and not self.velocity.any():  # at rest on its target: nothing to move
            return GrantedCom(self.position.copy(), self.velocity.copy(), acceleration, target, tuple(limitations))
        if dt > 0.0:
            bound = self.acceleration_bound(omega)
            desired = error * (braking_speed(distance, bound, dt, self.max_speed) / max(distance, 1e-300))
            acceleration = (desired - self.velocity) / dt
            norm = math.sqrt(acceleration @ acceleration)
            if norm > bound:
                acceleration *= bound / norm
            self.velocity = self.velocity + dt * acceleration
            self.position = self.position + dt * self.velocity
        low, high = height_range
        if not low - RANGE_TOLERANCE <= self.position[2] <= high + RANGE_TOLERANCE:  # the range closed in on it
            self.position[2] = min(max(self.position[2], low), high)
            self.velocity[2] = 0.0
        if differs(target, self.position):
            limitations.append(Limitation("com_reference", APPROACHING, _values(target), _values(target),
                                          _values(self.position)))
        return GrantedCom(self.position.copy(), self.velocity.copy(), acceleration, target, tuple(limitations))

    def _shrunk_polygon(self, support):
        if support is not self._polygon:
            self._polygon, self._shrunk = support, support.shrunk(self.margin + self.extra_margin)
        return self._shrunk


def braking_speed(distance, acceleration, dt, max_speed):
    """The fastest speed [m/s] from which steps of ``dt`` [s] (semi-implicit Euler), each slower by
    ``acceleration`` dt, stop within ``distance`` [m]: n a dt with a dt² n (n + 1) / 2 = distance; the last step lands
    on it (distance / dt)."""
    steps = 0.5 * (math.sqrt(1.0 + 8.0 * distance / (acceleration * dt * dt)) - 1.0)
    return min(max_speed, steps * acceleration * dt if steps >= 1.0 else distance / dt)


def _values(values):
    return tuple(np.asarray(values, dtype=float).tolist())
