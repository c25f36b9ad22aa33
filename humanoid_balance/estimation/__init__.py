"""Estimators on the robot model (no ROS)."""
from humanoid_balance.estimation.calibration import CalibrationResult, calibrate_actuator_offsets
from humanoid_balance.estimation.floating_base import BaseEstimate, FloatingBaseEstimator
from humanoid_balance.estimation.passive_state import PassiveState, PassiveStateEstimator

__all__ = ["BaseEstimate", "CalibrationResult", "FloatingBaseEstimator", "PassiveState", "PassiveStateEstimator",
           "calibrate_actuator_offsets"]
