"""Estimators on the robot model (no ROS)."""
from humanoid_balance.estimation.calibration import (CalibrationResult, calibrate_actuator_offsets, load_offsets,
                                                    save_offsets)
from humanoid_balance.estimation.floating_base import BaseEstimate, FloatingBaseEstimator
from humanoid_balance.estimation.passive_state import PassiveState, PassiveStateEstimator
from humanoid_balance.estimation.robot_state import ImuSample, RobotState, RobotStateEstimator

__all__ = ["BaseEstimate", "CalibrationResult", "FloatingBaseEstimator", "ImuSample", "PassiveState",
           "PassiveStateEstimator", "RobotState", "RobotStateEstimator", "calibrate_actuator_offsets", "load_offsets",
           "save_offsets"]
