"""launch_testing: sim.launch.py (the embedded MuJoCo plant and the suite, no RViz) in the three balance modes, one
launch per case, on kangaroo_like.

kinematic and momentum (the default ``real_time:=true``): the five nodes report, the plant and the mapper hold what
the mode needs (momentum: the actuators' joint impedance on both sides, as the mapper sends it; ``real_time`` as
the argument gives it, over the plant's own file), and after 5 s of simulated time the ground-truth base is still at
its standing height. viip (``real_time:=false``: the plant in lockstep, as the demo runs it): a jump asked on
``centroidal_balancer/jump`` after 1 s of standing reaches the demo's apex (Sugihara–Nakamura's plan: 50 mm above
the standing COG) within 10 %, and the robot lands standing. Every process exits 0 and the launch leaves no
parameter file behind.

Run against an install space (test_launch.py does, after colcon build): ``source install/setup.bash`` with
``AMENT_PREFIX_PATH`` holding ROS 2's prefix, then ``launch_test test/launch/test_sim_launch.py`` or
``python -m pytest test/launch/test_sim_launch.py``.
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
from geometry_msgs.msg import PointStamped  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from launch.substitutions import PathJoinSubstitution  # noqa: E402
from launch_ros.substitutions import FindPackageShare  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]  # launch_test too
from leftovers import parameter_files  # noqa: E402
from ros_probe import Probe  # noqa: E402

SUITE = ("mujoco_sim: simulation", "state_estimator: estimation", "contact_estimator: contacts",
         "centroidal_balancer: balance", "loop_closure_mapper: mapping")
START_TIMEOUT = 120.0      # for five nodes to load the robot on a loaded machine [s]
STANDING_HEIGHT = 0.90     # kangaroo_like's base above the floor in its crouched reference stance [m]
SIMULATED = 5.0            # simulated time the robot must stand [s]
JUMP_AT = 1.0              # the jump is asked after this much simulated time, as the demo's jump scenario does [s]
AFTER_JUMP = 2.5           # simulated time watched after the jump's request: stoop, flight, landing [s]
DEMO_APEX = 0.05           # the demo's apex above the standing COG (test_jump_through_nodes.py) [m]
LEFT_BEFORE = parameter_files()
STARTED = {}  # case → when its launch was described [monotonic s]
CASES = {  # mode → (real_time, the command interface of the plant and the mapper, compliance compensation)
    "kinematic": ("true", "position", False),
    "momentum": ("true", "impedance", False),
    "viip": ("false", "position", True),
}


def seconds(stamp):
    return stamp.sec + 1e-9 * stamp.nanosec


@pytest.mark.launch_test
@launch_testing.parametrize("mode", list(CASES))
def generate_test_description(mode):
    STARTED[mode] = time.monotonic()
    simulation = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([FindPackageShare("humanoid_balance"), "launch",
                                                            "sim.launch.py"])),
        launch_arguments={"rviz": "false", "balance_mode": mode, "real_time": CASES[mode][0]}.items())
    return launch.LaunchDescription([simulation, launch_testing.actions.ReadyToTest()])


class TestSimulation(unittest.TestCase):
    """Each test against the same launch of its case."""

    @classmethod
    def setUpClass(cls):
        cls.probe = Probe("sim_launch_probe")
        cls.odometry = cls.probe.record(Odometry, "sim/odom")
        cls.com = cls.probe.record(PointStamped, "sim/com")

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

    def test_plant_and_mapper_hold_what_the_mode_needs(self, mode):
        self.wait_for_every_node()
        real_time, interface, compensation = CASES[mode]
        self.assertEqual(self.probe.parameters("mujoco_sim", ["real_time", "command_interface"]),
                         {"real_time": real_time == "true", "command_interface": interface})
        self.assertEqual(self.probe.parameters("loop_closure_mapper", ["command_interface",
                                                                       "compliance_compensation", "use_sim_time"]),
                         {"command_interface": interface, "compliance_compensation": compensation,
                          "use_sim_time": True})
        self.assertEqual(self.probe.parameters("centroidal_balancer", ["mode", "use_sim_time"]),
                         {"mode": mode, "use_sim_time": True})

    def test_stands_or_jumps_as_the_demo(self, mode):
        """Stands SIMULATED seconds; viip: jumps to the demo's apex and lands standing."""
        self.wait_for_every_node()
        if mode != "viip":
            self.simulate_until(SIMULATED)
            lowest = min(message.pose.pose.position.z for message in self.odometry)
            self.assertGreater(lowest, STANDING_HEIGHT - 0.05, "the robot fell")
            return
        self.simulate_until(JUMP_AT)
        answer = self.probe.call(Trigger, "/centroidal_balancer/jump", Trigger.Request())
        self.assertTrue(answer.success, answer.message)
        asked = self.simulated()
        self.simulate_until(asked + AFTER_JUMP)
        standing = [m.point.z for m in self.com if asked - 0.5 <= seconds(m.header.stamp) < asked]
        after = [m.point.z for m in self.com if seconds(m.header.stamp) >= asked]
        self.assertTrue(standing and after, "no sim/com around the jump")
        apex = max(after) - sum(standing) / len(standing)
        print(f"viip jump through sim.launch.py: apex {1000 * apex:.1f} mm above the standing COG")
        self.assertAlmostEqual(apex, DEMO_APEX, delta=0.1 * DEMO_APEX,
                               msg=f"apex {1000 * apex:.1f} mm above the standing COG, the demo's "
                                   f"{1000 * DEMO_APEX:.0f} mm")
        self.assertGreater(self.odometry[-1].pose.pose.position.z, STANDING_HEIGHT - 0.05,
                           "the robot fell after the jump")  # the stoop and the landing go below standing height


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)

    def test_case_time(self, mode):
        started = STARTED[mode]
        print(f"launch case sim.launch.py {mode}: {time.monotonic() - started:.1f} s")  # for test_launch.py

    def test_no_parameter_file_left_behind(self):
        left = parameter_files() - LEFT_BEFORE
        self.assertFalse(left, f"parameter files left behind: {sorted(map(str, left))}")
