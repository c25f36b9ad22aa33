"""The recorders, read back by an independent reader: messages of every type the suite publishes go through
GraphRecorder into a rosbag2 (MCAP) directory, and the ``mcap`` library with ``mcap-ros2-support``'s decoder (not
rosbags, which wrote it) must give back each message field by field, on the simulated time of the /clock that
preceded it, with the topics, types, hashes and offered QoS in metadata.yaml. A run of the benchmarks' closed loop
(bench --record) must come back as what its cores produced, tick by tick."""
import time

import numpy as np
import pytest
import rclpy
import yaml
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, Point32, PointStamped, PolygonStamped, Vector3Stamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import ColorRGBA, Float64MultiArray, Int8, MultiArrayDimension, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import Marker, MarkerArray

from humanoid_balance.bench.closed_loop import ClosedLoop, robot_config
from humanoid_balance.bench.session import running
from humanoid_balance.recording import Bag, GraphRecorder, bag_path
from support.recordings import read_recording, same_fields

PREFIX = "/recording_test"
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


def stamped(message, seconds):
    message.header.stamp.sec, message.header.stamp.nanosec = int(seconds), int(round(seconds % 1 * 1e9))
    message.header.frame_id = "odom"
    return message


def suite_messages():
    """One message of each type the suite publishes, every kind of field filled (float32 fields with values a
    float32 holds exactly)."""
    joint_state = stamped(JointState(name=["hip", "knee"], position=[0.1, -0.2], velocity=[1.5, 2.5],
                                     effort=[10.0, -20.0]), 1.25)
    imu = stamped(Imu(), 1.25)
    imu.orientation.x, imu.orientation.w = 0.6, 0.8
    imu.angular_velocity.z, imu.linear_acceleration.z = 0.3, 9.81
    imu.orientation_covariance = [float(k) for k in range(9)]
    odometry = stamped(Odometry(child_frame_id="base_link"), 1.25)
    odometry.pose.pose.position.z, odometry.pose.pose.orientation.w = 0.9, 1.0
    odometry.twist.twist.linear.y = -0.05
    odometry.pose.covariance = [0.5 * k for k in range(36)]
    point = stamped(PointStamped(point=Point(x=0.01, y=-0.02, z=0.0)), 1.25)
    polygon = stamped(PolygonStamped(), 1.25)
    polygon.polygon.points = [Point32(x=0.125, y=0.25, z=0.0), Point32(x=-0.5, y=0.75, z=0.0),
                              Point32(x=0.0, y=-1.0, z=0.0)]
    wrench = stamped(WrenchStamped(), 1.25)
    wrench.wrench.force.z, wrench.wrench.torque.x = 261.5, -3.25
    momentum = stamped(Vector3Stamped(), 1.25)
    momentum.vector.y = 0.75
    marker = stamped(Marker(ns="com", id=3, type=Marker.SPHERE, action=Marker.ADD, text="CoM", frame_locked=True,
                            points=[Point(x=1.0), Point(y=2.0)], colors=[ColorRGBA(r=1.0, a=0.5)],
                            lifetime=Duration(sec=1, nanosec=500)), 1.25)
    marker.scale.x = marker.scale.y = marker.scale.z = 0.05
    marker.color = ColorRGBA(r=0.25, g=0.5, b=1.0, a=1.0)
    commands = Float64MultiArray(data=[0.001, -0.002, 0.5])
    commands.layout.dim = [MultiArrayDimension(label="field", size=1, stride=3),
                           MultiArrayDimension(label="actuator", size=3, stride=3)]
    diagnostics = stamped(DiagnosticArray(status=[DiagnosticStatus(
        level=DiagnosticStatus.WARN, name="state_estimator: estimation", message="no good joint_states for 0.6 s",
        hardware_id="kangaroo_like", values=[KeyValue(key="callback p99 [µs]", value="812")])]), 1.25)
    trajectory = stamped(JointTrajectory(joint_names=["shoulder", "elbow"], points=[
        JointTrajectoryPoint(positions=[0.1, 0.2], velocities=[0.3, 0.4], time_from_start=Duration(sec=2))]), 1.25)
    return {"joint_states": joint_state, "imu": imu, "odom": odometry, "zmp": point, "support_polygon": polygon,
            "contact/left_foot/wrench": wrench, "sim/linear_momentum": momentum,
            "contact/left_foot/state": Int8(data=-1), "balance/markers": MarkerArray(markers=[marker]),
            "actuator_commands": commands, "/diagnostics_test": diagnostics,
            "balance/left_arm/trajectory": trajectory}


@pytest.fixture
def context():
    context = rclpy.Context()
    rclpy.init(context=context)
    yield context
    context.try_shutdown()


@pytest.mark.dds
def test_every_message_type_comes_back_field_by_field_on_the_simulated_time(tmp_path, context):
    node = Node("recording_test_publisher", context=context, namespace=PREFIX)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    messages = suite_messages()
    publishers = {topic: node.create_publisher(type(message), topic, RELIABLE) for topic, message in messages.items()}
    clock = node.create_publisher(Clock, "/clock", RELIABLE)
    description = node.create_publisher(String, "robot_description", LATCHED)
    description.publish(String(data="<robot name='r'/>"))   # before the recorder exists: latched
    recorder = GraphRecorder(Bag(tmp_path / "run.mcap", {"recorded_by": "test"}), use_sim_time=True,
                             context=context)
    topics = {f"{PREFIX}/{topic}" if not topic.startswith("/") else topic for topic in messages}
    deadline = time.monotonic() + 20.0
    while not topics <= set(recorder.readers) or any(not publishers[t].get_subscription_count()
                                                       for t in publishers):
        assert time.monotonic() < deadline, f"not discovered: {topics - set(recorder.readers)}"
        recorder.discover()
        executor.spin_once(timeout_sec=0.05)
    described = []  # a late joiner gets the latched message some time after it matched (a CI run ended before)
    recorder.listen(f"{PREFIX}/robot_description", lambda data, stamp: described.append(data))
    while not described:
        assert time.monotonic() < deadline, "the latched robot_description never reached the recorder"
        recorder.poll(force=True)
        executor.spin_once(timeout_sec=0.01)

    for seconds, nanoseconds in ((12, 500_000_000), (13, 0)):   # two ticks of a simulated clock
        clock.publish(Clock(clock=rclpy.time.Time(seconds=seconds, nanoseconds=nanoseconds).to_msg()))
        time.sleep(0.01)
        for topic, message in messages.items():
            publishers[topic].publish(message)
        time.sleep(0.01)
    recorder.poll(force=True)
    assert recorder.close() == []   # nothing of the graph missed
    node.destroy_node()

    path = tmp_path / "run"
    recording = read_recording(path / "run.mcap")
    for topic, message in messages.items():
        name = f"{PREFIX}/{topic}" if not topic.startswith("/") else topic
        received = recording.messages[name]
        assert [log_time for log_time, _ in received] == [12_500_000_000, 13_000_000_000], name
        for _, decoded in received:
            same_fields(message, decoded, name)
        assert recording.types[name] == type(message).__module__.split(".")[0] + "/msg/" + type(message).__name__
    assert [decoded.data for _, decoded in recording.messages[f"{PREFIX}/robot_description"]] == ["<robot name='r'/>"]
    assert [log_time for log_time, _ in recording.messages["/clock"]] == [12_500_000_000, 13_000_000_000]

    metadata = yaml.safe_load((path / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert metadata["storage_identifier"] == "mcap" and metadata["relative_file_paths"] == ["run.mcap"]
    assert metadata["custom_data"] == {"recorded_by": "test"}
    entries = {entry["topic_metadata"]["name"]: entry for entry in metadata["topics_with_message_count"]}
    for name, received in recording.messages.items():
        assert entries[name]["message_count"] == len(received)
        assert entries[name]["topic_metadata"]["serialization_format"] == "cdr"
        assert entries[name]["topic_metadata"]["type_description_hash"].startswith("RIHS01_")
    latched = entries[f"{PREFIX}/robot_description"]["topic_metadata"]["offered_qos_profiles"]
    assert [profile["durability"] for profile in latched] == ["transient_local"]
    assert entries[f"{PREFIX}/joint_states"]["topic_metadata"]["offered_qos_profiles"][0]["durability"] == "volatile"


def test_a_recording_path(tmp_path):
    assert bag_path(tmp_path / "run.mcap") == tmp_path / "run"
    occupied = tmp_path / "notes"
    occupied.mkdir()
    (occupied / "todo.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="is not a rosbag2 recording"):
        Bag(occupied, {})
    first = Bag(tmp_path / "again", {"run": "1"})
    first.close()
    second = Bag(tmp_path / "again", {"run": "2"})   # a recording is replaced
    second.close()
    assert "run: '2'" in (tmp_path / "again" / "metadata.yaml").read_text()


def test_a_closed_loop_run_comes_back_as_what_its_cores_produced(tmp_path):
    with running("loop", record=tmp_path) as session:
        loop = ClosedLoop(robot_config("kangaroo_like"), mode="kinematic", session=session)
        ticks = []
        while loop.sim.time < 0.3:
            loop.tick()
            ticks.append(loop.signals)
            if len(ticks) == 50:
                loop.push([0.0, 30.0, 0.0], 0.1)
    [metadata] = tmp_path.glob("*/metadata.yaml")
    assert metadata.parent.name == "loop_01_kinematic_position"
    recording = read_recording(metadata.parent / f"{metadata.parent.name}.mcap")
    log_times = [round(signals.time * 1e9) for signals in ticks]

    def values(topic, read):
        assert [log_time for log_time, _ in recording.messages[topic]] == log_times, topic
        return np.array([read(message) for _, message in recording.messages[topic]])

    def point(p):
        return p.x, p.y, p.z

    np.testing.assert_array_equal(values("/joint_states", lambda m: m.position), [s.sensors[0] for s in ticks])
    np.testing.assert_array_equal(values("/estimated_joint_states", lambda m: m.position), [s.state.q for s in ticks])
    np.testing.assert_array_equal(values("/estimated_joint_states", lambda m: m.velocity), [s.state.v for s in ticks])
    np.testing.assert_array_equal(values("/odom", lambda m: point(m.pose.pose.position)),
                                  [s.state.base.position for s in ticks])
    np.testing.assert_array_equal(values("/zmp", lambda m: point(m.point)), [s.contact.zmp for s in ticks])
    np.testing.assert_array_equal(values("/balance/joint_command", lambda m: m.effort),
                                  [s.command.effort for s in ticks])
    np.testing.assert_array_equal(values("/actuator_commands", lambda m: m.data), [s.actuators.position for s in ticks])
    np.testing.assert_array_equal(values("/sim/com", lambda m: point(m.point)), [s.truth.com for s in ticks])
    np.testing.assert_array_equal(values("/clock", lambda m: m.clock.sec * 1_000_000_000 + m.clock.nanosec),
                                  log_times)
    assert [m.name for _, m in recording.messages["/estimated_joint_states"][:1]] == [list(loop.robot.joint_names)]
    [(pushed_at, push)] = recording.messages["/sim/push"]
    assert pushed_at == log_times[49] and (push.header.frame_id, push.wrench.force.y) == (loop.base_body, 30.0)
    assert len(recording.messages["/robot_description"]) == len(recording.messages["/tf_static"]) == 1
