"""Serial-equivalent joints ↔ actuators (no ROS)."""
from humanoid_balance.mapping.actuator_map import ActuatorCommand, ActuatorMap
from humanoid_balance.mapping.joint_impedance import COMMAND_FIELDS, IMPEDANCE_FIELDS

__all__ = ["ActuatorCommand", "ActuatorMap", "COMMAND_FIELDS", "IMPEDANCE_FIELDS"]
