"""The balance suite for a real robot or Gazebo (no simulator): remap its inputs onto ros2_control's broadcasters
with launch arguments.

    ros2 launch humanoid_balance balance.launch.py \
        joint_states_topic:=/joint_states imu_topic:=/imu_sensor_broadcaster/imu \
        contact_mode:=ft_sensors left_wrench_topic:=/left_foot_ft_broadcaster/wrench

``robot:=DIR`` runs it on a robot configured by ``humanoid-balance init`` (DIR/robot.yaml; default: the bundled
kangaroo_like, or give another bundled robot's name). ``composed:=true`` runs the four nodes in one process
(balance_stack, one executor: the Python counterpart of a component container, for machines with few cores) with
the same topics, parameters and remaps.

A torque-controlled robot runs ``balance_mode:=momentum``: the mapper then sends each actuator's joint impedance
(``command_interface:=auto`` picks ``impedance`` for momentum mode, ``position`` otherwise) — on commands_topic as
five rows (position, velocity, effort, stiffness, damping) and, with ``per_interface_topics:=true``, one
Float64MultiArray per field on ``<field>_commands_topic`` (default /<field>_controller/commands), one
forward_command_controller each.
"""
import tempfile

import yaml
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition, UnlessCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

FIELDS = ("position", "velocity", "effort", "stiffness", "damping")  # a joint-impedance command, per_interface_topics
NODES = ("state_estimator", "contact_estimator", "centroidal_balancer", "loop_closure_mapper")
REMAPS = {  # node → (its topic, the launch argument naming the topic it is remapped to)
    "state_estimator": (("joint_states", "joint_states_topic"), ("imu", "imu_topic")),
    "contact_estimator": (("left_foot/wrench", "left_wrench_topic"), ("right_foot/wrench", "right_wrench_topic")),
    "centroidal_balancer": (),
    "loop_closure_mapper": (("actuator_commands", "commands_topic"),
                            *((f"actuator_commands/{field}", f"{field}_commands_topic") for field in FIELDS)),
}
OVERRIDES = {  # node → (its parameter, the launch argument giving it), on top of config/<node>.yaml
    "state_estimator": (),
    "contact_estimator": (("mode", "contact_mode"),),
    "centroidal_balancer": (("mode", "balance_mode"),),
    "loop_closure_mapper": (("command_interface", "command_interface"), ("per_interface_topics",
                                                                          "per_interface_topics")),
}
BOOLEANS = ("use_sim_time", "per_interface_topics")
ROBOT = (("use_sim_time", "use_sim_time"),)


def parameter_file(share, node):
    return PathJoinSubstitution([share, "config", f"{node}.yaml"])


def robot_file(context):
    """The robot configuration the ``robot`` argument names (a folder of humanoid-balance init, its robot.yaml, or
    a bundled robot); every node reads it after its own parameter file, so the robot's values win."""
    from humanoid_balance.resources import robot_config_file  # the installed package, as the nodes use it

    return str(robot_config_file(LaunchConfiguration("robot").perform(context)))


def argument_value(context, argument):
    """A launch argument as its parameter takes it: booleans as bool, ``command_interface:=auto`` as impedance in
    momentum mode and position otherwise."""
    text = LaunchConfiguration(argument).perform(context)
    if argument in BOOLEANS:
        return text == "true"
    if argument == "command_interface" and text == "auto":
        from humanoid_balance.control.balancer import COMMAND_INTERFACES  # the installed package, as the nodes use

        return COMMAND_INTERFACES[LaunchConfiguration("balance_mode").perform(context)]
    return text


def robot_files(context):
    """The robot configuration's files as absolute paths (a folder of init names them relative to itself)."""
    from humanoid_balance.model.robot_config import robot_file_parameters

    return robot_file_parameters(robot_file(context))


def separate_nodes(context, share):
    robot, files = robot_file(context), robot_files(context)
    return [Node(package="humanoid_balance", executable=node, name=node, output="screen",
                 parameters=[parameter_file(share, node), robot,  # the robot's values over the defaults
                             {**files, **{parameter: argument_value(context, argument)
                                          for parameter, argument in ROBOT + OVERRIDES[node]}}],
                 remappings=[(topic, LaunchConfiguration(argument)) for topic, argument in REMAPS[node]])
            for node in NODES]


def composed_stack(context, share):
    """balance_stack with every node's parameter file and its overrides scoped to its name (the process's
    arguments reach all four nodes, so a plain dict would give the balancer the contact estimator's mode)."""
    def value(argument):
        return argument_value(context, argument)

    files = robot_files(context)
    overrides = {f"/**/{node}": {"ros__parameters": {**files, **{parameter: value(argument)
                                                                for parameter, argument in ROBOT + OVERRIDES[node]}}}
                 for node in NODES}
    with tempfile.NamedTemporaryFile("w", prefix="balance_stack_", suffix=".yaml", delete=False) as handle:
        yaml.safe_dump(overrides, handle)
    return [Node(package="humanoid_balance", executable="balance_stack", output="screen",
                 parameters=[*(parameter_file(share, node) for node in NODES), robot_file(context), handle.name],
                 remappings=[(topic, LaunchConfiguration(argument)) for node in NODES
                             for topic, argument in REMAPS[node]])]


def generate_launch_description():
    share = FindPackageShare("humanoid_balance")
    arguments = [
        DeclareLaunchArgument("robot", default_value="kangaroo_like",
                              description="a folder written by `humanoid-balance init` (or its robot.yaml), or a "
                                          "bundled robot's name"),
        DeclareLaunchArgument("joint_states_topic", default_value="/joint_states",
                              description="joint_state_broadcaster output (actuated + measured passive joints)"),
        DeclareLaunchArgument("imu_topic", default_value="/imu_sensor_broadcaster/imu",
                              description="imu_sensor_broadcaster output"),
        DeclareLaunchArgument("contact_mode", default_value="ft_sensors",
                              description="contact_estimator mode: ft_sensors | actuator_forces"),
        DeclareLaunchArgument("left_wrench_topic", default_value="/left_foot_ft_broadcaster/wrench",
                              description="force_torque_sensor_broadcaster output of the left foot"),
        DeclareLaunchArgument("right_wrench_topic", default_value="/right_foot_ft_broadcaster/wrench",
                              description="force_torque_sensor_broadcaster output of the right foot"),
        DeclareLaunchArgument("balance_mode", default_value="kinematic", choices=["kinematic", "momentum", "viip"],
                              description="centroidal_balancer mode: kinematic | momentum (joint impedance) | viip"),
        DeclareLaunchArgument("commands_topic", default_value="/forward_command_controller/commands",
                              description="forward_command_controller input (Float64MultiArray, `actuated` order)"),
        DeclareLaunchArgument("command_interface", default_value="auto",
                              choices=["auto", "position", "velocity", "effort", "impedance"],
                              description="what actuator_commands carries: auto (impedance in momentum mode, else "
                                          "position) | position | velocity | effort | impedance"),
        DeclareLaunchArgument("per_interface_topics", default_value="false", choices=["true", "false"],
                              description="also one Float64MultiArray per command field on "
                                          "<field>_commands_topic (one forward_command_controller each)"),
        *(DeclareLaunchArgument(f"{field}_commands_topic", default_value=f"/{field}_controller/commands",
                                description=f"per_interface_topics: the {field} command's forward_command_controller "
                                            "input") for field in FIELDS),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="follow /clock"),
        DeclareLaunchArgument("composed", default_value="false", choices=["true", "false"],
                              description="the four nodes in one process (balance_stack) instead of four"),
    ]
    return LaunchDescription([*arguments,
                              OpaqueFunction(function=separate_nodes, args=[share],
                                             condition=UnlessCondition(LaunchConfiguration("composed"))),
                              OpaqueFunction(function=composed_stack, args=[share],
                                             condition=IfCondition(LaunchConfiguration("composed")))])
