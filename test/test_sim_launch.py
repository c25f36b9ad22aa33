"""launch_testing: sim.launch.py (plant + suite, no RViz) keeps kangaroo_like standing: after 5 s of simulated
time the ground-truth base is still at its standing height.

Runs on a ROS 2 machine (``colcon test``); launch and launch_testing have no PyPI wheels.
"""
import time
import unittest
from pathlib import Path

import pytest

launch_testing = pytest.importorskip(
    "launch_testing", reason="launch_testing is not installable from PyPI; run this test on a ROS 2 machine "
    "with `colcon test --packages-select humanoid_balance`")

import launch  # noqa: E402
import launch_testing.asserts  # noqa: E402
import rclpy  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402

LAUNCH_FILE = Path(__file__).resolve().parents[1] / "launch" / "sim.launch.py"
STANDING_HEIGHT = 0.90  # kangaroo_like's base above the floor in its crouched reference stance [m]


@pytest.mark.launch_test
def generate_test_description():
    simulation = launch.actions.IncludeLaunchDescription(PythonLaunchDescriptionSource(str(LAUNCH_FILE)),
                                                         launch_arguments={"rviz": "false"}.items())
    return launch.LaunchDescription([simulation, launch_testing.actions.ReadyToTest()])


class TestStanding(unittest.TestCase):
    def test_still_standing_after_five_simulated_seconds(self):
        rclpy.init()
        node = rclpy.create_node("sim_launch_probe")
        heights = []
        node.create_subscription(Odometry, "sim/odom",
                                 lambda m: heights.append((m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec,
                                                           m.pose.pose.position.z)), 10)
        try:
            deadline = time.monotonic() + 120.0
            while (not heights or heights[-1][0] < 5.0) and time.monotonic() < deadline:
                rclpy.spin_once(node, timeout_sec=0.1)
        finally:
            node.destroy_node()
            rclpy.shutdown()
        self.assertTrue(heights and heights[-1][0] >= 5.0, "sim/odom did not reach 5 s of simulated time")
        self.assertGreater(min(z for _, z in heights), STANDING_HEIGHT - 0.05)


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
