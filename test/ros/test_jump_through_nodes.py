"""The demo's jump scenario through the four nodes (the demo's runner, plant in lockstep, viip mode), to its end:
three jumps 2 s apart, asked of centroidal_balancer/jump, judged on the plant's ground truth against
Sugihara–Nakamura's plan (stoop 50 mm, apex 50 mm, landing absorbed within the stoop depth) and against landing in
place: the soles leave the floor, the COG rises 50 mm ± 10 % above where it stood, the landing sinks at most 65 mm
below the touchdown height, the base is pitched less than 2° as it touches down and stands still again within 2 cm
of where it stood when the jump was asked (issue 50: it walked 7 cm back per jump, pitched 7°, and the demo failed on
the CoM reference left behind the feet), the robot does not fall, and the demo's verdict is PASSED with every node
OK.

The demo runs in this process, so in a DDS domain of its own: what it might leave behind there (rclpy keeps a
destroyed lifecycle node in the graph while reference cycles hold it, cf. ros2/rclpy#1710) cannot meet the node
tests that run next in the session's domain under the same node names."""
import io
import math

import pytest

from humanoid_balance.bench.dds_loop import environment_variables, ros_environment
from humanoid_balance.demo.runner import run_demo
from humanoid_balance.demo.scenario import SCENARIOS
from humanoid_balance.progress import Progress

pytestmark = pytest.mark.dds
DEMO_DOMAIN = ros_environment(index=-25)  # neither the session's domain nor a chain's (index 0, 1, 2, …)


def test_the_jump_scenario_lands_three_jumps_in_place_through_the_nodes(tmp_path):
    scenario = SCENARIOS["jump"]
    with environment_variables(DEMO_DOMAIN):
        code, figures, _ = run_demo(scenario, tmp_path / "report", mode="viip",
                                    progress=Progress(scenario.duration, stream=io.StringIO()))
    assert len(figures["jumps"]) == 3
    for jump in figures["jumps"]:
        assert jump["left the floor"]
        assert jump["apex above the standing COG [m]"] == pytest.approx(0.05, rel=0.1)
        assert jump["landing depth [m]"] <= 0.065
        assert jump["landing drift [m]"] <= 0.02
        assert abs(jump["pitch at landing [rad]"]) <= math.radians(2.0)
    assert not figures["fell"]
    assert figures["all nodes OK"], figures["nodes"]
    assert figures["success"] and code == 0
