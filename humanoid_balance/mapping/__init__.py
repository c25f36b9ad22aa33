"""Serial-equivalent joints ↔ actuators (no ROS)."""
from humanoid_balance.mapping.actuator_map import ActuatorCommand, ActuatorMap

__all__ = ["ActuatorCommand", "ActuatorMap"]
