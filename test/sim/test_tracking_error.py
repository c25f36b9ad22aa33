"""The balancer's bound on how far a position command may get from the measured posture (max_tracking_error), in
the closed loop with the embedded MuJoCo plant: a robot whose driver ignores the commands for its first 2 s (as one
whose subscription matches late) stays standing once they arrive; without the bound, the commands integrated
meanwhile arrive all at once and the robot falls."""
import numpy as np
import pytest

from humanoid_balance.bench.closed_loop import ClosedLoop, robot_config

IGNORED, SECONDS = 2.0, 4.0  # the plant ignores the commands this long, of this much simulated time [s]


def run_with_late_driver(max_tracking_error):
    """Base heights [m] of kangaroo_like over SECONDS, its plant ignoring every command of the first IGNORED s;
    and the balancer."""
    loop = ClosedLoop(robot_config("kangaroo_like"), mode="kinematic", max_tracking_error=max_tracking_error)
    apply = loop.sim.set_command
    loop.sim.set_command = lambda *command: apply(*command) if loop.sim.time >= IGNORED else None
    heights = np.array([loop.tick().base_height for _ in range(int(SECONDS / loop.period))])
    return heights, loop.balancer


@pytest.mark.parametrize("max_tracking_error", [0.25, np.inf])
def test_commands_a_late_driver_receives_do_not_throw_the_robot(max_tracking_error):
    heights, balancer = run_with_late_driver(max_tracking_error)
    if np.isfinite(max_tracking_error):
        assert heights.min() > heights[0] - 0.03, "the robot sank or fell once the commands arrived"
        assert balancer.restarts >= 1
    else:  # the reference: the same loop without the bound
        assert heights[-1] < heights[0] - 0.3, "without the bound the robot was expected to fall"
