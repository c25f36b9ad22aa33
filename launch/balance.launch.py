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
forward_command_controller each. ``balance_mode:=viip`` also has the mapper advance the position targets by the
drives' deflection, as the demo's jumps do (humanoid_balance.deployment.mode_parameters).

Every node is required: one that cannot start (a robot file with a misspelled frame, say) prints why and ends the
launch with a non-zero exit.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from humanoid_balance.control.balancer import MODES
from humanoid_balance.deployment import BALANCE_NODES, mode_parameters, suite_parameters
from humanoid_balance.estimation.contact_state import CONTACT_MODES
from humanoid_balance.launch_support import parameter_file, required
from humanoid_balance.resources import robot_config_file

FIELDS = ("position", "velocity", "effort", "stiffness", "damping")  # a joint-impedance command, per_interface_topics
REMAPS = {  # node → (its topic, the launch argument naming the topic it is remapped to)
    "state_estimator": (("joint_states", "joint_states_topic"), ("imu", "imu_topic")),
    "contact_estimator": (("left_foot/wrench", "left_wrench_topic"), ("right_foot/wrench", "right_wrench_topic"),
                          ("imu", "imu_topic")),
    "centroidal_balancer": (),
    "loop_closure_mapper": (("actuator_commands", "commands_topic"),
                            *((f"actuator_commands/{field}", f"{field}_commands_topic") for field in FIELDS)),
}
OVERRIDES = {  # node → (its parameter, the launch argument giving it), on top of config/<node>.yaml and the robot's
    "state_estimator": (),
    "contact_estimator": (("mode", "contact_mode"),),
    "centroidal_balancer": (),
    "loop_closure_mapper": (("per_interface_topics", "per_interface_topics"),),
}
BOOLEANS = ("use_sim_time", "per_interface_topics")


def argument(context, name):
    """A launch argument as its parameter takes it (booleans as bool)."""
    text = LaunchConfiguration(name).perform(context)
    return text == "true" if name in BOOLEANS else text


def launch_parameters(context):
    """node → its parameters: config/<node>.yaml, the robot's configuration (the ``robot`` argument: a folder of
    humanoid-balance init, its robot.yaml, or a bundled robot), the balance mode's profile, then the arguments,
    later ones winning (humanoid_balance.deployment)."""
    robot = robot_config_file(LaunchConfiguration("robot").perform(context))
    mode = mode_parameters(LaunchConfiguration("balance_mode").perform(context))
    interface = LaunchConfiguration("command_interface").perform(context)
    if interface != "auto":
        mode["loop_closure_mapper"]["command_interface"] = interface
    use_sim_time = argument(context, "use_sim_time")
    return suite_parameters(robot, {node: {**mode.get(node, {}), "use_sim_time": use_sim_time,
                                           **{key: argument(context, name) for key, name in OVERRIDES[node]}}
                                    for node in BALANCE_NODES})


def remaps(context, nodes):
    """The remaps of ``nodes``' topics the arguments give (each once: two nodes read imu)."""
    return list(dict.fromkeys((topic, LaunchConfiguration(name).perform(context))
                              for node in nodes for topic, name in REMAPS[node]))


def suite(context):
    """The four nodes, each a process (or, ``composed:=true``, balance_stack running them in one), each required:
    one that exits with an error stops the launch. Their parameters are one file, each node's in its own section
    (the process's parameter files reach every node it runs)."""
    parameters = launch_parameters(context)
    path, cleanup = parameter_file(parameters, "balance_launch")
    if LaunchConfiguration("composed").perform(context) == "true":
        processes = [Node(package="humanoid_balance", executable="balance_stack", output="screen",
                          parameters=[path], remappings=remaps(context, parameters))]
    else:
        processes = [Node(package="humanoid_balance", executable=node, name=node, output="screen",
                          parameters=[path], remappings=remaps(context, [node])) for node in parameters]
    return [cleanup, *(action for process in processes for action in required(process))]


def generate_launch_description():
    arguments = [
        DeclareLaunchArgument("robot", default_value="kangaroo_like",
                              description="a folder written by `humanoid-balance init` (or its robot.yaml), or a "
                                          "bundled robot's name"),
        DeclareLaunchArgument("joint_states_topic", default_value="/joint_states",
                              description="joint_state_broadcaster output (actuated + measured passive joints)"),
        DeclareLaunchArgument("imu_topic", default_value="/imu_sensor_broadcaster/imu",
                              description="imu_sensor_broadcaster output"),
        DeclareLaunchArgument("contact_mode", default_value="ft_sensors", choices=list(CONTACT_MODES),
                              description="contact_estimator mode: ft_sensors | actuator_forces"),
        DeclareLaunchArgument("left_wrench_topic", default_value="/left_foot_ft_broadcaster/wrench",
                              description="force_torque_sensor_broadcaster output of the left foot"),
        DeclareLaunchArgument("right_wrench_topic", default_value="/right_foot_ft_broadcaster/wrench",
                              description="force_torque_sensor_broadcaster output of the right foot"),
        DeclareLaunchArgument("balance_mode", default_value="kinematic", choices=list(MODES),
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
        DeclareLaunchArgument("use_sim_time", default_value="false", choices=["true", "false"],
                              description="every node on /clock"),
        DeclareLaunchArgument("composed", default_value="false", choices=["true", "false"],
                              description="the four nodes in one process (balance_stack) instead of four"),
    ]
    return LaunchDescription([*arguments, OpaqueFunction(function=suite)])
