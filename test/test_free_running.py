"""The node chain as on a robot: the plant runs free against the wall clock (no lockstep, nothing waits for the
controller), every node its own process, at a control rate this machine sustains; the robot stays up through a
6 N·s lateral push and the commands keep pace with the plant, in kinematic mode on position drives and in momentum
mode on joint impedance."""
import pytest

from humanoid_balance.bench import dds_loop
from humanoid_balance.bench.closed_loop import FALL_DROP

pytestmark = pytest.mark.dds
RATE = 100.0  # [Hz] this 2-core machine sustains it with room to spare (humanoid-balance bench dds: the limits)


@pytest.mark.parametrize("layout, mode", [("separate", "kinematic"), ("composed", "kinematic"),
                                          ("separate", "momentum")])
def test_free_running_chain_keeps_the_robot_up_through_a_push(layout, mode):
    """momentum: Garofalo et al. on the plant's joint impedance, the mapper sending each actuator's position,
    velocity, effort, stiffness and damping."""
    loop = dds_loop.measure(RATE, 4.0, 2.0, layout, mode=mode)
    achieved = len(loop.latencies) / loop.seconds
    assert achieved >= 0.7 * RATE, f"{achieved:.0f} commands per second for a plant at {RATE:g} Hz"  # noisy 2-core VM
    assert 0.9 < loop.real_time_factor < 1.1, loop.real_time_factor
    assert loop.start_height - loop.end_height <= FALL_DROP, (
        f"fell: base height by simulated time {loop.heights}; warnings in the window {loop.warnings}")
    assert loop.latencies.max() < 0.5  # no command computed from a stale tick
