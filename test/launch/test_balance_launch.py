"""launch_testing: balance.launch.py as a robot's team runs it, one launch per case: the three balance modes × the
two layouts (four processes, or balance_stack running the four nodes in one), every topic argument remapped.

Each case checks that every node reports on /diagnostics, naming its inputs as remapped; that each remapped topic
reaches every node that reads or writes it (state_estimator: joint states and imu; contact_estimator: the feet's
wrenches with F/T sensors, the imu with actuator forces, its flight detection turning on; the mapper: its commands,
and with per_interface_topics one topic per impedance field); that the nodes hold the parameters the mode needs
(the balancer's mode, the mapper's command interface and, in viip mode, its compliance compensation: what the demo
runs); ``use_sim_time`` (composed cases: the nodes' stamps follow a /clock this test publishes; separate ones: the
wall clock); and that every process exits 0 and the launch leaves no parameter file behind.

Run against an install space (test_launch.py does, after colcon build): ``source install/setup.bash`` with
``AMENT_PREFIX_PATH`` holding ROS 2's prefix, then ``launch_test test/launch/test_balance_launch.py`` or
``python -m pytest test/launch/test_balance_launch.py``.
"""
import sys
import time
import unittest
from pathlib import Path

import pytest

launch_testing = pytest.importorskip("launch_testing", reason="ROS 2's launch system is not installed (on a machine "
                                     "without ROS 2: ../shared/ros2-launch/install.sh .venv)")

import launch  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
from builtin_interfaces.msg import Time  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from launch.substitutions import PathJoinSubstitution  # noqa: E402
from launch_ros.substitutions import FindPackageShare  # noqa: E402
from geometry_msgs.msg import Vector3  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import Imu  # noqa: E402
from std_msgs.msg import Header  # noqa: E402

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]  # launch_test too
from leftovers import parameter_files  # noqa: E402
from ros_probe import Probe  # noqa: E402

SUITE = {"state_estimator": "estimation", "contact_estimator": "contacts", "centroidal_balancer": "balance",
         "loop_closure_mapper": "mapping"}
START_TIMEOUT = 120.0  # for four nodes to load the robot on a loaded machine [s]
CLOCK_START = 1000     # the /clock this test publishes in the sim-time cases starts here [s]
PROFILES = {  # mode → (the mapper's command_interface, compliance_compensation, contact_mode of the case)
    "kinematic": ("position", False, "ft_sensors"),
    "momentum": ("impedance", False, "actuator_forces"),
    "viip": ("position", True, "actuator_forces"),
}
FIELDS = ("position", "velocity", "effort", "stiffness", "damping")
TOPICS = {"joint_states_topic": "/my_robot/joint_states", "imu_topic": "/my_robot/imu",
          "left_wrench_topic": "/my_robot/left_ft/wrench", "right_wrench_topic": "/my_robot/right_ft/wrench",
          "commands_topic": "/my_robot/commands",
          **{f"{field}_commands_topic": f"/my_robot/{field}_commands" for field in FIELDS}}


LEFT_BEFORE = parameter_files()
STARTED = {}  # case → when its launch was described [monotonic s]


def endpoints(layout, mode):
    """(launch argument, node, subscription | publisher) that must be on the argument's topic (the imu reaching
    contact_estimator is seen from its flight detection: in balance_stack one subscription serves the process)."""
    contact_inputs = () if PROFILES[mode][2] == "actuator_forces" else ("left_wrench_topic", "right_wrench_topic")
    commands = ("commands_topic", *(f"{field}_commands_topic" for field in FIELDS)) if mode == "momentum" else (
        "commands_topic",)
    return ([(argument, "state_estimator", "subscription") for argument in ("joint_states_topic", "imu_topic")]
            + [(argument, "contact_estimator", "subscription") for argument in contact_inputs]
            + [(argument, "loop_closure_mapper", "publisher") for argument in commands])


@pytest.mark.launch_test
@launch_testing.parametrize("layout, mode", [(layout, mode) for layout in ("separate", "composed")
                                             for mode in PROFILES])
def generate_test_description(layout, mode):
    STARTED[(layout, mode)] = time.monotonic()
    arguments = {**TOPICS, "composed": str(layout == "composed").lower(), "balance_mode": mode,
                 "contact_mode": PROFILES[mode][2], "per_interface_topics": str(mode == "momentum").lower(),
                 "use_sim_time": str(layout == "composed").lower()}
    suite = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([FindPackageShare("humanoid_balance"), "launch",
                                                            "balance.launch.py"])),
        launch_arguments=arguments.items())
    return launch.LaunchDescription([suite, launch_testing.actions.ReadyToTest()])


class TestSuite(unittest.TestCase):
    """Each test against the same launch of its case; the probe publishes /clock in the sim-time cases."""

    @classmethod
    def setUpClass(cls):
        cls.probe = Probe("balance_launch_probe")
        cls.clock = cls.probe.publisher(Clock, "/clock", sensor=False)
        cls.imu = cls.probe.publisher(Imu, TOPICS["imu_topic"])
        cls.publishing = {"imu": False}
        cls.started = cls.probe.node.get_clock().now().nanoseconds

    @classmethod
    def tearDownClass(cls):
        cls.probe.close()

    def spin_until(self, condition, timeout, layout):
        """Spin the probe; in the sim-time (composed) cases simulated time runs from CLOCK_START at the wall
        clock's pace meanwhile."""
        def tick():
            now = self.probe.node.get_clock().now()
            stamp = now.to_msg()
            if layout == "composed":
                elapsed = (now.nanoseconds - self.started) // 1000
                stamp = Time(sec=CLOCK_START + elapsed // 10**6, nanosec=1000 * (elapsed % 10**6))
                self.clock.publish(Clock(clock=stamp))
            if self.publishing["imu"]:
                self.imu.publish(Imu(header=Header(stamp=stamp, frame_id="base_link"),
                                     linear_acceleration=Vector3(z=9.81)))

        return self.probe.spin_until(condition, timeout, on_tick=tick)

    def wait_for_every_node(self, layout):
        expected = {f"{node}: {what}" for node, what in SUITE.items()}
        reported = self.spin_until(lambda: expected <= set(self.probe.diagnostics), START_TIMEOUT, layout)
        self.assertTrue(reported, f"no /diagnostics within {START_TIMEOUT} s from "
                                  f"{sorted(expected - set(self.probe.diagnostics))}")

    def test_diagnostics_name_the_inputs_as_remapped(self, layout, mode):
        """Before test_imu_reaches_contact_estimator (unittest runs a class's tests in the order of their names)."""
        self.wait_for_every_node(layout)
        estimation = self.probe.diagnostics["state_estimator: estimation"]  # nothing publishes the joint states
        self.assertIn(TOPICS["joint_states_topic"], estimation.message)
        if PROFILES[mode][2] == "actuator_forces":  # no imu is published yet
            flight = self.probe.diagnostic_values("contact_estimator: contacts")["flight detection"]
            self.assertIn(f"no {TOPICS['imu_topic']}", flight)

    def test_imu_reaches_contact_estimator(self, layout, mode):
        """With actuator forces, the contact estimator's flight detection turns on once the remapped imu is
        published."""
        if PROFILES[mode][2] != "actuator_forces":
            return
        self.wait_for_every_node(layout)
        flight = lambda: self.probe.diagnostic_values("contact_estimator: contacts")["flight detection"]  # noqa
        self.publishing["imu"] = True
        detected = self.spin_until(lambda: flight() == "on (imu)", 20.0, layout)
        self.assertTrue(detected, f"imu_topic:={TOPICS['imu_topic']} published, contact_estimator: {flight()}")

    def test_nodes_hold_the_parameters_of_the_mode(self, layout, mode):
        self.wait_for_every_node(layout)
        interface, compensation, contact_mode = PROFILES[mode]
        expected = {"centroidal_balancer": {"mode": mode},
                    "loop_closure_mapper": {"command_interface": interface, "compliance_compensation": compensation,
                                            "per_interface_topics": mode == "momentum"},
                    "contact_estimator": {"mode": contact_mode},
                    "state_estimator": {}}
        for node, values in expected.items():
            values = {**values, "use_sim_time": layout == "composed"}
            self.assertEqual(self.probe.parameters(node, list(values)), values, node)

    def test_nodes_stamp_on_the_clock_use_sim_time_gives(self, layout, mode):
        self.wait_for_every_node(layout)
        for node, what in SUITE.items():
            stamp = self.probe.diagnostic_stamps[f"{node}: {what}"]
            if layout == "composed":
                self.assertTrue(CLOCK_START <= stamp < CLOCK_START + START_TIMEOUT + 300, f"{node}: stamp {stamp}")
            else:
                self.assertGreater(stamp, 1e9, f"{node}: stamp {stamp} is not the wall clock's")

    def test_remapped_topics_reach_the_nodes(self, layout, mode):
        self.wait_for_every_node(layout)
        graph = self.probe.node

        def on_topic(topic, kind):
            infos = (graph.get_subscriptions_info_by_topic(topic) if kind == "subscription"
                     else graph.get_publishers_info_by_topic(topic))
            return {info.node_name for info in infos}

        for argument, node, kind in endpoints(layout, mode):
            topic = TOPICS[argument]
            found = self.spin_until(lambda: node in on_topic(topic, kind), 30.0, layout)  # discovery, loaded host
            self.assertTrue(found, f"{argument}:={topic}: no {kind} of {node} on it (found {on_topic(topic, kind)})")


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)

    def test_case_time(self, layout, mode):
        started = STARTED[(layout, mode)]
        print(f"launch case balance.launch.py {layout} {mode}: {time.monotonic() - started:.1f} s")  # for test_launch

    def test_no_parameter_file_left_behind(self):
        left = parameter_files() - LEFT_BEFORE
        self.assertFalse(left, f"parameter files left behind: {sorted(map(str, left))}")
