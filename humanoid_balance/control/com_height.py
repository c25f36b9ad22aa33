"""The CoM heights a balance controller may ask for (:class:`ComHeightRange`): the range the legs reach, from their
length and the posture of the first update, capped where the joint limits stopped a rise — the anti-windup of the CoM
height. World frame, SI.
"""
import numpy as np

__all__ = ["HEIGHT_CAP_RELAXATION", "LOWEST_LEG_FRACTION", "RISE_TOLERANCE", "ComHeightRange", "leg_limits"]

HEIGHT_CAP_RELAXATION = 0.02  # [m/s] how fast a CoM height the limits capped is asked for again once they let go
RISE_TOLERANCE = 1e-4         # [m/s] a rise the limits take less than this from is not capped
LOWEST_LEG_FRACTION = 0.5     # the hips are never asked below this fraction of the legs' length above the soles


def leg_limits(robot, T, legs, names):
    """The joint limits among ``names`` (JointLimits.names) that stop the legs: their joints' ranges and the strokes
    that move them (a column of T = ∂ν/∂ν_o, (nv, 6 + n_out), of a leg joint). ``legs``: each leg's output joints."""
    columns = [6 + robot.output_names.index(joint) for joints in legs for joint in joints]
    return {name for name in names if any(name in joints for joints in legs)
            or (name in robot.joint_names and np.abs(T[robot.joint_v_index(name), columns]).max() > 1e-9)}


class ComHeightRange:
    """The (low, high) CoM heights the legs reach, and the cap the joint limits put on the high one.

    Args:
        leg_reach: the legs' length, hip to sole [m].
        leg_limits: the names of the joint limits that stop the legs (:func:`leg_limits`).
    """

    def __init__(self, leg_reach, leg_limits):
        self.leg_reach, self.leg_limits = leg_reach, set(leg_limits)
        self.above_ground = None  # (low, high) CoM heights above the ground, from the first update [m]
        self.cap = None           # the CoM height the limits stopped a rise at (None: none), world frame [m]

    def range(self, com_height, ground, hip_height):
        """(low, high) CoM heights, world frame [m]: the hips no higher than straight legs, no lower than
        LOWEST_LEG_FRACTION of them above the ``ground``, measured against the first update's posture (``com_height``
        and ``hip_height()``, the hips' mean height, called at the first update only); high capped by :attr:`cap`."""
        if self.above_ground is None:
            extension = hip_height() - ground  # the legs' at the first update
            self.above_ground = (com_height - ground - (extension - LOWEST_LEG_FRACTION * self.leg_reach),
                                 com_height - ground + max(0.0, self.leg_reach - extension))
        low, high = ground + self.above_ground[0], ground + self.above_ground[1]
        if self.cap is not None:
            high = min(high, self.cap)
        return low, max(low, high)

    def update_cap(self, held, rise, com_height, reference_height, dt):
        """A rise the joint limits stop is not asked for again. Legs held at their actuators' stroke by a height they
        cannot give lose the ankles' and knees' motion the balance needs; so where the limits take away a rise the
        motion asked, the range is capped at the CoM's height, and the cap rises again at HEIGHT_CAP_RELAXATION once
        they let go, until the reference is below it.

        Args:
            held: the joints and actuators at a limit this tick (LimitedMotion.limited).
            rise: called only when a leg's limit is among them: the CoM's vertical speed the motion asked and the one
                the limits kept [m/s].
            com_height, reference_height: the CoM's and its reference's, world frame [m]; dt: the tick [s].
        """
        if self.leg_limits.intersection(held):
            asked, kept = rise()
            if asked > 0.0 and kept < asked - RISE_TOLERANCE:
                self.cap = com_height if self.cap is None else min(self.cap, com_height)
                return
        if self.cap is not None:
            self.cap += HEIGHT_CAP_RELAXATION * dt
            if self.cap >= reference_height:
                self.cap = None
