"""The balance suite on the embedded MuJoCo plant, watched in RViz: no robot and no Gazebo needed.

    ros2 launch humanoid_balance sim.launch.py                 # kangaroo_like, real time, RViz if installed
    ros2 launch humanoid_balance sim.launch.py rviz:=false real_time:=false
    ros2 launch humanoid_balance sim.launch.py balance_mode:=momentum   # on the actuators' joint impedance
    ros2 topic pub --once /sim/push geometry_msgs/WrenchStamped \
        "{header: {frame_id: base_link}, wrench: {force: {y: 60.0}}}"

The nodes, their wiring and their parameter files are balance.launch.py's (humanoid_balance.launch_support) and
the ones `humanoid-balance demo` runs in one process. Of balance.launch.py's arguments, sim.launch.py takes those the
plant leaves open — ``robot``, ``balance_mode``, ``command_interface`` (the plant's and the mapper's), ``composed``
and ``contact_mode`` (``actuator_forces`` by default; ``ft_sensors`` turns the plant's foot F/T sensors on) — and
settles the others: the nodes' topics are the plant's (joint_states, imu, <foot>/wrench, actuator_commands) and every
node, the plant too, runs on the /clock the plant publishes, so that all of them report on /diagnostics once a
simulated second (humanoid_balance.deployment.simulation_parameters).

``real_time:=true`` (the default) runs the plant free against the wall clock, as a robot: it steps as far as the
wall clock has gone, nothing waits for the controller, at a control rate of 100 Hz (what a 2-core machine
sustains). ``real_time:=false`` runs it in lockstep, as the demo does: each tick waits for the command computed from
the one before, so the loop runs as fast as it can (slower than real time on a small machine), with exactly one tick
of delay at 500 Hz however loaded the machine is: reproducible runs. The plant takes config/mujoco_sim.yaml, the
robot's values over it (a plant key in a robot.yaml, push_duration say, wins), then the arguments'. Like the suite's
nodes, the plant is required: if it exits, the launch stops, with a non-zero exit if it failed.

robot_state_publisher (draws every link in RViz) and RViz are optional: ``robot_state_publisher:=`` and
``rviz:=`` take ``auto`` (the default: start it where its package is installed, else say so and go on), ``true``
(it must start: a missing package stops the launch before anything has started) or ``false``.
"""
import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction, SetLaunchConfiguration
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from humanoid_balance.deployment import PLANT, REAL_TIME_RATE, simulation_parameters
from humanoid_balance.launch_support import (ARGUMENTS, declare, package_installed, parameter_file, required,
                                             suite_nodes, suite_parameters_of)
from humanoid_balance.mapping import IMPEDANCE_FIELDS
from humanoid_balance.model.meshes import description_text

SETTLED = {  # balance.launch.py's arguments the plant settles: its topics (None: the node's own, not remapped)...
    **{name: None for name in ("joint_states_topic", "imu_topic", "left_wrench_topic", "right_wrench_topic",
                               "commands_topic", *(f"{field}_commands_topic" for field in IMPEDANCE_FIELDS))},
    "per_interface_topics": "false",  # ... actuator_commands alone, which it reads ...
    "use_sim_time": "true",           # ... and its /clock
}
OPTIONAL = {  # launch argument → the ROS 2 packages it needs
    "robot_state_publisher": ("robot_state_publisher",),
    "rviz": ("rviz2", "rviz_default_plugins"),
}
CHOICES = ("auto", "true", "false")


def choose_optional_nodes(context):
    """Sets ``start_<argument>`` for each optional node from its argument and what is installed. Runs before any
    process is started, so a required package that is missing ends the launch with nothing left running."""
    actions = []
    for argument, packages in OPTIONAL.items():
        choice = LaunchConfiguration(argument).perform(context)  # one of CHOICES: DeclareLaunchArgument checks
        missing = [package for package in packages if not package_installed(package)]
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


def nodes(context):
    """The plant, the suite and robot_state_publisher of the robot the ``robot`` argument names (a folder of
    humanoid-balance init, its robot.yaml, or a bundled robot). The plant's parameters: config/mujoco_sim.yaml,
    the robot's values over them, then what the suite on the plant needs and the arguments'
    (humanoid_balance.deployment); it is required, as the suite's nodes are."""
    contact_mode = LaunchConfiguration("contact_mode").perform(context)
    real_time = LaunchConfiguration("real_time").perform(context) == "true"
    values, parameters = suite_parameters_of(context, SETTLED, simulation_parameters(
        contact_mode, REAL_TIME_RATE if real_time else None))
    description = {"robot_description": description_text(parameters[PLANT]["urdf_file"]), "use_sim_time": True}
    path, cleanup = parameter_file({PLANT: parameters[PLANT], "robot_state_publisher": description}, PLANT)
    plant = Node(package="humanoid_balance", executable=PLANT, name=PLANT, output="screen", parameters=[path])
    robot_state_publisher = Node(  # draws every link, passive ones included, from the estimated joint states
        package="robot_state_publisher", executable="robot_state_publisher", name="robot_state_publisher",
        output="screen", condition=IfCondition(LaunchConfiguration("start_robot_state_publisher")),
        parameters=[path], remappings=[("joint_states", "estimated_joint_states")],
    )
    return [cleanup, *required(plant), *suite_nodes(values, parameters), robot_state_publisher]


def generate_launch_description():
    share = FindPackageShare("humanoid_balance")
    arguments = [
        *declare(["robot"]),
        DeclareLaunchArgument("real_time", default_value="true", choices=["true", "false"],
                              description=f"true: the plant runs free against the wall clock at "
                                          f"{REAL_TIME_RATE:g} Hz, as a robot (nothing waits for the controller) | "
                                          "false: in lockstep, each tick waiting for its command, as fast as the "
                                          "loop allows (reproducible, as the demo)"),
        *declare([name for name in ARGUMENTS if name not in SETTLED and name != "robot"],
                 contact_mode="actuator_forces"),
        DeclareLaunchArgument("robot_state_publisher", default_value="auto", choices=list(CHOICES),
                              description="robot_state_publisher for RViz's robot model: auto (if installed) | true "
                                          "| false"),
        DeclareLaunchArgument("rviz", default_value="auto", choices=list(CHOICES),
                              description="RViz with rviz/humanoid_balance.rviz: auto (if installed) | true | false"),
    ]
    rviz = Node(
        package="rviz2", executable="rviz2", output="screen",
        condition=IfCondition(LaunchConfiguration("start_rviz")),
        arguments=["-d", PathJoinSubstitution([share, "rviz", "humanoid_balance.rviz"])],
        parameters=[{"use_sim_time": True}],
    )
    return LaunchDescription([*arguments, OpaqueFunction(function=choose_optional_nodes),
                              OpaqueFunction(function=nodes), rviz])
