"""The J-busy limbs' rates of a balance tick (:class:`LimbPreview`): each limb takes up a new trajectory when one
arrives, and their common clock (:class:`~humanoid_balance.control.limb_motion.TrajectoryClock`) is slowed where the
motion, previewed through the centroidal momentum matrix, would carry the ZMP out of the support or a joint beyond its
speed.

The preview samples the trajectories every PREVIEW_STEP (10 ms) over a second, so it is taken again once that much
time has passed (or a trajectory is taken up), not every tick: at 500 Hz it served 5 ticks, the one preview of them
that was not in the last. A bound up to 10 ms old holds the clock's scale at most SCALE_RATE_DOWN × 10 ms (0.04)
from where a fresh one would, the rate it may fall at anyway. Units: SI.
"""
import numpy as np

from humanoid_balance.control.limb_motion import PREVIEW_STEP

__all__ = ["MOMENTUM_MAP_PREVIEWS", "LimbPreview"]

MOMENTUM_MAP_PREVIEWS = 5  # the limbs' preview takes the centroidal momentum matrix of up to this many previews ago


class LimbPreview:
    """The J-busy limbs' rates on their trajectories' clock.

    Args:
        clock: the limbs' TrajectoryClock.
        joints: J-busy limb → its number of joints (a limb without a trajectory gets zero rates).
    """

    def __init__(self, clock, joints):
        self.clock = clock
        self.joints = dict(joints)
        self.followed = {}       # J-busy limb → the trajectory its clock follows
        self.momentum_map, self.momentum_map_age = None, 0  # A T for the preview, and the previews since
        self.bound, self.previewed = 1.0, None  # the preview's bound on the clock's scale, and when it was taken

    def rates(self, trajectories, now, position, momentum_map, mass, height, zmp_reference, polygon, zmp, dt):
        """Limb → its joints' rates this tick [rad/s, m/s], and the limitations (the limbs slowed).

        Args:
            trajectories: limb → its newest LimbTrajectory; a new object is taken up at ``now`` [s, stamps' clock]
                from ``position``, the outputs' position command (n_out,) [rad, m].
            momentum_map: called at most every MOMENTUM_MAP_PREVIEWS previews while a limb moves (it changes
                slowly): the centroidal momentum matrix in output coordinates, A T (6, 6 + n_out).
            mass: the robot's [kg]; height: its CoM above the ground [m]; zmp_reference: where the balance puts the
                ZMP (2,) [m], world frame.
            polygon: the SupportPolygon the limbs keep the ZMP in (None: no bound by the ZMP); zmp: the measured ZMP
                [m] (None: none), which lowers a ceiling on the clock's speed while outside ``polygon``.
            dt: the tick [s].
        """
        clock = self.clock
        for limb, trajectory in trajectories.items():
            if self.followed.get(limb) is not trajectory:
                self.followed[limb] = trajectory
                clock.follow(limb, trajectory, now, position)
                self.previewed = None
        depth = None
        if clock.moving:
            if self.previewed is None or not 0.0 <= now - self.previewed < PREVIEW_STEP - 0.5 * dt:  # (or set back)
                if self.momentum_map is None or self.momentum_map_age >= MOMENTUM_MAP_PREVIEWS:
                    self.momentum_map, self.momentum_map_age = momentum_map(), 0
                self.momentum_map_age += 1
                self.bound, self.previewed = clock.bound(self.momentum_map, mass, height, zmp_reference, polygon), now
            if polygon is not None and zmp is not None:
                depth = polygon.depth(zmp)
        else:
            self.bound, self.previewed = 1.0, None
        rates, limitations = clock.advance(self.bound, dt, position, depth)
        return {limb: rates.get(limb, np.zeros(n)) for limb, n in self.joints.items()}, limitations
