"""The node chain as on a robot: the plant runs free against the wall clock (no lockstep, nothing waits for the
controller), every node its own process, at a control rate this machine sustains; the robot stays up through a
6 N·s lateral push and the commands keep pace with the plant, in kinematic mode on position drives and in momentum
mode on joint impedance."""
import pytest

from humanoid_balance.bench import dds_loop
from humanoid_balance.bench.closed_loop import FALL_DROP

pytestmark = pytest.mark.dds
# [Hz] rates a 2-core machine sustains with room to spare (humanoid-balance bench dds: the limits). Six Python
# processes on two cores (separate) pay rclpy's cost of a message on cold caches several times a tick: 1.4 cores busy
# at 50 Hz, saturated at 100 Hz (64-71 commands per second measured); two processes (composed) keep up at 100 Hz.
SEPARATE_RATE, COMPOSED_RATE = 50.0, 100.0
MIN_PACE = 0.5  # commands per plant tick, at least: a chain that stalls. Keeping pace (80 %) is a speed target, in
                # humanoid-balance bench dds beside the rclpy floors of the same run; a CI host measured 31 commands
                # per second here at 50 Hz (momentum) where this one measures 50


@pytest.mark.parametrize("layout, mode, rate", [("separate", "kinematic", SEPARATE_RATE),
                                                ("composed", "kinematic", COMPOSED_RATE),
                                                ("separate", "momentum", SEPARATE_RATE)])
def test_free_running_chain_keeps_the_robot_up_through_a_push(layout, mode, rate):
    """momentum: Garofalo et al. on the plant's joint impedance, the mapper sending each actuator's position,
    velocity, effort, stiffness and damping."""
    loop = dds_loop.measure(rate, 4.0, 2.0, layout, mode=mode)
    assert 0.9 < loop.real_time_factor < 1.1, loop.real_time_factor
    assert loop.start_height - loop.end_height <= FALL_DROP, (
        f"fell: base height by simulated time {loop.heights}; warnings in the window {loop.warnings}")
    assert loop.latencies.max() < 0.5  # no command computed from a stale tick
    achieved = len(loop.latencies) / loop.seconds
    busy = {name: round(seconds / loop.seconds, 2) for name, seconds in loop.cpu.items()}
    assert achieved >= MIN_PACE * rate, \
        f"{achieved:.0f} commands per second for a plant at {rate:g} Hz; cores busy by process: {busy}"
