"""The balance suite for a real robot or Gazebo (no simulator): remap its inputs onto ros2_control's
broadcasters with launch arguments.

    ros2 launch humanoid_balance balance.launch.py \
        joint_states_topic:=/joint_states imu_topic:=/imu_sensor_broadcaster/imu \
        contact_mode:=ft_sensors left_wrench_topic:=/left_foot_ft_broadcaster/wrench
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare("humanoid_balance")
    arguments = [
        DeclareLaunchArgument("urdf_file", default_value=PathJoinSubstitution([share, "urdf", "kangaroo_like.urdf"]),
                              description="URDF of the robot's spanning tree"),
        DeclareLaunchArgument("loops_file",
                              default_value=PathJoinSubstitution([share, "config", "kangaroo_like.loops.yaml"]),
                              description="loop-closure YAML ('' for a serial robot)"),
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
        DeclareLaunchArgument("balance_mode", default_value="kinematic",
                              description="centroidal_balancer mode: kinematic | momentum | viip"),
        DeclareLaunchArgument("commands_topic", default_value="/forward_command_controller/commands",
                              description="forward_command_controller input (Float64MultiArray, `actuated` order)"),
        DeclareLaunchArgument("command_interface", default_value="position",
                              description="what actuator_commands carries: position | velocity | effort"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="follow /clock"),
    ]
    robot = {"urdf_file": LaunchConfiguration("urdf_file"), "loops_file": LaunchConfiguration("loops_file"),
             "use_sim_time": LaunchConfiguration("use_sim_time")}
    state_estimator = Node(
        package="humanoid_balance", executable="state_estimator", name="state_estimator", output="screen",
        parameters=[PathJoinSubstitution([share, "config", "state_estimator.yaml"]), robot],
        remappings=[("joint_states", LaunchConfiguration("joint_states_topic")),
                    ("imu", LaunchConfiguration("imu_topic"))],
    )
    contact_estimator = Node(
        package="humanoid_balance", executable="contact_estimator", name="contact_estimator", output="screen",
        parameters=[PathJoinSubstitution([share, "config", "contact_estimator.yaml"]), robot,
                    {"mode": LaunchConfiguration("contact_mode")}],
        remappings=[("left_foot/wrench", LaunchConfiguration("left_wrench_topic")),
                    ("right_foot/wrench", LaunchConfiguration("right_wrench_topic"))],
    )
    centroidal_balancer = Node(
        package="humanoid_balance", executable="centroidal_balancer", name="centroidal_balancer", output="screen",
        parameters=[PathJoinSubstitution([share, "config", "centroidal_balancer.yaml"]), robot,
                    {"mode": LaunchConfiguration("balance_mode")}],
    )
    loop_closure_mapper = Node(
        package="humanoid_balance", executable="loop_closure_mapper", name="loop_closure_mapper", output="screen",
        parameters=[PathJoinSubstitution([share, "config", "loop_closure_mapper.yaml"]), robot,
                    {"command_interface": LaunchConfiguration("command_interface")}],
        remappings=[("actuator_commands", LaunchConfiguration("commands_topic"))],
    )
    return LaunchDescription([*arguments, state_estimator, contact_estimator, centroidal_balancer, loop_closure_mapper])
