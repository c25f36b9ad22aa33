"""The balance modes, one :class:`~humanoid_balance.control.balance_controller.BalanceController` each; which one
a robot runs, and what it needs of the drives, is :data:`humanoid_balance.control.balancer.BALANCE_MODES`."""
from humanoid_balance.control.modes.kinematic import KinematicBalance
from humanoid_balance.control.modes.momentum import MomentumBalance
from humanoid_balance.control.modes.viip import ViipBalance

__all__ = ["KinematicBalance", "MomentumBalance", "ViipBalance"]
