"""Encoder calibration (Kangaroo eqs. 41–42): recover known actuator offsets from relative encoders
and absolute passive encoders, as in the paper's Fig. 18 (6 initial measurements)."""
import numpy as np
import pytest

from humanoid_balance.estimation.calibration import calibrate_actuator_offsets
from support.model_fixtures import closed_configuration, load


@pytest.mark.parametrize("name", ["crank_slider", "kangaroo_like"])
@pytest.mark.parametrize("seed", range(4))
def test_recovers_random_offsets_below_1e_10_in_at_most_8_iterations(name, seed):
    """Six random configurations and offsets per seed. Calibration starts, as in the node, from the
    configuration the estimator tracks for the raw (offset) readings."""
    robot, chain = load(name)
    rng = np.random.default_rng(seed)
    prismatic = np.array([robot.model.joints[robot.model.getJointId(n)].shortname().startswith("JointModelP")
                          for n in robot.actuated_names])
    on_a_loop = chain.relative_support[:, robot.actuated_v].any(axis=0)  # direct drives read absolute angles
    measured_q = [robot.joint_q_index(n) for n in robot.measured_names]
    for trial in range(6):
        truth = closed_configuration(robot, chain, rng, fraction=0.5)
        offsets = np.where(prismatic, rng.uniform(-0.005, 0.005, prismatic.size),
                           rng.uniform(-np.radians(10), np.radians(10), prismatic.size)) * on_a_loop
        raw = truth[robot.actuated_q] - offsets
        tracking = truth.copy()
        tracking[robot.actuated_q] = raw
        tracking = chain.solve_passive(tracking).q
        result = calibrate_actuator_offsets(chain, raw, truth[measured_q], initial_q=tracking)
        assert result.converged, (trial, result.error_norm)
        assert result.error_norm < 1e-10
        assert result.iterations <= 8
        np.testing.assert_allclose(result.offsets, offsets, atol=1e-9)
        np.testing.assert_allclose(result.q, truth, atol=1e-8)


def test_reports_non_convergence_with_the_residual():
    robot, chain = load("crank_slider")
    measured = [np.pi]  # crank half a turn away: not reachable from these actuator readings in 2 steps
    result = calibrate_actuator_offsets(chain, [0.0], measured, max_iterations=2)
    assert not result.converged
    assert result.error_norm > 1e-3
