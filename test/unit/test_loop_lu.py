"""The structured LU of J_l,u and J_l,s against numpy's dense solves (Kangaroo eqs. 7, 22)."""
import numpy as np
import pytest

from humanoid_balance.model.errors import SingularConfigurationError
from humanoid_balance.model.loop_lu import LoopLU
from support.model_fixtures import closed_configuration, load


@pytest.mark.parametrize("name", ["crank_slider", "kangaroo_like"])
def test_solves_match_numpy_on_both_square_blocks_off_the_manifold_too(name):
    robot, chain = load(name)
    rng = np.random.default_rng(7)
    q = closed_configuration(robot, chain, rng)
    q[robot.passive_q] += rng.normal(scale=0.05, size=len(robot.passive_q))
    J_l = chain.linearize(q).J_l
    for lu in (chain.passive_lu, chain.solved_lu):
        A = J_l[:, lu.columns]
        factors = lu.factor(J_l)
        for rhs in (rng.normal(size=chain.m), rng.normal(size=(chain.m, 13))):
            np.testing.assert_allclose(lu.solve(factors, rhs), np.linalg.solve(A, rhs), rtol=1e-9, atol=1e-11)


def test_kangaroo_blocks_are_factorised_as_bands_and_a_small_chain_densely():
    _, kangaroo = load("kangaroo_like")
    assert kangaroo.passive_lu.band is not None and kangaroo.solved_lu.band is not None
    assert max(kangaroo.solved_lu.band) <= 7  # J_l,s: twelve blocks of at most 8 joints
    _, crank = load("crank_slider")
    assert crank.passive_lu.band is None


def test_a_singular_block_is_reported_by_name():
    support = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    lu = LoopLU(np.kron(np.eye(4), support), np.arange(12), "J_test")
    assert lu.band is not None
    J = np.kron(np.eye(4), np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]]))  # rank-deficient blocks
    with pytest.raises(SingularConfigurationError, match="J_test is singular"):
        lu.factor(J)


@pytest.mark.parametrize("name", ["crank_slider", "kangaroo_like", "mahru"])
def test_grouped_sensitivities_match_one_solve_per_column(name):
    """J_l,s⁻¹ J_l,o, J_l,s⁻¹ e_l and J_l,u⁻¹ J_l,a with the columns on disjoint blocks summed (three right-hand sides
    on kangaroo_like), against numpy's solve of every column; a serial robot has no rows."""
    robot, chain = load(name)
    rng = np.random.default_rng(8)
    q = closed_configuration(robot, chain, rng) if chain.m else robot.reference_q
    if chain.m:
        q[robot.passive_q] += rng.normal(scale=0.05, size=len(robot.passive_q))
    lin = chain.linearize(q)
    for grouped, lu, columns in ((chain.output_columns, chain.solved_lu, robot.output_v),
                                 (chain.actuated_columns, chain.passive_lu, robot.actuated_v)):
        factors = lu.factor(lin.J_l)
        sensitivities, step = grouped.solve(factors, lin.J_l, lin.residual)
        alone, = grouped.solve(factors, lin.J_l)  # without a further right-hand side: the same columns
        A = lin.J_l[:, lu.columns]
        expected = np.linalg.solve(A, np.column_stack([lin.J_l[:, columns], lin.residual])) if chain.m else \
            np.zeros((0, len(columns) + 1))
        np.testing.assert_allclose(sensitivities, expected[:, :-1], rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(step, expected[:, -1], rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(alone, expected[:, :-1], rtol=1e-9, atol=1e-11)
    if name == "kangaroo_like":
        assert chain.output_columns.summing.shape[1] == 3 and chain.actuated_columns.summing.shape[1] == 3
