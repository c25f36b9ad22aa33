"""Recordings of runs as rosbag2 (MCAP) directories: every topic of the graph, plus the robot's /tf (issue 21)."""
from humanoid_balance.recording.bag import TYPESTORE, Bag, bag_path
from humanoid_balance.recording.recorder import LATCHED_QOS, GraphRecorder
from humanoid_balance.recording.transforms import RobotTransforms, TransformRecorder

__all__ = ["TYPESTORE", "LATCHED_QOS", "Bag", "bag_path", "GraphRecorder", "RobotTransforms", "TransformRecorder"]
