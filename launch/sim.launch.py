"""The balance suite on the embedded MuJoCo plant, watched in RViz: no robot and no Gazebo needed.

    ros2 launch humanoid_balance sim.launch.py                 # kangaroo_like, real time, RViz
    ros2 launch humanoid_balance sim.launch.py rviz:=false real_time:=false
    ros2 topic pub --once /sim/push geometry_msgs/WrenchStamped \
        "{header: {frame_id: base_link}, wrench: {force: {y: 60.0}}}"

The nodes and parameter files are the ones `humanoid-balance demo` runs in one process: balance.launch.py with
its topics on the plant's (joint_states, imu, actuator_commands), contacts from actuator forces, every node on
the plant's /clock.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.conditions import IfCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare("humanoid_balance")
    urdf, loops = LaunchConfiguration("urdf_file"), LaunchConfiguration("loops_file")
    arguments = [
        DeclareLaunchArgument("urdf_file", default_value=PathJoinSubstitution([share, "urdf", "kangaroo_like.urdf"]),
                              description="URDF of the robot's spanning tree"),
        DeclareLaunchArgument("loops_file",
                              default_value=PathJoinSubstitution([share, "config", "kangaroo_like.loops.yaml"]),
                              description="loop-closure YAML ('' for a serial robot)"),
        DeclareLaunchArgument("real_time", default_value="true",
                              description="pace the plant to the wall clock (false: as fast as the loop allows)"),
        DeclareLaunchArgument("balance_mode", default_value="kinematic",
                              description="centroidal_balancer mode: kinematic | momentum | viip"),
        DeclareLaunchArgument("rviz", default_value="true", description="start RViz with rviz/humanoid_balance.rviz"),
    ]
    plant = Node(
        package="humanoid_balance", executable="mujoco_sim", name="mujoco_sim", output="screen",
        parameters=[PathJoinSubstitution([share, "config", "mujoco_sim.yaml"]),
                    {"urdf_file": urdf, "loops_file": loops, "real_time": LaunchConfiguration("real_time")}],
    )
    suite = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([share, "launch", "balance.launch.py"])),
        launch_arguments={"urdf_file": urdf, "loops_file": loops, "joint_states_topic": "joint_states",
                          "imu_topic": "imu", "contact_mode": "actuator_forces", "commands_topic": "actuator_commands",
                          "command_interface": "position", "balance_mode": LaunchConfiguration("balance_mode"),
                          "use_sim_time": "true"}.items(),
    )
    robot_state_publisher = Node(  # draws every link, passive ones included, from the estimated joint states
        package="robot_state_publisher", executable="robot_state_publisher", output="screen",
        parameters=[{"robot_description": ParameterValue(Command(["cat ", urdf]), value_type=str),
                     "use_sim_time": True}],
        remappings=[("joint_states", "estimated_joint_states")],
    )
    rviz = Node(
        package="rviz2", executable="rviz2", output="screen", condition=IfCondition(LaunchConfiguration("rviz")),
        arguments=["-d", PathJoinSubstitution([share, "rviz", "humanoid_balance.rviz"])],
        parameters=[{"use_sim_time": True}],
    )
    return LaunchDescription([*arguments, plant, suite, robot_state_publisher, rviz])
