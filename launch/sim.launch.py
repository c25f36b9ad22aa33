"""The balance suite on the embedded MuJoCo plant, watched in RViz: no robot and no Gazebo needed.

    ros2 launch humanoid_balance sim.launch.py                 # kangaroo_like, real time, RViz if installed
    ros2 launch humanoid_balance sim.launch.py rviz:=false real_time:=false
    ros2 launch humanoid_balance sim.launch.py balance_mode:=momentum   # on the actuators' joint impedance
    ros2 topic pub --once /sim/push geometry_msgs/WrenchStamped \
        "{header: {frame_id: base_link}, wrench: {force: {y: 60.0}}}"

The nodes and parameter files are the ones `humanoid-balance demo` runs in one process: balance.launch.py with
its topics on the plant's (joint_states, imu, actuator_commands), contacts from actuator forces, every node on
the plant's /clock. The plant takes config/mujoco_sim.yaml, the robot's values over it (a plant key in a robot.yaml,
push_duration say, wins), then the arguments: ``real_time`` and the command interface the balance mode sends.
Like the suite's nodes, the plant is required: if it exits with an error, the launch stops with a non-zero exit.

robot_state_publisher (draws every link in RViz) and RViz are optional: ``robot_state_publisher:=`` and
``rviz:=`` take ``auto`` (the default: start it where its package is installed, else say so and go on), ``true``
(it must start: a missing package stops the launch before anything has started) or ``false``.
"""
import os

from ament_index_python.packages import PackageNotFoundError, get_package_prefix
from launch import LaunchDescription
from launch.actions import (DeclareLaunchArgument, IncludeLaunchDescription, LogInfo, OpaqueFunction,
                            SetLaunchConfiguration)
from launch.conditions import IfCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from humanoid_balance.control.balancer import MODES
from humanoid_balance.deployment import PLANT, mode_parameters, node_parameters
from humanoid_balance.launch_support import parameter_file, required
from humanoid_balance.model.meshes import description_text
from humanoid_balance.resources import robot_config_file

OPTIONAL = {  # launch argument → the ROS 2 packages it needs
    "robot_state_publisher": ("robot_state_publisher",),
    "rviz": ("rviz2", "rviz_default_plugins"),
}
CHOICES = ("auto", "true", "false")


def installed(package):
    try:
        get_package_prefix(package)
    except PackageNotFoundError:
        return False
    return True


def choose_optional_nodes(context):
    """Sets ``start_<argument>`` for each optional node from its argument and what is installed. Runs before any
    process is started, so a required package that is missing ends the launch with nothing left running."""
    actions = []
    for argument, packages in OPTIONAL.items():
        choice = LaunchConfiguration(argument).perform(context)  # one of CHOICES: DeclareLaunchArgument checks
        missing = [package for package in packages if not installed(package)]
        if missing and choice == "true":
            debs = " ".join(f"ros-{os.environ.get('ROS_DISTRO', 'kilted')}-{p.replace('_', '-')}" for p in missing)
            raise RuntimeError(f"sim.launch.py: {argument}:=true needs the ROS 2 package(s) {', '.join(missing)}, "
                               f"which are not installed: sudo apt install {debs}, or launch with {argument}:=false")
        if missing and choice == "auto":
            actions.append(LogInfo(msg=f"{argument} not started: {', '.join(missing)} not installed "
                                       f"({argument}:=auto)"))
        start = choice == "true" or (choice == "auto" and not missing)
        actions.append(SetLaunchConfiguration(f"start_{argument}", "true" if start else "false"))
    return actions


def robot_nodes(context):
    """The plant and robot_state_publisher of the robot the ``robot`` argument names (a folder of
    humanoid-balance init, its robot.yaml, or a bundled robot). The plant's parameters: config/mujoco_sim.yaml,
    the robot's values over them, then the arguments (humanoid_balance.deployment); it is required, as the
    suite's nodes are."""
    robot = robot_config_file(LaunchConfiguration("robot").perform(context))
    mode = LaunchConfiguration("balance_mode").perform(context)
    real_time = LaunchConfiguration("real_time").perform(context) == "true"
    parameters = node_parameters(PLANT, robot, {**mode_parameters(mode)[PLANT], "real_time": real_time})
    description = {"robot_description": description_text(parameters["urdf_file"]), "use_sim_time": True}
    path, cleanup = parameter_file({PLANT: parameters, "robot_state_publisher": description}, PLANT)
    plant = Node(package="humanoid_balance", executable=PLANT, name=PLANT, output="screen", parameters=[path])
    robot_state_publisher = Node(  # draws every link, passive ones included, from the estimated joint states
        package="robot_state_publisher", executable="robot_state_publisher", name="robot_state_publisher",
        output="screen", condition=IfCondition(LaunchConfiguration("start_robot_state_publisher")),
        parameters=[path], remappings=[("joint_states", "estimated_joint_states")],
    )
    return [cleanup, *required(plant), robot_state_publisher]


def generate_launch_description():
    share = FindPackageShare("humanoid_balance")
    arguments = [
        DeclareLaunchArgument("robot", default_value="kangaroo_like",
                              description="a folder written by `humanoid-balance init` (or its robot.yaml), or a "
                                          "bundled robot's name"),
        DeclareLaunchArgument("real_time", default_value="true", choices=["true", "false"],
                              description="pace the plant to the wall clock (false: as fast as the loop allows)"),
        DeclareLaunchArgument("balance_mode", default_value="kinematic", choices=list(MODES),
                              description="centroidal_balancer mode: kinematic | momentum (on the plant's joint "
                                          "impedance) | viip"),
        DeclareLaunchArgument("robot_state_publisher", default_value="auto", choices=list(CHOICES),
                              description="robot_state_publisher for RViz's robot model: auto (if installed) | true "
                                          "| false"),
        DeclareLaunchArgument("rviz", default_value="auto", choices=list(CHOICES),
                              description="RViz with rviz/humanoid_balance.rviz: auto (if installed) | true | false"),
    ]
    suite = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([share, "launch", "balance.launch.py"])),
        launch_arguments={"robot": LaunchConfiguration("robot"), "joint_states_topic": "joint_states",
                          "imu_topic": "imu", "contact_mode": "actuator_forces", "commands_topic": "actuator_commands",
                          "command_interface": "auto", "balance_mode": LaunchConfiguration("balance_mode"),
                          "use_sim_time": "true"}.items(),
    )
    rviz = Node(
        package="rviz2", executable="rviz2", output="screen",
        condition=IfCondition(LaunchConfiguration("start_rviz")),
        arguments=["-d", PathJoinSubstitution([share, "rviz", "humanoid_balance.rviz"])],
        parameters=[{"use_sim_time": True}],
    )
    return LaunchDescription([*arguments, OpaqueFunction(function=choose_optional_nodes),
                              OpaqueFunction(function=robot_nodes), suite, rviz])
