"""Embedded MuJoCo plant built from the URDF + loop-closure YAML (no ROS)."""
from humanoid_balance.sim.model import build_mujoco_model
from humanoid_balance.sim.perturbation import NOMINAL, PlantPerturbation
from humanoid_balance.sim.simulation import INTERFACES, GroundTruth, Simulation

__all__ = ["INTERFACES", "GroundTruth", "Simulation", "build_mujoco_model", "PlantPerturbation", "NOMINAL"]
