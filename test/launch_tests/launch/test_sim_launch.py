"""launch_testing: sim.launch.py (the embedded MuJoCo plant and the suite), two launches, between them every argument
it declares set to a value other than its default (the list read from the launch description: a new argument without
a check here fails).

real_time (the default ``real_time:=true``): mahru, its plant's foot F/T sensors read by the contact estimator
(``contact_mode:=ft_sensors``), the kinematic mode's targets sent as the joint impedance
(``command_interface:=impedance``), the four nodes in balance_stack (``composed:=true``), no robot_state_publisher
and no RViz; the simulated time keeps pace with the wall clock and the robot stands 5 s. lockstep
(``real_time:=false``, as the demo runs it): kangaroo_like in viip mode; a jump asked on ``centroidal_balancer/jump``
after 1 s of standing reaches the demo's apex (Sugihara–Nakamura's plan: 50 mm above the standing COG) within 10 %,
and the robot lands standing.

Each argument is read back where it lands: the plant's and the nodes' parameters over their parameter services, the
F/T sensors' topics by the plant's publisher and the estimator's subscription on them in the ROS graph, ``composed``
and the optional nodes by the processes the launch started (and its notice of a node ``auto`` left out). In both
cases the plant and the nodes report on /diagnostics on one clock, the simulated time of the plant's /clock, once
a simulated second; every process exits 0 and the launch leaves no parameter file behind.

Run against an install space (test_launch.py does, after colcon build): ``source install/setup.bash`` with
``AMENT_PREFIX_PATH`` holding ROS 2's prefix, then ``launch_test test/launch_tests/launch/test_sim_launch.py`` or
``python -m pytest test/launch_tests/launch/test_sim_launch.py``.
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
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import PointStamped  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parent)]  # launch_test too
from humanoid_balance.launch_support import package_installed  # noqa: E402
from humanoid_balance.nodes.realtime import PARAMETERS as SCHEDULING_PARAMETERS  # noqa: E402
from launch_arguments import (LaunchLog, case_values, check_each_argument, check_scheduling,  # noqa: E402
                              coverage_problems, endpoint_nodes, launch_file)
from leftovers import parameter_files  # noqa: E402
from support.ros_probe import Probe  # noqa: E402

LAUNCH_FILE = "sim.launch.py"
PLANT = "mujoco_sim"
NODES = ("state_estimator", "contact_estimator", "centroidal_balancer", "loop_closure_mapper")
SUITE = ("mujoco_sim: simulation", "state_estimator: estimation", "contact_estimator: contacts",
         "centroidal_balancer: balance", "loop_closure_mapper: mapping")
FEET = ("left_foot", "right_foot")  # kangaroo_like's and mahru's: the plant's F/T sensors publish <foot>/wrench
START_TIMEOUT = 120.0      # for five nodes to load the robot on a loaded machine [s]
STANDING_HEIGHT = {"kangaroo_like": 0.90, "mahru": 0.82}  # the base above the floor in the reference stance [m]
SIMULATED = 5.0            # simulated time the robot must stand [s]
COMMANDED = 50.0           # [Hz] at least, of actuator_commands meanwhile (the launch's control rate: 100 Hz)
PACE_WINDOW = 4.0          # wall time over which real time is measured [s]
JUMP_AT = 1.0              # the jump is asked after this much simulated time, as the demo's jump scenario does [s]
AFTER_JUMP = 2.5           # simulated time watched after the jump's request: stoop, flight, landing [s]
DEMO_APEX = 0.05           # the demo's apex above the standing COG (test_jump_through_nodes.py) [m]
AUTO_INTERFACE = {"kinematic": "position", "momentum": "impedance", "viip": "position"}  # command_interface:=auto
OPTIONAL = {"robot_state_publisher": ("robot_state_publisher", "robot_state_publisher"),  # argument → (its
            "rviz": ("rviz2", "rviz2")}                                  # executable, a package it needs)
CASES = {  # case → the arguments it sets (the others at their defaults)
    "real_time": {"robot": "mahru", "contact_mode": "ft_sensors", "command_interface": "impedance",
                  "composed": "true", "robot_state_publisher": "false", "rviz": "false", "realtime_priority": "20",
                  "lock_memory": "true"},
    "lockstep": {"real_time": "false", "balance_mode": "viip", "rviz": "false", "cpu_affinity": "1"},
}


def seconds(stamp):
    return stamp.sec + 1e-9 * stamp.nanosec


def parameters(test, node, expected):
    test.assertEqual(test.probe.parameters(node, list(expected)), expected, node)


def check_robot(test, values, processes):
    for node in (PLANT, *NODES):
        urdf = test.probe.parameters(node, ["urdf_file"])["urdf_file"]
        test.assertTrue(urdf.endswith(f"/{values['robot']}.urdf"), f"{node}: urdf_file {urdf}")


def check_real_time(test, values, processes):
    """The plant's pace: free against the wall clock, the simulated time keeping up with it; or in lockstep."""
    real_time = values["real_time"] == "true"
    parameters(test, PLANT, {"real_time": real_time, "lockstep": not real_time, "use_sim_time": True})
    if real_time:
        test.simulate_until(0.5)
        start, simulated = time.monotonic(), test.simulated()
        test.probe.spin_until(lambda: False, PACE_WINDOW)
        pace = (test.simulated() - simulated) / (time.monotonic() - start)
        print(f"sim.launch.py real_time:=true: {pace:.2f} simulated seconds per wall second")
        test.assertTrue(0.8 < pace < 1.2, f"real_time:=true: {pace:.2f} simulated seconds per wall second")


def check_balance_mode(test, values, processes):
    parameters(test, "centroidal_balancer", {"mode": values["balance_mode"]})
    parameters(test, "loop_closure_mapper", {"compliance_compensation": values["balance_mode"] == "viip"})


def check_contact_mode(test, values, processes):
    sensors = values["contact_mode"] == "ft_sensors"
    parameters(test, "contact_estimator", {"mode": values["contact_mode"]})
    parameters(test, PLANT, {"force_torque_sensors": sensors})
    for foot in FEET if sensors else ():
        for node, kind in ((PLANT, "publisher"), ("contact_estimator", "subscription")):
            found = test.probe.spin_until(lambda: node in endpoint_nodes(test.probe.node, f"/{foot}/wrench", kind),
                                          30.0)
            test.assertTrue(found, f"no {kind} of {node} on /{foot}/wrench")


def check_command_interface(test, values, processes):
    interface = values["command_interface"]
    expected = {"command_interface": AUTO_INTERFACE[values["balance_mode"]] if interface == "auto" else interface}
    parameters(test, "loop_closure_mapper", expected)
    parameters(test, PLANT, expected)


def check_composed(test, values, processes):
    started = {name.rsplit("-", 1)[0] for name in processes.process_names()} - {"robot_state_publisher", "rviz2"}
    test.assertEqual(started, {PLANT, "balance_stack"} if values["composed"] == "true" else {PLANT, *NODES})


def check_optional(argument):
    """false: not started; true: started; auto: started where its package is installed, else the launch says so."""
    executable, package = OPTIONAL[argument]

    def check(test, values, processes):
        started = any(name.rsplit("-", 1)[0] == executable for name in processes.process_names())
        noticed = any(line.startswith(f"{argument} not started") for line in test.launch_log.lines)
        choice = values[argument]
        expected = (choice == "true" or (choice == "auto" and package_installed(package)),
                    choice == "auto" and not package_installed(package))
        test.assertEqual((started, noticed), expected, f"{argument}:={choice}: (started, notice) "
                                                       f"{(started, noticed)}; launch log {test.launch_log.lines}")
    return check


CHECKS = {  # argument → how it is read back: (the test, every argument's value in the case, the launch's processes)
    "robot": check_robot,
    "real_time": check_real_time,
    "balance_mode": check_balance_mode,
    "contact_mode": check_contact_mode,
    "command_interface": check_command_interface,
    "composed": check_composed,
    "robot_state_publisher": check_optional("robot_state_publisher"),
    "rviz": check_optional("rviz"),
    **{argument: check_scheduling(argument) for argument in SCHEDULING_PARAMETERS},
}
LEFT_BEFORE = parameter_files()
LAUNCH_LOG = LaunchLog()
STARTED = {}  # case → when its launch was described [monotonic s]


@pytest.mark.launch_test
@launch_testing.parametrize("case", list(CASES))
def generate_test_description(case):
    STARTED[case] = time.monotonic()
    LAUNCH_LOG.lines.clear()
    simulation = launch.actions.IncludeLaunchDescription(PythonLaunchDescriptionSource(str(launch_file(LAUNCH_FILE))),
                                                         launch_arguments=CASES[case].items())
    return launch.LaunchDescription([simulation, launch_testing.actions.ReadyToTest()])


class TestSimulation(unittest.TestCase):
    """Each test against the same launch of its case."""

    @classmethod
    def setUpClass(cls):
        cls.probe = Probe("sim_launch_probe")
        cls.odometry = cls.probe.record(Odometry, "sim/odom")
        cls.com = cls.probe.record(PointStamped, "sim/com")
        cls.diagnostics = cls.probe.record(DiagnosticArray, "/diagnostics")
        cls.commands = cls.probe.record(Float64MultiArray, "actuator_commands")
        cls.launch_log = LAUNCH_LOG

    @classmethod
    def tearDownClass(cls):
        cls.probe.close()

    def simulated(self):
        return seconds(self.odometry[-1].header.stamp) if self.odometry else 0.0

    def simulate_until(self, time):
        self.assertTrue(self.probe.spin_until(lambda: self.simulated() >= time, 120.0),
                        f"sim/odom reached {self.simulated():.2f} s of simulated time, not {time} s")

    def wait_for_every_node(self):
        reported = self.probe.spin_until(lambda: set(SUITE) <= set(self.probe.diagnostics), START_TIMEOUT)
        self.assertTrue(reported, f"no /diagnostics within {START_TIMEOUT} s from "
                                  f"{sorted(set(SUITE) - set(self.probe.diagnostics))}")

    def test_every_argument_is_set_and_checked(self, case):
        self.assertEqual(coverage_problems(LAUNCH_FILE, CASES, CHECKS), [])

    def test_each_argument_reaches_its_node(self, case, proc_info):
        self.wait_for_every_node()
        check_each_argument(self, LAUNCH_FILE, CASES[case], CHECKS, proc_info)

    def test_stands_or_jumps_as_the_demo(self, case):
        """Stands SIMULATED seconds; viip: jumps to the demo's apex and lands standing."""
        self.wait_for_every_node()
        values = case_values(LAUNCH_FILE, CASES[case])
        standing = STANDING_HEIGHT[values["robot"]]
        if values["balance_mode"] != "viip":
            self.simulate_until(SIMULATED)
            lowest = min(message.pose.pose.position.z for message in self.odometry)
            self.assertGreater(lowest, standing - 0.05, "the robot fell")
            self.assertGreater(len(self.commands), COMMANDED * SIMULATED,  # the chain's cycle runs (in the composed
                               "too few actuator_commands")              # stack on F/T sensors it once did not)
            return
        self.simulate_until(JUMP_AT)
        answer = self.probe.call(Trigger, "/centroidal_balancer/jump", Trigger.Request())
        self.assertTrue(answer.success, answer.message)
        asked = self.simulated()
        self.simulate_until(asked + AFTER_JUMP)
        before = [m.point.z for m in self.com if asked - 0.5 <= seconds(m.header.stamp) < asked]
        after = [m.point.z for m in self.com if seconds(m.header.stamp) >= asked]
        self.assertTrue(before and after, "no sim/com around the jump")
        apex = max(after) - sum(before) / len(before)
        print(f"viip jump through sim.launch.py: apex {1000 * apex:.1f} mm above the standing COG")
        self.assertAlmostEqual(apex, DEMO_APEX, delta=0.1 * DEMO_APEX,
                               msg=f"apex {1000 * apex:.1f} mm above the standing COG, the demo's "
                                   f"{1000 * DEMO_APEX:.0f} mm")
        self.assertGreater(self.odometry[-1].pose.pose.position.z, standing - 0.05,
                           "the robot fell after the jump")  # the stoop and the landing go below standing height

    def test_the_plant_and_the_nodes_report_on_one_clock(self, case):
        """The plant's and the nodes' reports stamped on the simulated time of sim/odom, the plant's once a
        simulated second (per wall second, a lockstep plant slower than real time would outnumber the nodes). After
        test_stands_or_jumps_as_the_demo (unittest runs a class's tests in the order of their names)."""
        self.wait_for_every_node()
        self.simulate_until(3.0)
        now = self.simulated()
        for name, stamp in self.probe.diagnostic_stamps.items():
            self.assertTrue(0.0 < stamp <= now + 0.5, f"{name}: stamped {stamp:.2f} s, the simulated time is "
                                                      f"{now:.2f} s")
        plant = [seconds(array.header.stamp) for array in self.diagnostics
                 if any(status.name == SUITE[0] for status in array.status)]
        self.assertLessEqual(len(plant), plant[-1] - plant[0] + 2, f"{SUITE[0]} stamped {plant}")


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
