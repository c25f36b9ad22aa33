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

Every node is required: one that exits while the launch runs ends it with a line naming it — non-zero (a robot file
with a misspelled frame, say: it prints why) with a non-zero exit, 0 (stopped alone, by SIGINT say) with exit 0.
sim.launch.py starts the same nodes, wired the same way (humanoid_balance.launch_support), on the embedded plant.
"""
from launch import LaunchDescription
from launch.actions import OpaqueFunction

from humanoid_balance.launch_support import ARGUMENTS, declare, suite_nodes, suite_parameters_of


def suite(context):
    """The four nodes as the arguments give them."""
    return suite_nodes(*suite_parameters_of(context))


def generate_launch_description():
    return LaunchDescription([*declare(ARGUMENTS), OpaqueFunction(function=suite)])
