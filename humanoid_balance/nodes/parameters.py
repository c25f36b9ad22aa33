"""Node parameters: descriptors, and the robot configuration's parameters every node declares
(:mod:`humanoid_balance.model.robot_config`)."""
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.parameter import Parameter

from humanoid_balance.model.robot_config import config_from_parameters, load_robot_config, robot_config_parameters
from humanoid_balance.resources import robot_config_file

__all__ = ["describe", "declare_robot", "ROBOT_PARAMETERS"]


def describe(text, read_only=False, **ranges):
    """A ParameterDescriptor with a description (and optional ranges given as descriptors' fields)."""
    return ParameterDescriptor(description=text, read_only=read_only, **ranges)


ROBOT_PARAMETERS = {  # name → what it is (model/robot_config.py); EMPTY_TYPES: their type when the default is empty
    "urdf_file": "URDF of the spanning tree", "loops_file": "loop-closure YAML ('' for a serial robot)",
    "feet": "foot names (topics contact/<foot>/...)", "soles": "sole frames, one per foot",
    "sole_rectangles": "[x_min, x_max, y_min, y_max] per foot in the sole frame [m] ([] = from collision boxes)",
    "busy_limbs": "J-busy limbs following balance/<limb>/trajectory",
    "stance_joints": "joints of the standing configuration", "stance_positions": "their values [rad, m]",
    "base_frame": "root link (REP-105 base_link; '' = the URDF's root)", "imu_frame": "IMU frame ('' = root link)",
    "drive_stiffness": "plant position drives [N/m, N·m/rad] (prismatic, revolute)",
    "drive_damping": "plant position drives [N·s/m, N·m·s/rad] (prismatic, revolute)",
    "impedance_stiffness": "joint impedance of the serial-equivalent outputs [N/m, N·m/rad] (prismatic, revolute); "
                           "loop_closure_mapper maps it onto the actuators",
    "impedance_damping": "joint impedance of the outputs [N·s/m, N·m·s/rad] (prismatic, revolute)",
}
EMPTY_TYPES = {"sole_rectangles": Parameter.Type.DOUBLE_ARRAY, "stance_positions": Parameter.Type.DOUBLE_ARRAY,
               "busy_limbs": Parameter.Type.STRING_ARRAY, "stance_joints": Parameter.Type.STRING_ARRAY}


def declare_robot(node, run_time=()):
    """Declare the robot configuration's parameters (:mod:`humanoid_balance.model.robot_config`; defaults: the
    bundled robot) and return the :class:`RobotConfig` they give. A ``--params-file`` written by ``humanoid-balance
    init`` sets them all; they are read-only but for the ``run_time`` ones, which the node validates and follows.
    Raises ModelFileError naming the parameter that is wrong."""
    defaults = robot_config_parameters(load_robot_config(robot_config_file()))

    def declare(name, text, kind=None):
        default = defaults.get(name)
        if default in (None, []):
            default = kind or EMPTY_TYPES.get(name, Parameter.Type.STRING_ARRAY)
        value = node.declare_parameter(name, default, describe(text, name not in run_time)).value
        return [] if value is None else value

    values = {name: declare(name, text) for name, text in ROBOT_PARAMETERS.items()}
    for foot in values["feet"]:
        values[f"{foot}_joints"] = declare(f"{foot}_joints", "serial-equivalent leg joints, hip to ankle")
    for limb in values["busy_limbs"]:
        values[f"{limb}_joints"] = declare(f"{limb}_joints", "joints of a J-busy limb")
        values[f"{limb}_end_frame"] = declare(f"{limb}_end_frame", "end frame of a J-busy limb", Parameter.Type.STRING)
        values[f"{limb}_swing"] = declare(f"{limb}_swing", "the demo's swing: offsets at mid-swing [rad]",
                                          Parameter.Type.DOUBLE_ARRAY)
    return config_from_parameters(values.get, f"{node.get_name()} parameters")
