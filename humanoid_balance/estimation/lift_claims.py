"""Which feet the controller has lifted: what it says (balance/<foot>/lifted), believed once the kinematics show it.

A foot the controller lifts for a step leaves the floor within a few hundredths of a second (its swing rises
``step_height``), and one a push tipped off the floor has already risen (the balancer says so once its sole is
TIPPED_CLEARANCE up, control/stepping.py). A foot said lifted whose sole has not left the floor is not lifted: taken,
the claim (a second publisher on the topic, a stale message) would move the ZMP onto the other feet and make the
balance stand on them while the foot still carries the robot — a single ``true`` from the command line once felled
it. So a claim is taken from the first estimate at which the foot's sole has risen LIFT_CLEARANCE above where it stood,
and then until it is withdrawn.

Where a sole stands is measured beside the others, so that neither the floor's slope nor the base estimate's
drift moves it: h_i = z_i − min_{j≠i} z_j, z the lowest corner of each sole's contact rectangle in the world. Its
floor f_i follows h_i down at once and up at most FLOOR_FOLLOW (a sole that tips rises faster, the base's drift is
slower), is held while the foot is said lifted, and starts again from h_i when it is put down (it may land higher or
lower).
Units: m, s.
"""
import numpy as np

__all__ = ["LiftClaims", "LIFT_CLEARANCE", "FLOOR_FOLLOW"]

LIFT_CLEARANCE = 0.003  # [m] a sole said lifted is taken as lifted once this far above where it stood
FLOOR_FOLLOW = 0.01     # [m/s] where a sole stands follows it up at most this fast


class LiftClaims:
    """Per foot, whether it is lifted, from what the controller says and the soles' heights.

    Args:
        corners: per foot, its contact rectangle's corners in its sole frame, (4, 3) [m].
        sample_period: the time between updates [s] until their times tell it.
    """

    def __init__(self, corners, sample_period):
        self.corners = np.stack([np.asarray(c, dtype=float).T for c in corners])  # (feet, 3, 4)
        feet = len(self.corners)
        self.sample_period, self.last_time = sample_period, None
        self.floor = None                        # f: where each sole stands, beside the others [m]
        self.said = np.zeros(feet, dtype=bool)   # what the controller said at the last update
        self.taken = np.zeros(feet, dtype=bool)  # the feet taken as lifted at the last update
        self.others = ~np.eye(feet, dtype=bool)  # per foot, the other feet

    def update(self, said, placements, time=None):
        """The feet taken as lifted (feet,) bool, given what the controller ``said`` (feet,) bool and the soles'
        ``placements`` (pin.SE3, world) at ``time`` [s] (None: ``sample_period`` after the last update)."""
        dt = self.sample_period if time is None or self.last_time is None else time - self.last_time
        self.last_time = time
        lowest = np.array([(M.rotation[2] @ corners).min() + M.translation[2]
                           for M, corners in zip(placements, self.corners)])
        if len(lowest) < 2:
            self.said = self.taken = said
            return said
        others = np.where(self.others, lowest, np.inf).min(axis=1)
        height = lowest - others
        if self.floor is None:
            self.floor = height.copy()
        standing = ~said
        followed = np.minimum(height, self.floor + FLOOR_FOLLOW * max(dt, 0.0))
        self.floor = np.where(standing, np.where(self.said, height, followed), self.floor)
        self.taken = said & (self.taken | (height - self.floor >= LIFT_CLEARANCE))
        self.said = said
        return self.taken

    def unseen(self):
        """Per foot, whether it is said lifted but its sole has not risen (the claim not taken)."""
        return self.said & ~self.taken
