"""Robot models on pinocchio: URDF spanning tree + loop closures (no ROS)."""
from humanoid_balance.model.actuators import ballscrew_force, ballscrew_motor_torque
from humanoid_balance.model.centroidal import Centroidal, InertiaDecoupling
from humanoid_balance.model.closed_chain import ClosedChain, Linearization, PassiveSolution
from humanoid_balance.model.continuation import close_loops, continue_closure
from humanoid_balance.model.errors import ClosureError, ModelError, ModelFileError, SingularConfigurationError
from humanoid_balance.model.loop_closures import AXES, ActuatorSpec, LoopClosure, LoopClosureSpec, load_loop_closures
from humanoid_balance.model.projected_dynamics import (
    ProjectedDynamics,
    contact_forces_from_actuator_efforts,
    generalized_gravity,
    projected_dynamics,
    quasi_static_actuator_efforts,
)
from humanoid_balance.model.robot import RobotModel, load_robot

__all__ = [
    "AXES", "ActuatorSpec", "Centroidal", "ClosedChain", "ClosureError", "InertiaDecoupling", "Linearization",
    "LoopClosure", "LoopClosureSpec", "ModelError", "ModelFileError", "PassiveSolution", "ProjectedDynamics",
    "RobotModel", "SingularConfigurationError", "ballscrew_force", "ballscrew_motor_torque", "close_loops",
    "contact_forces_from_actuator_efforts", "continue_closure", "generalized_gravity", "load_loop_closures",
    "load_robot", "projected_dynamics", "quasi_static_actuator_efforts",
]
