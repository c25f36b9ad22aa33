"""launch_testing: balance.launch.py as a robot's team runs it, two launches, between them every argument it declares
set to a value other than its default (the list read from the launch description: a new argument without a check
here fails): four processes reading the feet's F/T sensors, the mapper on the joint impedance with one topic per
field; and balance_stack running the four nodes in one, on /clock, in viip mode with contacts from actuator forces.
Both on mahru (the separate case from a folder whose copy of its configuration renames its feet: the wrench topic
arguments remap the robot's first and second foot, whatever their names), every topic argument remapped.

Each argument is read back where it lands: a node's parameter over its parameter services (the robot's URDF, the
modes, the command interface and what balance_mode's profile adds, per_interface_topics, use_sim_time), a remapped
topic by the node's subscription or publisher being on it in the ROS graph, ``composed`` by the processes the launch
started. Each case also checks that every node reports on /diagnostics, naming its inputs as remapped; that the
imu reaches contact_estimator with actuator forces (its flight detection turning on); that the nodes stamp on the
clock ``use_sim_time`` gives (a /clock this test publishes, or the wall clock); and that every process exits 0 and
the launch leaves no parameter file behind.

Run against an install space (test_launch.py does, after colcon build): ``source install/setup.bash`` with
``AMENT_PREFIX_PATH`` holding ROS 2's prefix, then ``launch_test test/launch_tests/launch/test_balance_launch.py`` or
``python -m pytest test/launch_tests/launch/test_balance_launch.py``.
"""
import atexit
import shutil
import sys
import tempfile
import time
import unittest
from pathlib import Path

import pytest
import yaml

launch_testing = pytest.importorskip("launch_testing", reason="ROS 2's launch system is not installed (on a machine "
                                     "without ROS 2: ../shared/ros2-launch/install.sh .venv)")

import launch  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
from builtin_interfaces.msg import Time  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from geometry_msgs.msg import Vector3  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import Imu  # noqa: E402
from std_msgs.msg import Header  # noqa: E402

sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parent)]  # launch_test too
from humanoid_balance.nodes.realtime import PARAMETERS as SCHEDULING_PARAMETERS  # noqa: E402
from launch_arguments import (case_values, check_each_argument, check_scheduling, coverage_problems,  # noqa: E402
                              endpoint_nodes, launch_file)
from leftovers import parameter_files  # noqa: E402
from support.ros_probe import Probe  # noqa: E402

LAUNCH_FILE = "balance.launch.py"
SUITE = {"state_estimator": "estimation", "contact_estimator": "contacts", "centroidal_balancer": "balance",
         "loop_closure_mapper": "mapping"}
START_TIMEOUT = 120.0  # for four nodes to load the robot on a loaded machine [s]
CLOCK_START = 1000     # the /clock this test publishes in the sim-time case starts here [s]
AUTO_INTERFACE = {"kinematic": "position", "momentum": "impedance", "viip": "position"}  # command_interface:=auto
FIELDS = ("position", "velocity", "effort", "stiffness", "damping")  # of a joint-impedance command
TOPICS = {"joint_states_topic": "/my_robot/joint_states", "imu_topic": "/my_robot/imu",
          "left_wrench_topic": "/my_robot/left_ft/wrench", "right_wrench_topic": "/my_robot/right_ft/wrench",
          "commands_topic": "/my_robot/commands",
          **{f"{field}_commands_topic": f"/my_robot/{field}_commands" for field in FIELDS}}
FEET = ("l_foot", "r_foot")  # the feet of the separate case's robot: a wrench topic is <foot>/wrench


def renamed_feet(robot, feet):
    """A copy of the bundled ``robot``'s configuration in a temporary folder, its feet renamed ``feet``: what a
    hand-written configuration may call them."""
    from humanoid_balance.resources import robot_config_file

    document = yaml.safe_load(robot_config_file(robot).read_text())
    values = document["/**"]["ros__parameters"]
    for old, new in zip(values["feet"], feet):
        values[f"{new}_joints"] = values.pop(f"{old}_joints")
    values["feet"] = list(feet)
    folder = Path(tempfile.mkdtemp(prefix="balance_launch_robot_"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    (folder / "robot.yaml").write_text(yaml.safe_dump(document))
    return folder


CASES = {  # case → the arguments it sets (the others at their defaults)
    "separate": {**TOPICS, "robot": str(renamed_feet("mahru", FEET)), "command_interface": "impedance",
                 "per_interface_topics": "true", "realtime_priority": "5", "cpu_affinity": "0", "lock_memory": "true"},
    "composed": {**TOPICS, "robot": "mahru", "composed": "true", "contact_mode": "actuator_forces",
                 "balance_mode": "viip", "use_sim_time": "true"},
}


def on_topic(test, values, argument, node, kind):
    """Assert that ``node`` has a ``kind`` (subscription | publisher) on the topic ``argument`` names."""
    topic = values[argument]
    found = test.spin_until(lambda: node in endpoint_nodes(test.probe.node, topic, kind), 30.0)  # discovery
    test.assertTrue(found, f"{argument}:={topic}: no {kind} of {node} on it "
                           f"(found {endpoint_nodes(test.probe.node, topic, kind)})")


def parameters(test, node, expected):
    test.assertEqual(test.probe.parameters(node, list(expected)), expected, node)


def check_robot(test, values, processes):
    """Both cases run mahru, the separate one from a folder with its feet renamed."""
    feet = list(FEET) if Path(values["robot"]).is_dir() else ["left_foot", "right_foot"]
    for node in SUITE:
        held = test.probe.parameters(node, ["urdf_file", "feet"])
        test.assertTrue(held["urdf_file"].endswith("/mahru.urdf") and held["feet"] == feet, f"{node}: {held}")


def check_contact_mode(test, values, processes):
    parameters(test, "contact_estimator", {"mode": values["contact_mode"]})


def check_wrench_topic(argument):
    def check(test, values, processes):
        if values["contact_mode"] == "ft_sensors":  # with actuator forces the estimator reads no wrench
            on_topic(test, values, argument, "contact_estimator", "subscription")
    return check


def check_balance_mode(test, values, processes):
    parameters(test, "centroidal_balancer", {"mode": values["balance_mode"]})
    parameters(test, "loop_closure_mapper", {"compliance_compensation": values["balance_mode"] == "viip"})


def check_command_interface(test, values, processes):
    interface = values["command_interface"]
    parameters(test, "loop_closure_mapper", {
        "command_interface": AUTO_INTERFACE[values["balance_mode"]] if interface == "auto" else interface})


def check_per_interface_topics(test, values, processes):
    parameters(test, "loop_closure_mapper", {"per_interface_topics": values["per_interface_topics"] == "true"})


def check_field_topic(argument):
    def check(test, values, processes):
        if values["per_interface_topics"] == "true":
            on_topic(test, values, argument, "loop_closure_mapper", "publisher")
    return check


def check_use_sim_time(test, values, processes):
    for node in SUITE:
        parameters(test, node, {"use_sim_time": values["use_sim_time"] == "true"})


def check_composed(test, values, processes):
    started = {name.rsplit("-", 1)[0] for name in processes.process_names()}
    test.assertEqual(started, {"balance_stack"} if values["composed"] == "true" else set(SUITE))


CHECKS = {  # argument → how it is read back: (the test, every argument's value in the case, the launch's processes);
    # the imu's reaching contact_estimator and use_sim_time's clock: the tests of their own below
    "robot": check_robot,
    "joint_states_topic": lambda t, v, p: on_topic(t, v, "joint_states_topic", "state_estimator", "subscription"),
    "imu_topic": lambda t, v, p: on_topic(t, v, "imu_topic", "state_estimator", "subscription"),
    "contact_mode": check_contact_mode,
    "left_wrench_topic": check_wrench_topic("left_wrench_topic"),
    "right_wrench_topic": check_wrench_topic("right_wrench_topic"),
    "balance_mode": check_balance_mode,
    "commands_topic": lambda t, v, p: on_topic(t, v, "commands_topic", "loop_closure_mapper", "publisher"),
    "command_interface": check_command_interface,
    "per_interface_topics": check_per_interface_topics,
    **{f"{field}_commands_topic": check_field_topic(f"{field}_commands_topic") for field in FIELDS},
    "use_sim_time": check_use_sim_time,
    "composed": check_composed,
    **{argument: check_scheduling(argument) for argument in SCHEDULING_PARAMETERS},
}
LEFT_BEFORE = parameter_files()
STARTED = {}  # case → when its launch was described [monotonic s]


@pytest.mark.launch_test
@launch_testing.parametrize("case", list(CASES))
def generate_test_description(case):
    STARTED[case] = time.monotonic()
    suite = launch.actions.IncludeLaunchDescription(PythonLaunchDescriptionSource(str(launch_file(LAUNCH_FILE))),
                                                    launch_arguments=CASES[case].items())
    return launch.LaunchDescription([suite, launch_testing.actions.ReadyToTest()])


class TestSuite(unittest.TestCase):
    """Each test against the same launch of its case; the probe publishes /clock in the sim-time case."""

    @classmethod
    def setUpClass(cls):
        cls.probe = Probe("balance_launch_probe")
        cls.clock = cls.probe.publisher(Clock, "/clock", sensor=False)
        cls.imu = cls.probe.publisher(Imu, TOPICS["imu_topic"])
        cls.publishing = {"imu": False, "clock": False}
        cls.started = cls.probe.node.get_clock().now().nanoseconds

    @classmethod
    def tearDownClass(cls):
        cls.probe.close()

    def spin_until(self, condition, timeout):
        """Spin the probe; in the sim-time case simulated time runs from CLOCK_START at the wall clock's pace
        meanwhile."""
        def tick():
            now = self.probe.node.get_clock().now()
            stamp = now.to_msg()
            if self.publishing["clock"]:
                elapsed = (now.nanoseconds - self.started) // 1000
                stamp = Time(sec=CLOCK_START + elapsed // 10**6, nanosec=1000 * (elapsed % 10**6))
                self.clock.publish(Clock(clock=stamp))
            if self.publishing["imu"]:
                self.imu.publish(Imu(header=Header(stamp=stamp, frame_id="base_link"),
                                     linear_acceleration=Vector3(z=9.81)))

        return self.probe.spin_until(condition, timeout, on_tick=tick)

    def wait_for_every_node(self, case):
        self.publishing["clock"] = case_values(LAUNCH_FILE, CASES[case])["use_sim_time"] == "true"
        expected = {f"{node}: {what}" for node, what in SUITE.items()}
        reported = self.spin_until(lambda: expected <= set(self.probe.diagnostics), START_TIMEOUT)
        self.assertTrue(reported, f"no /diagnostics within {START_TIMEOUT} s from "
                                  f"{sorted(expected - set(self.probe.diagnostics))}")

    def test_every_argument_is_set_and_checked(self, case):
        self.assertEqual(coverage_problems(LAUNCH_FILE, CASES, CHECKS), [])

    def test_each_argument_reaches_its_node(self, case, proc_info):
        self.wait_for_every_node(case)
        check_each_argument(self, LAUNCH_FILE, CASES[case], CHECKS, proc_info)

    def test_diagnostics_name_the_inputs_as_remapped(self, case):
        """Before test_imu_reaches_contact_estimator (unittest runs a class's tests in the order of their names)."""
        self.wait_for_every_node(case)
        estimation = self.probe.diagnostics["state_estimator: estimation"]  # nothing publishes the joint states
        self.assertIn(TOPICS["joint_states_topic"], estimation.message)
        if case_values(LAUNCH_FILE, CASES[case])["contact_mode"] == "actuator_forces":  # no imu is published yet
            flight = self.probe.diagnostic_values("contact_estimator: contacts")["flight detection"]
            self.assertIn(f"no {TOPICS['imu_topic']}", flight)

    def test_imu_reaches_contact_estimator(self, case):
        """With actuator forces, the contact estimator's flight detection turns on once the remapped imu is
        published."""
        if case_values(LAUNCH_FILE, CASES[case])["contact_mode"] != "actuator_forces":
            return
        self.wait_for_every_node(case)
        flight = lambda: self.probe.diagnostic_values("contact_estimator: contacts")["flight detection"]  # noqa
        self.publishing["imu"] = True
        detected = self.spin_until(lambda: flight() == "on (imu)", 20.0)
        self.assertTrue(detected, f"imu_topic:={TOPICS['imu_topic']} published, contact_estimator: {flight()}")

    def test_nodes_stamp_on_the_clock_use_sim_time_gives(self, case):
        self.wait_for_every_node(case)
        for node, what in SUITE.items():
            stamp = self.probe.diagnostic_stamps[f"{node}: {what}"]
            if self.publishing["clock"]:
                self.assertTrue(CLOCK_START <= stamp < CLOCK_START + START_TIMEOUT + 300, f"{node}: stamp {stamp}")
            else:
                self.assertGreater(stamp, 1e9, f"{node}: stamp {stamp} is not the wall clock's")


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)

    def test_case_time(self, case):
        started = STARTED[case]
        print(f"launch case {LAUNCH_FILE} {case}: {time.monotonic() - started:.1f} s")  # for test_launch.py

    def test_no_parameter_file_left_behind(self):
        left = parameter_files() - LEFT_BEFORE
        self.assertFalse(left, f"parameter files left behind: {sorted(map(str, left))}")
