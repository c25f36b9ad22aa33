"""What a balance tick reports beside its command (:class:`BalanceStatus`), and the controller's own verdict on it
(:meth:`BalanceStatus.health`): typed figures, turned into text only by the nodes (nodes/balance_diagnostics.py).
"""
from enum import Enum, StrEnum
from typing import NamedTuple, Optional

from humanoid_balance.control.joint_limits import LimitStatus
from humanoid_balance.control.momentum_balance import QpStatus

__all__ = ["BalanceStatus", "Concern", "Health", "HealthLevel"]


class HealthLevel(Enum):
    OK = "OK"
    WARN = "WARN"


class Concern(StrEnum):
    """What the controller warns of, most pressing first."""

    QP_FALLBACK = "qp fallback"               # the wrench QP failed: a fallback distribution (BalanceStatus.qp_status)
    LIMITS_NOT_MET = "joint limits not met"   # the joint limits' QP failed (BalanceStatus.joint_limits_solver_flag)
    SOLE_TIPPING = "sole tipping"             # a stance sole has rolled onto an edge (BalanceStatus.tipping_feet)


class Health(NamedTuple):
    level: HealthLevel
    concern: Optional[Concern] = None  # why not OK (None: OK)


class BalanceStatus(NamedTuple):
    """The figures of one balance tick; counts since the controller's start."""

    mode: str                        # the mode's name (BalancerConfig.mode)
    vertical_phase: str              # the mode's vertical phase ("n/a": none)
    qp_status: QpStatus              # how the sole wrenches were distributed
    qp_solve_time: float             # [s] OSQP's
    wrench_residual: float           # [N, N·m] the largest component of Σ G_i w_i − w_d
    linear_momentum: float           # [kg m/s] |p| the mode measured (0: none)
    angular_momentum: float          # [kg m²/s] |L|
    clamped_values: int              # command values clamped to the URDF limits
    restarts: int                    # position commands restarted from the measured posture
    joint_limits: Optional[LimitStatus]  # what the joint limits did to the motion (None: not applied this tick)
    joint_limits_solver_flag: int    # DAQP's exit flag when they were not met (0: none)
    joints_at_a_limit: tuple         # names of the joints and actuators at a limit this tick
    updates_limited: int             # updates whose motion a joint's or actuator's limit changed
    com_height_out_of_reach: float   # [m] how far the CoM reference's height lies beyond the height granted
    limb_time_scale: float           # the J-busy limbs' clock's speed (1: as asked)
    step_phase: Optional[str]        # the stepping's phase (None: the mode does not step)
    steps_taken: int
    steps_cut_short: int             # ... put down where the swing leg stopped following
    largest_sole_tilt: float = 0.0   # [rad] of the stance soles from the floor (model.soles.sole_tilt)
    tipping_feet: tuple = ()         # names of the stance feet whose soles tilt beyond model.soles.TIPPING_TILT
    tipping_updates: int = 0         # updates with a stance sole tipping

    def health(self):
        """The controller's verdict: WARN for a fallback wrench distribution, else for joint limits not met, else for a
        stance sole tipping; OK."""
        if self.qp_status.fallback:
            return Health(HealthLevel.WARN, Concern.QP_FALLBACK)
        if self.joint_limits is LimitStatus.NOT_MET:
            return Health(HealthLevel.WARN, Concern.LIMITS_NOT_MET)
        if self.tipping_feet:
            return Health(HealthLevel.WARN, Concern.SOLE_TIPPING)
        return Health(HealthLevel.OK)
