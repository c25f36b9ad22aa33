"""Serial-equivalent joints ↔ actuators (no ROS)."""
from humanoid_balance.mapping.actuator_map import ActuatorCommand, ActuatorMap
from humanoid_balance.mapping.joint_impedance import IMPEDANCE_FIELDS

__all__ = ["ActuatorCommand", "ActuatorMap", "IMPEDANCE_FIELDS"]
