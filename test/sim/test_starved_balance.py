"""Issue 54, item 2: a balance that computes on only a share of its states' ticks slows its ZMP gain to that share
(loop.starvation.Starvation.computed_share, control.zmp_com.slowed) and stands where the nominal gain rocks the robot
off its feet. In lockstep, the whole loop (the estimators, the balancer and the mapper) computes on a random third of
the plant's 100 Hz ticks, as the nodes do when the scheduler gives them a third of the time they need, and the
commands reach the plant 40 ms late. With the nominal k_p = 2 1/s kangaroo_like rocks between its toes and heels, its
soles tilting by several degrees, and falls within 5 s for each of these three draws of the ticks (and for three
of five others); slowed, it stands."""
import numpy as np
import pytest

from humanoid_balance.bench.closed_loop import ClosedLoop, robot_config
from humanoid_balance.control.zmp_com import check_gains, slowed
from humanoid_balance.sim.perturbation import PlantPerturbation

SHARE = 1.0 / 3.0     # of the plant's ticks the loop computes on
DELAY = 4             # [ticks of 10 ms] before a command reaches the plant
DURATION = 15.0       # [s]
SHIFT = 0.05          # [m] the CoM reference's move forwards after 2 s


@pytest.mark.parametrize("draw", (3, 4, 7))
def test_a_balance_computing_on_a_third_of_its_ticks_stands_with_its_zmp_gain_slowed(draw):
    loop = ClosedLoop(robot_config("kangaroo_like"), mode="kinematic", period=0.01,
                      perturbation=PlantPerturbation(command_delay=DELAY))
    cycle, rng, last, shares = loop.loop.cycle, np.random.default_rng(draw), [], []

    def cycle_when_scheduled(observation, dt=None):
        if not last or rng.random() < SHARE:  # else the plant keeps the last command
            last[:] = [cycle(observation)]     # (the time since the last: from the stamps)
            shares.append(loop.loop.balance.controller.computed_share)
        return last[0]
    loop.loop.cycle = cycle_when_scheduled
    while loop.sim.time < DURATION:
        sample = loop.tick(com_offset=(SHIFT if loop.sim.time > 2.0 else 0.0, 0.0, 0.0))
        assert not loop.fallen(sample), f"fell at {sample.time:.2f} s"
    settled = shares[len(shares) // 3:]
    assert np.median(settled) < 0.5, f"the gain slowed to {np.median(settled):.2f} of k_p"  # (1/3 / 0.9: 0.37)
    gains = loop.loop.balance.controller.config.zmp_com
    check_gains(slowed(gains, min(settled)), com_height=0.85)  # within eq. 25 and 31 (GainError otherwise)
