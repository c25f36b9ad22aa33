"""launch_testing: sim.launch.py (plant + suite, no RViz; robot_state_publisher where installed) starts all five
nodes and keeps kangaroo_like standing, in kinematic mode on position drives and in momentum mode on the
actuators' joint impedance: after 5 s of simulated time the ground-truth base is still at its standing height.
Every node exits cleanly.

Runs on a ROS 2 machine (``colcon test``); launch and launch_testing have no PyPI wheels.
"""
import unittest
from pathlib import Path

import pytest

launch_testing = pytest.importorskip(
    "launch_testing", reason="launch_testing is not installable from PyPI; run this test on a ROS 2 machine "
    "with `colcon test --packages-select humanoid_balance`")

import launch  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402

from humanoid_balance.nodes.messages import stamp_seconds  # noqa: E402
from ros_probe import Probe  # noqa: E402

LAUNCH_FILE = Path(__file__).resolve().parents[1] / "launch" / "sim.launch.py"
SUITE = ("mujoco_sim: simulation", "state_estimator: estimation", "contact_estimator: contacts",
         "centroidal_balancer: balance", "loop_closure_mapper: mapping")
START_TIMEOUT = 120.0      # for five nodes to load the robot on a loaded machine [s]
STANDING_HEIGHT = 0.90     # kangaroo_like's base above the floor in its crouched reference stance [m]
SIMULATED = 5.0            # simulated time the robot must stand [s]


@pytest.mark.launch_test
@launch_testing.parametrize("balance_mode", ["kinematic", "momentum"])
def generate_test_description(balance_mode):
    simulation = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(LAUNCH_FILE)),
        launch_arguments={"rviz": "false", "balance_mode": balance_mode}.items())
    return launch.LaunchDescription([simulation, launch_testing.actions.ReadyToTest()])


class TestStanding(unittest.TestCase):
    def test_still_standing_after_five_simulated_seconds(self):
        probe = Probe("sim_launch_probe")
        heights = probe.record(Odometry, "sim/odom")
        try:
            reported = probe.spin_until(lambda: set(SUITE) <= set(probe.diagnostics), START_TIMEOUT)
            self.assertTrue(reported, f"no /diagnostics within {START_TIMEOUT} s from "
                                      f"{sorted(set(SUITE) - set(probe.diagnostics))}")
            simulated = lambda: stamp_seconds(heights[-1].header.stamp) if heights else 0.0  # noqa: E731
            self.assertTrue(probe.spin_until(lambda: simulated() >= SIMULATED, 120.0),
                            f"sim/odom reached {simulated():.2f} s of simulated time, not {SIMULATED} s")
        finally:
            probe.close()
        self.assertGreater(min(m.pose.pose.position.z for m in heights), STANDING_HEIGHT - 0.05)


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
