"""launch_testing: balance.launch.py starts the four nodes of the suite, in four processes or composed in one
(balance_stack), each reports on /diagnostics, the topic remaps given as launch arguments land on the right nodes,
and every process exits cleanly.

Runs on a ROS 2 machine (``colcon test``); launch and launch_testing have no PyPI wheels. Robust by design: the
test waits until every node has reported (not for the first /diagnostics message, which carries one node's
status), and a node shut down at any moment of its start-up still exits 0 (test_colcon_build.py checks that).
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

from ros_probe import Probe  # noqa: E402

LAUNCH_FILE = Path(__file__).resolve().parents[1] / "launch" / "balance.launch.py"
SUITE = ("state_estimator: estimation", "contact_estimator: contacts", "centroidal_balancer: balance",
         "loop_closure_mapper: mapping")
START_TIMEOUT = 120.0  # for four nodes to load the robot on a loaded machine [s]
REMAPS = {  # launch argument → topic, and the node that must be on it (subscriber or publisher)
    "joint_states_topic": ("/my_robot/joint_states", "state_estimator", "subscription"),
    "imu_topic": ("/my_robot/imu", "state_estimator", "subscription"),
    "left_wrench_topic": ("/my_robot/left_ft/wrench", "contact_estimator", "subscription"),
    "right_wrench_topic": ("/my_robot/right_ft/wrench", "contact_estimator", "subscription"),
    "commands_topic": ("/my_robot/commands", "loop_closure_mapper", "publisher"),
}


@pytest.mark.launch_test
@launch_testing.parametrize("composed", ["false", "true"])
def generate_test_description(composed):
    arguments = {argument: topic for argument, (topic, _, _) in REMAPS.items()}
    suite = launch.actions.IncludeLaunchDescription(PythonLaunchDescriptionSource(str(LAUNCH_FILE)),
                                                    launch_arguments={**arguments, "composed": composed}.items())
    return launch.LaunchDescription([suite, launch_testing.actions.ReadyToTest()])


class TestSuite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.probe = Probe("balance_launch_probe")

    @classmethod
    def tearDownClass(cls):
        cls.probe.close()

    def wait_for_every_node(self):
        reported = self.probe.spin_until(lambda: set(SUITE) <= set(self.probe.diagnostics), START_TIMEOUT)
        missing = sorted(set(SUITE) - set(self.probe.diagnostics))
        self.assertTrue(reported, f"no /diagnostics within {START_TIMEOUT} s from {missing}")

    def test_every_node_reports_on_diagnostics(self):
        self.wait_for_every_node()

    def test_remapped_topics_land_on_the_right_nodes(self):
        self.wait_for_every_node()
        graph = self.probe.node

        def endpoints(topic, kind):
            infos = (graph.get_subscriptions_info_by_topic(topic) if kind == "subscription"
                     else graph.get_publishers_info_by_topic(topic))
            return {info.node_name for info in infos}

        for argument, (topic, node, kind) in REMAPS.items():
            found = self.probe.spin_until(lambda: node in endpoints(topic, kind), 10.0)
            self.assertTrue(found, f"{argument}:={topic}: no {kind} of {node} on it (found {endpoints(topic, kind)})")


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
