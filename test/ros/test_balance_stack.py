"""balance_stack as one BalanceLoop: the four nodes built in one process with their Composition, driven by a plant's
joint_states and imu over DDS, send on actuator_commands exactly what a BalanceLoop built apart from the nodes, from
the robot's configuration (humanoid_balance.loop), computes on the same readings — one cycle per joint_states, the
stages in the loop's order with the feedback handed on within the tick — and none of the stack's nodes subscribes to a
topic another of them publishes. A node's output goes over DDS only to someone, and a lifecycle node's only while
active."""
import tempfile
from pathlib import Path

import numpy as np
import pytest
import rclpy
from rclpy.lifecycle import LifecycleNode
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64, Float64MultiArray

from humanoid_balance.bench.closed_loop import robot_config
from humanoid_balance.deployment import mode_parameters, simulation_parameters, suite_parameters, write_parameter_file
from humanoid_balance.estimation import ImuSample
from humanoid_balance.loop import BalanceLoop, Observation
from humanoid_balance.nodes import node_factory
from humanoid_balance.nodes.composition import BUILD_ORDER, Composition
from humanoid_balance.nodes.input_guard import advertise
from humanoid_balance.nodes.qos import RELIABLE_QOS, SENSOR_QOS
from humanoid_balance.resources import robot_config_file
from humanoid_balance.sim import Simulation

pytestmark = pytest.mark.dds

ROBOT = "kangaroo_like"
TICKS = 120
PATIENT = {"state_estimator": {}, "contact_estimator": {"imu_timeout": 30.0},  # a slow test is not a stale input
           "centroidal_balancer": {"input_timeout": 30.0}, "loop_closure_mapper": {"command_timeout": 30.0}}
CHAIN_TOPICS = ("estimated_joint_states", "odom", "zmp", "balance/joint_command", "/state", "/lifted")


def stamp_of(seconds):
    return rclpy.time.Time(nanoseconds=round(seconds * 1e9)).to_msg()


def test_the_composed_stack_is_one_balance_loop_cycle_per_joint_states():
    config = robot_config(ROBOT)
    layers = (simulation_parameters(), mode_parameters("kinematic"), PATIENT)
    parameters = suite_parameters(robot_config_file(ROBOT), {
        name: {key: value for layer in layers for key, value in layer.get(name, {}).items() if key != "use_sim_time"}
        for name in BUILD_ORDER})
    context = rclpy.Context()
    rclpy.init(context=context)
    hub, nodes = Composition(), []
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = write_parameter_file(parameters, Path(folder) / "parameters.yaml")
            for name in BUILD_ORDER:
                nodes.append(node_factory(name)(hub=hub, context=context,
                                                cli_args=["--ros-args", "--params-file", str(path)]))
        for node in nodes:
            subscribed = [topic for topic, _ in node.get_subscriber_names_and_types_by_node(node.get_name(),
                                                                                           node.get_namespace())]
            assert not [topic for topic in subscribed if topic.endswith(CHAIN_TOPICS)], (node.get_name(), subscribed)
        driver = rclpy.create_node("plant_driver", context=context)
        executor = rclpy.executors.SingleThreadedExecutor(context=context)
        for node in (*nodes, driver):
            executor.add_node(node)
        joint_publisher = driver.create_publisher(JointState, "joint_states", SENSOR_QOS)
        imu_publisher = driver.create_publisher(Imu, "imu", SENSOR_QOS)
        commands = []
        driver.create_subscription(Float64MultiArray, "actuator_commands", commands.append, RELIABLE_QOS)

        sim = Simulation.from_config(config)
        reference = BalanceLoop.from_config(config, "kinematic")
        actuated = list(reference.robot.actuated_names)
        to_plant = np.array([actuated.index(name) for name in sim.actuators])
        estimator = nodes[0]
        for _ in range(200):  # discovery: the stack's readers of the driver's topics and the driver's of the stack's
            executor.spin_once(timeout_sec=0.05)
        differences = []
        for tick in range(TICKS):
            sim.step(max(1, round(0.002 / sim.model.opt.timestep)))
            position, velocity, effort = sim.joint_states(actuated)
            quaternion, gyro, accelerometer = sim.imu()
            stamp = stamp_of(sim.time)
            time = stamp.sec + 1e-9 * stamp.nanosec
            imu = Imu()
            imu.header.stamp, imu.header.frame_id = stamp, config.imu_frame or reference.robot.root_link
            (imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w) = map(float, quaternion)
            imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z = map(float, gyro)
            imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z = map(float, accelerometer)
            before = estimator.imu
            imu_publisher.publish(imu)
            for _ in range(400):
                if estimator.imu is not before:
                    break
                executor.spin_once(timeout_sec=0.01)
            joints = JointState(name=actuated, position=position.tolist(), velocity=velocity.tolist(),
                                effort=effort.tolist())
            joints.header.stamp = stamp
            count = len(commands)
            joint_publisher.publish(joints)
            for _ in range(1000):
                if len(commands) > count:
                    break
                executor.spin_once(timeout_sec=0.01)
            assert len(commands) == count + 1, f"tick {tick}: one actuator_commands per joint_states"
            expected = reference.cycle(Observation(time, position, velocity, ImuSample(*estimator.imu), effort))
            sent = np.asarray(commands[-1].data)
            differences.append(np.abs(sent - expected.mapped.command.position).max())
            sim.set_command("position", sent[to_plant])
        assert max(differences) < 1e-9, max(differences)
        assert sim.ground_truth().base_position[2] > 0.5  # the plant stood on what the stack sent
    finally:
        for node in nodes:
            node.destroy_node()
        rclpy.shutdown(context=context)


@pytest.fixture
def context():
    context = rclpy.Context()
    rclpy.init(context=context)
    yield context
    rclpy.shutdown(context=context)


def test_an_output_goes_over_dds_only_once_a_reader_subscribes(context):
    from support.ros_probe import Probe

    node = rclpy.create_node("producer", context=context)
    node.hub = None
    output = advertise(node, Float64, "chain/output", RELIABLE_QOS)
    assert not output.wanted()  # nobody to see a display-only message: the nodes do not build it
    probe = Probe("output_topic_probe")
    try:
        received = probe.record(Float64, "chain/output")
        assert probe.spin_until(lambda: output.get_subscription_count() == 1, 20.0) and output.wanted()
        output.publish(Float64(data=7.5))
        assert probe.spin_until(lambda: len(received) == 1, 10.0)
        assert received[0].data == 7.5
    finally:
        probe.close()


def test_a_lifecycle_output_publishes_only_while_active(context):
    node = LifecycleNode("managed", context=context)
    node.hub = None
    output = advertise(node, Float64, "chain/command", RELIABLE_QOS)
    assert not output.active()
    node.trigger_configure()
    assert not output.active()
    node.trigger_activate()
    assert output.active()
