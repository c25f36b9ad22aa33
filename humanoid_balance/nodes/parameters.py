"""Node parameters: descriptors, and the robot configuration's parameters every node declares
(:data:`humanoid_balance.model.robot_config.ROBOT_SCHEMA`)."""
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.parameter import Parameter

from humanoid_balance.model.robot_config import (FOOT_PARAMETERS, LIMB_PARAMETERS, NAMES, NUMBERS, ROBOT_SCHEMA,
                                                 TEXT, config_from_parameters, load_robot_config,
                                                 robot_config_parameters, robot_parameter)
from humanoid_balance.resources import robot_config_file

__all__ = ["describe", "declare_robot", "declare_robot_parameter", "ROBOT_PARAMETERS"]

ROBOT_PARAMETERS = tuple(parameter for parameter in ROBOT_SCHEMA if parameter.every_node)
"""What every node declares of the robot configuration; the rest (gains, cutoff) only the node that uses it."""
EMPTY_TYPES = {NAMES: Parameter.Type.STRING_ARRAY, NUMBERS: Parameter.Type.DOUBLE_ARRAY, TEXT: Parameter.Type.STRING}
"""A parameter's type by its kind, where its default (empty) does not tell."""


def describe(text, read_only=False, **ranges):
    """A ParameterDescriptor with a description (and optional ranges given as descriptors' fields)."""
    return ParameterDescriptor(description=text, read_only=read_only, **ranges)


def declare_robot_parameter(node, name, read_only=True):
    """Declare ``name``, a parameter of the robot configuration a node uses itself (k_p, cutoff_frequency,
    cartesian_limbs), with the schema's default (an empty list: typed by its kind) and description; its value."""
    parameter = robot_parameter(name)
    default = EMPTY_TYPES[parameter.kind] if parameter.default == () else parameter.default
    value = node.declare_parameter(name, default, describe(parameter.description, read_only)).value
    return [] if value is None else value


def declare_robot(node, run_time=()):
    """Declare the robot configuration's parameters (:data:`ROBOT_PARAMETERS`; defaults: the bundled robot) and
    return the :class:`RobotConfig` they give. A ``--params-file`` written by ``humanoid-balance init`` sets them all;
    they are read-only but for the ``run_time`` ones, which the node validates and follows. Raises ModelFileError
    naming the parameter that is wrong."""
    defaults = robot_config_parameters(load_robot_config(robot_config_file()))

    def declare(parameter, owner=None):
        name = parameter.name.format(owner)
        default = defaults.get(name)
        if default in (None, []):
            default = EMPTY_TYPES.get(parameter.kind, Parameter.Type.STRING_ARRAY)
        value = node.declare_parameter(name, default, describe(parameter.description, name not in run_time)).value
        return name, ([] if value is None else value)

    values = dict(declare(parameter) for parameter in ROBOT_PARAMETERS)
    values.update(declare(parameter, foot) for foot in values["feet"] for parameter in FOOT_PARAMETERS)
    values.update(declare(parameter, limb) for limb in values["busy_limbs"] for parameter in LIMB_PARAMETERS)
    return config_from_parameters(values.get, f"{node.get_name()} parameters")
