"""launch_testing: balance.launch.py starts the suite, which reports on /diagnostics and exits cleanly.

Runs on a ROS 2 machine (``colcon test``); launch and launch_testing have no PyPI wheels.
"""
import unittest
from pathlib import Path

import pytest

launch_testing = pytest.importorskip(
    "launch_testing", reason="launch_testing is not installable from PyPI; run this test on a ROS 2 machine "
    "with `colcon test --packages-select humanoid_balance`")

import launch  # noqa: E402
import launch_testing.asserts  # noqa: E402
import launch_testing_ros  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402

LAUNCH_FILE = Path(__file__).resolve().parents[1] / "launch" / "balance.launch.py"


@pytest.mark.launch_test
def generate_test_description():
    suite = launch.actions.IncludeLaunchDescription(PythonLaunchDescriptionSource(str(LAUNCH_FILE)))
    return launch.LaunchDescription([suite, launch_testing.actions.ReadyToTest()])


class TestSuiteReports(unittest.TestCase):
    def test_diagnostics_published(self):
        with launch_testing_ros.WaitForTopics([("/diagnostics", DiagnosticArray)], timeout=15.0) as waiter:
            names = {status.name for array in waiter.received_messages("/diagnostics") for status in array.status}
        self.assertIn("state_estimator: estimation", names)
        self.assertIn("contact_estimator: contacts", names)
        self.assertIn("centroidal_balancer: balance", names)
        self.assertIn("loop_closure_mapper: mapping", names)


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
