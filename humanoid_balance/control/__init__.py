"""Balance controllers on the robot model (no ROS): Choi–Kim ZMP–CoM control with embedded motions,
Sugihara–Nakamura VIIP, Garofalo et al. momentum-based wrench distribution."""
from humanoid_balance.control.balancer import (BALANCE_MODES, MODES, BalanceController, BalanceMode, BalancerConfig,
                                               BalancerState, Foot, JointCommand, Refused, balance_controller,
                                               change_mode)
from humanoid_balance.control.embedded_motion import BASE, C_BUSY, IDLE, J_BUSY, EmbeddedMotionResolver, Section
from humanoid_balance.control.momentum_balance import MomentumGains, WrenchDistribution
from humanoid_balance.control.viip import JumpSchedule
from humanoid_balance.control.zmp_com import GainError, ZmpComGains

__all__ = ["BALANCE_MODES", "BASE", "C_BUSY", "IDLE", "J_BUSY", "MODES", "BalanceController", "BalanceMode",
           "BalancerConfig", "BalancerState", "EmbeddedMotionResolver", "Foot", "GainError", "JointCommand",
           "JumpSchedule", "MomentumGains", "Refused", "Section", "WrenchDistribution", "ZmpComGains",
           "balance_controller", "change_mode"]
