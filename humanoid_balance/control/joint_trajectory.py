"""A joint trajectory as ROS means it (trajectory_msgs/JointTrajectory, as ros2_control's joint_trajectory_controller
follows it), as the path a J-busy limb follows on its clock τ [s from the trajectory's start].

Between two points the path is a polynomial in the time since the first of them: linear between positions, cubic
when the points give velocities too, quintic when they give accelerations too (each matches the positions,
velocities and accelerations given at both ends). Points without positions have them deduced from their velocities,
each the last one's plus the mean of both velocities over the time between them (the velocities linear in time),
from where the limb is when the trajectory is followed. A trajectory whose first point lies ahead is joined from
where the limb is (its position, and its velocity and acceleration on the path it was following): the segment before
the first point starts there, interpolated as the points are. After the last point the limb holds its position;
before the path's start (a tick stamped earlier than the trajectory was taken up) it holds its start.
Units: rad or m, s.
"""
from typing import NamedTuple, Optional

import numpy as np

from humanoid_balance.errors import HumanoidBalanceError

__all__ = ["LimbTrajectory", "JointPath", "Unfollowable", "segment_coefficients", "check", "START_TOLERANCE"]

START_TOLERANCE = 0.1  # [rad, m] a path that is already under way when taken up (its first point not ahead) may start
                       # this far from where the limb is: the feedback closes that much; farther it would be a jump
RANGE_TOLERANCE = 0.02  # [rad, m] a position this close outside its joint's range is taken to its edge (a measured
                        # position sent back, a hair past the limit its joint rests against); farther it is refused
ORDER = 6              # coefficients of the quintic, the highest order a segment has


class Unfollowable(HumanoidBalanceError, ValueError):
    """A trajectory that cannot be followed; ``reason``: a short counter key, the message says why."""

    def __init__(self, reason, detail):
        self.reason = reason
        super().__init__(detail)


class LimbTrajectory(NamedTuple):
    """A limb's joint trajectory, its joints in the limb's order: positions, velocities and accelerations at each
    point, each given for every point or for none (None)."""

    start: float            # [s] on the stamps' clock
    times: np.ndarray       # time_from_start of each point, strictly increasing, ≥ 0 (k,) [s]
    positions: Optional[np.ndarray] = None      # (k, n) [rad, m]
    velocities: Optional[np.ndarray] = None     # (k, n) [rad/s, m/s]
    accelerations: Optional[np.ndarray] = None  # (k, n) [rad/s², m/s²], only with velocities


def segment_coefficients(duration, start, end):
    """Coefficients c_0 … c_5 of p(h) = Σ c_j h^j, h the time since each segment's start, (6, m, n).

    Args:
        duration: of each segment (m,) > 0 [s].
        start, end: (positions, velocities or None, accelerations or None) at its ends, each (m, n): linear without
            velocities, cubic with, quintic with accelerations too.
    """
    (p0, v0, a0), (p1, v1, a1) = start, end
    T = np.asarray(duration, dtype=float)[:, None]
    c = np.zeros((ORDER,) + np.shape(p0))
    c[0] = p0
    step = p1 - p0
    if v0 is None:
        c[1] = step / T
    elif a0 is None:
        c[1] = v0
        c[2] = (3.0 * step - (2.0 * v0 + v1) * T) / T ** 2
        c[3] = (-2.0 * step + (v0 + v1) * T) / T ** 3
    else:
        c[1], c[2] = v0, 0.5 * a0
        c[3] = (20.0 * step - (12.0 * v0 + 8.0 * v1) * T - (3.0 * a0 - a1) * T ** 2) / (2.0 * T ** 3)
        c[4] = (-30.0 * step + (16.0 * v0 + 14.0 * v1) * T + (3.0 * a0 - 2.0 * a1) * T ** 2) / (2.0 * T ** 4)
        c[5] = (12.0 * step - 6.0 * (v0 + v1) * T - (a0 - a1) * T ** 2) / (2.0 * T ** 5)
    return c


POWERS = np.arange(ORDER)
DERIVATIVE = (POWERS[1:], POWERS[2:] * POWERS[1:-1])  # j, j (j − 1) of the first and second derivatives


class JointPath:
    """The path a limb follows: ``trajectory`` taken up at its time ``tau`` [s] with the limb at ``position`` (n,),
    moving at ``velocity`` and ``acceleration`` on the path it followed (see the module)."""

    def __init__(self, trajectory, tau, position, velocity=None, acceleration=None):
        position = np.asarray(position, dtype=float)
        velocity = np.zeros_like(position) if velocity is None else velocity
        acceleration = np.zeros_like(position) if acceleration is None else acceleration
        times, v, a = trajectory.times, trajectory.velocities, trajectory.accelerations
        if not len(times):  # an empty trajectory: stop where it is
            self._set(np.array([tau]), position[None], None, None)
            return
        p = trajectory.positions
        if p is None:  # deduced from the velocities, from where the limb is (below)
            p = np.zeros_like(v)
            p[1:] = np.cumsum(0.5 * (v[1:] + v[:-1]) * np.diff(times)[:, None], axis=0)
        ahead = times[0] > tau
        if trajectory.positions is None:
            if ahead:
                p = p + position + 0.5 * (velocity + v[0]) * (times[0] - tau)
            else:
                self._set(times, p, v, a)
                p = p + position - self.sample(tau)[0]
        if ahead:  # the segment before the first point, from where the limb is
            times = np.r_[tau, times]
            p = np.vstack([position, p])
            v = None if v is None else np.vstack([velocity, v])
            a = None if a is None else np.vstack([acceleration, a])
        self._set(times, p, v, a)

    def _set(self, times, positions, velocities, accelerations):
        times = np.asarray(times, dtype=float)  # sample() searches it with the ndarray method
        if len(times) == 1:  # one point: held
            times, positions = np.r_[times, times], np.vstack([positions, positions])
            velocities = accelerations = None
        self.times, self.end = times, times[-1]
        duration = np.diff(times)
        ends = [(positions[s], None if velocities is None else velocities[s],
                 None if accelerations is None else accelerations[s]) for s in (slice(None, -1), slice(1, None))]
        self.coefficients = segment_coefficients(np.where(duration > 0.0, duration, 1.0), *ends)  # (6, m, n)
        self.duration = duration

    def sample(self, tau, acceleration=True):
        """(position, velocity, acceleration) at its time ``tau`` (scalar → each (n,)); held before its start and
        after its end (zero velocity and acceleration there); without ``acceleration``, (position, velocity)."""
        index = min(max(int(self.times.searchsorted(tau, side="right")) - 1, 0), len(self.duration) - 1)
        h = min(max(tau - self.times[index], 0.0), self.duration[index])
        c = self.coefficients[:, index]  # (6, n)
        powers = h ** POWERS
        position = powers @ c
        if not self.times[0] <= tau <= self.end:
            return (position, np.zeros_like(position), np.zeros_like(position))[:3 if acceleration else 2]
        if not acceleration:
            return position, (DERIVATIVE[0] * powers[:-1]) @ c[1:]
        return position, (DERIVATIVE[0] * powers[:-1]) @ c[1:], (DERIVATIVE[1] * powers[:-2]) @ c[2:]

    def velocities(self, taus):
        """Velocities at its times ``taus`` (k,) → (k, n), zero outside the path."""
        taus = np.asarray(taus, dtype=float)
        index = np.minimum(np.maximum(np.searchsorted(self.times, taus, side="right") - 1, 0), len(self.duration) - 1)
        h = np.minimum(np.maximum(taus - self.times[index], 0.0), self.duration[index])  # np.clip's values, faster
        powers = h[:, None] ** POWERS[:-1] * DERIVATIVE[0]  # (k, 5)
        rates = np.einsum("kj,jkn->kn", powers, self.coefficients[1:, index])
        rates[(taus < self.times[0]) | (taus > self.end)] = 0.0
        return rates

    def active(self, tau):
        """Whether the path is not over at ``tau``."""
        return tau <= self.end


def check(trajectory, joints, lower, upper, tau, position=None):
    """Unfollowable unless ``trajectory``, taken up at its time ``tau`` [s], can be followed by the joints named
    ``joints`` of ranges [``lower``, ``upper``] (n,): a position outside its joint's range by more than
    RANGE_TOLERANCE ('outside_limits'); its last
    point already passed ('ends_in_past'); its first point not ahead and the path at ``tau`` farther than
    START_TOLERANCE from ``position``, where the limb is (n,) ('far_start': a jump; not checked without it)."""
    times, positions = trajectory.times, trajectory.positions
    if not len(times):
        return
    if positions is not None:
        outside = (positions < lower - RANGE_TOLERANCE) | (positions > upper + RANGE_TOLERANCE)
        if outside.any():
            point, joint = np.argwhere(outside)[0]
            raise Unfollowable("outside_limits", f"points[{point}] puts {joints[joint]} at "
                               f"{positions[point, joint]:.4g}, outside its range [{lower[joint]:.4g}, "
                               f"{upper[joint]:.4g}]")
    if times[-1] < tau:
        raise Unfollowable("ends_in_past", f"its last point was due {tau - times[-1]:.3f} s ago (header.stamp + "
                           f"time_from_start)")
    if positions is not None and position is not None and times[0] <= tau:
        gap = np.abs(JointPath(trajectory, tau, position).sample(tau)[0] - position)
        joint = int(np.argmax(gap))
        if gap[joint] > START_TOLERANCE:
            raise Unfollowable("far_start", f"it is under way on arrival (points[0] is not ahead) {gap[joint]:.3f} "
                               f"from where {joints[joint]} is (more than {START_TOLERANCE}): give points[0] a "
                               f"time_from_start to be reached in")
