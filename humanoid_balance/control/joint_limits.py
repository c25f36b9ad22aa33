"""The actuators' strokes and the serial-equivalent joints' ranges kept by a whole-body velocity resolution (Kangaroo
paper, section IV: the QP-based IK of eq. (IV), θ̲ − θ ≤ θ̇ dt ≤ θ̄ − θ).

Every limited joint j of the tree (the actuated joints and the outputs) moves by θ̇_j = T_j ν_o, T = ∂ν/∂ν_o: an
actuator's stroke bounds the outputs' motion jointly (the two ankle actuators bound the ankle's pitch and roll
together, and the knee's too when they ride on the shin), where the outputs' own limits are a box. With θ_j the
position the command already asks — the measured one moved along T by the command's lead on the measured outputs —
a resolution ν_o* is kept when every row stays in

    (θ̲_j − θ_j) / dt ≤ T_j ν_o ≤ (θ̄_j − θ_j) / dt,

the strokes of the actuators that are not outputs themselves drawn in by ``margin`` of their range (their rows are a
linearisation; an output's row is exact); a command already outside may stay or come back, never go further.
Otherwise it becomes the solution of

    min_ν  ½ w_c ‖J_xy (ν − ν*)‖² + ½ ‖ν − ν*‖²   s.t.   J_s (ν − ν*) = 0 for the soles in contact,  the rows above

(J_xy the CoM Jacobian's horizontal rows; solved by DAQP, a dual active-set solver for small dense QPs — the
Jacobians change every tick, and OSQP's refactorisation of them costs ten times more): the soles do what the
resolution asked, the CoM's horizontal motion — the balance — as much of it as the limits allow, and the rest of ν_o
gives way evenly: the CoM's height, the trunk's attitude, the free limbs. An ankle at its stroke hands the CoM over to
the hips; legs stretched to their actuators' stroke stop raising the CoM. Velocity limits are not rows: position
drives move at their own speed, and the command's velocity is clamped downstream (the balancer, the mapper).
Units: m, rad, s.
"""
from enum import StrEnum
from typing import NamedTuple

import daqp
import numpy as np

__all__ = ["JointLimits", "LimitedMotion", "LimitStatus"]

TOLERANCE = 1e-9  # [m/s, rad/s] a rate this close to its bound is within (a joint resting at its limit)
SOLVED = 1e-6     # [m/s, rad/s] a solution's rate this close to its bound is at it
OPTIMAL = 1       # DAQP's exit flag of an optimal solution
EQUALITY, INEQUALITY = 5, 0  # DAQP's constraint senses


class LimitStatus(StrEnum):
    """What the limits did to a motion: nothing, changed it to keep them, or could not (ν_o* kept as it was; the
    limits clamp downstream)."""

    FREE = "free"
    LIMITED = "limited"
    NOT_MET = "not met"


class LimitedMotion(NamedTuple):
    velocity: np.ndarray   # ν_o: base twist (base frame) then output rates [m/s, rad/s]
    limited: tuple         # names of the joints at a bound, () when the resolution was kept as it was
    status: LimitStatus
    solver_flag: int = 0   # DAQP's exit flag when the limits were not met


class JointLimits:
    """Position limits of a :class:`RobotModel`'s actuated and output joints, for velocities ν_o of its
    serial-equivalent outputs (floating base). ``margin``: fraction of each stroke kept free (the actuators that are
    not outputs); ``com_weight``: w_c, the CoM's horizontal motion against the rest of ν_o's."""

    def __init__(self, robot, margin=0.02, com_weight=1e4):
        if not 0.0 <= margin < 0.5:
            raise ValueError(f"limit_margin must be in [0, 0.5) (a fraction of each actuator's stroke), got {margin}")
        strokes = [name for name in robot.actuated_names if name not in robot.output_names]
        lower, upper = robot.position_limits(strokes)
        kept = np.isfinite(upper - lower)
        self.strokes = [name for name, keep in zip(strokes, kept) if keep]
        self.stroke_rows = np.array([robot.joint_v_index(name) for name in self.strokes], dtype=int)
        self.stroke_q = self.stroke_rows + (robot.nq - robot.nv)  # 1-DOF joints: q follows v past the base
        span = (upper - lower)[kept]
        stroke_lower, stroke_upper = lower[kept] + margin * span, upper[kept] - margin * span
        lower, upper = robot.position_limits(robot.output_names)
        self.ranged = np.flatnonzero(np.isfinite(upper - lower))  # outputs with a finite range
        self.lower = np.concatenate([stroke_lower, lower[self.ranged]])
        self.upper = np.concatenate([stroke_upper, upper[self.ranged]])
        self.names = self.strokes + [robot.output_names[k] for k in self.ranged]
        self.output_q = robot.output_q
        self.n = 6 + len(robot.output_names)
        self.range_v = 6 + self.ranged
        self.range_rows = np.eye(self.n)[self.range_v]  # an output's row of T is its own rate
        self.com_weight = com_weight

    def apply(self, velocity, T, q, position_command, dt, tasks):
        """ν_o* (``velocity``) kept, or moved by the least the limits ask (:class:`LimitedMotion`).

        Args:
            T: ∂ν/∂ν_o at the measured ``q`` (nv, 6 + n_out).
            position_command: the outputs' position command this tick's motion adds to [rad or m].
            tasks: called only when a limit acts, gives the CoM Jacobian (3, 6 + n_out) and the list of the Jacobians
                of the soles in contact (6, 6 + n_out), in output coordinates.
        """
        if not dt > 0.0:  # the command's position does not move
            return LimitedMotion(velocity, (), LimitStatus.FREE)
        L = T[self.stroke_rows]
        lead = position_command - q[self.output_q]  # the command's lead on the measured outputs
        asked = np.concatenate([q[self.stroke_q] + L[:, 6:] @ lead, position_command[self.ranged]])
        rates = np.concatenate([L @ velocity, velocity[self.range_v]])
        reached = asked + dt * rates
        if ((reached >= self.lower) & (reached <= self.upper)).all():
            return LimitedMotion(velocity, (), LimitStatus.FREE)
        low = np.minimum((self.lower - asked) / dt, 0.0)
        high = np.maximum((self.upper - asked) / dt, 0.0)
        if ((rates >= low - TOLERANCE) & (rates <= high + TOLERANCE)).all():  # outside, staying or coming back
            return LimitedMotion(velocity, (), LimitStatus.FREE)
        L = np.vstack([L, self.range_rows])
        J_com, soles = tasks()
        P = self.com_weight * (J_com[:2].T @ J_com[:2])
        P[np.diag_indices_from(P)] += 1.0
        A = np.vstack([*soles, L])
        held = 6 * len(soles)
        upper, lower = np.zeros(len(A)), np.zeros(len(A))
        upper[held:], lower[held:] = high - rates, low - rates
        sense = np.full(len(A), INEQUALITY, dtype=np.intc)
        sense[:held] = EQUALITY
        delta, _, flag, _ = daqp.solve(P, np.zeros(self.n), A, upper, lower, sense)
        if flag != OPTIMAL:
            return LimitedMotion(velocity, (), LimitStatus.NOT_MET, flag)
        limited = velocity + delta
        rates = L @ limited
        at_bound = (rates <= low + SOLVED) | (rates >= high - SOLVED)
        return LimitedMotion(limited, tuple(name for name, hit in zip(self.names, at_bound) if hit),
                             LimitStatus.LIMITED)
