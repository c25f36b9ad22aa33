"""Estimators on the robot model (no ROS)."""
from humanoid_balance.estimation.passive_state import PassiveState, PassiveStateEstimator

__all__ = ["PassiveState", "PassiveStateEstimator"]
