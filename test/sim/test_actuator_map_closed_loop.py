"""Joint → actuator mapping in the MuJoCo plant (the closed loop of test_actuator_map.py's mapping): the drives'
compliance compensation."""
import numpy as np
import pytest


@pytest.mark.parametrize("compensated", [False, True])
def test_compliance_compensation_puts_loaded_drives_where_the_command_wants_them(compensated):
    """kangaroo_like standing in the MuJoCo plant on its position drives (stiffness K, damping D of its
    configuration): under the weight each drive deflects by about τ/K. With the compensation the mapper leads each
    target by (τ + D θ̇)/K, and the plant's actuators sit within a tenth of that deflection of the positions that
    realise the balancer's outputs (the loops' solution the mapper found); without it, they sag by it."""
    from humanoid_balance.bench.closed_loop import ClosedLoop, robot_config

    config = robot_config("kangaroo_like")
    loop = ClosedLoop(config, mode="kinematic", compliance_compensation=compensated)
    for _ in range(500):
        loop.tick()
    wanted = loop.loop.mapping.map.q[loop.robot.actuated_q]
    actual = loop.sim.joint_states(loop.actuated)[0]
    deflection = np.abs(loop.signals.actuators.effort / loop.robot.per_kind(loop.actuated, config.drive_stiffness))
    assert deflection.max() > 1e-3  # the knees' ball screws carry the weight: millimetres
    error = np.abs(actual - wanted)
    if compensated:
        assert error.max() < 0.1 * deflection.max()
    else:
        assert error.max() > 0.5 * deflection.max()
