"""Closed-chain kinematics against finite differences and first principles (Kangaroo paper, III-A)."""
import numpy as np
import pinocchio as pin
import pytest

from support.model_fixtures import closed_configuration, consistent_velocity, load, random_actuated

ROBOTS = ["crank_slider", "kangaroo_like"]


@pytest.fixture(scope="module", params=ROBOTS)
def robot_chain(request):
    return load(request.param)


def test_constraint_jacobian_matches_central_differences_of_residual(robot_chain):
    robot, chain = robot_chain
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = closed_configuration(robot, chain, rng)
        q[robot.passive_q] += rng.normal(scale=0.05, size=len(robot.passive_q))  # off the manifold too
        J = chain.linearize(q).J_l
        eps = 1e-6
        J_fd = np.empty_like(J)
        for i in range(robot.nv):
            dq = np.zeros(robot.nv)
            dq[i] = eps
            J_fd[:, i] = (chain.residual(pin.integrate(robot.model, q, dq))
                          - chain.residual(pin.integrate(robot.model, q, -dq))) / (2 * eps)
        np.testing.assert_allclose(J, J_fd, atol=1e-7)


def test_bias_matches_finite_difference_of_jacobian_along_velocity(robot_chain):
    robot, chain = robot_chain
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = closed_configuration(robot, chain, rng)
        v = consistent_velocity(robot, chain, q, rng)
        eps = 1e-6
        dJ = (chain.constraint_jacobian(pin.integrate(robot.model, q, eps * v))
              - chain.constraint_jacobian(pin.integrate(robot.model, q, -eps * v))) / (2 * eps)
        np.testing.assert_allclose(chain.bias(q, v), dJ @ v, atol=1e-6 * max(1.0, np.abs(dJ @ v).max()))


def test_passive_solve_closes_every_loop_for_random_actuator_positions(robot_chain):
    robot, chain = robot_chain
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = robot.reference_q.copy()
        q[robot.actuated_q] = random_actuated(robot, rng)
        solution = chain.solve_passive(q)
        assert np.linalg.norm(chain.residual(solution.q)) < 1e-10
        np.testing.assert_array_equal(solution.q[robot.actuated_q], q[robot.actuated_q])


def test_mapping_jacobian_matches_finite_differences_of_solved_passive_positions(robot_chain):
    robot, chain = robot_chain
    rng = np.random.default_rng(4)
    q = closed_configuration(robot, chain, rng)
    J_m = chain.mapping_jacobian(q)
    eps = 1e-6
    for k in range(len(robot.actuated_q)):
        plus, minus = q.copy(), q.copy()
        plus[robot.actuated_q[k]] += eps
        minus[robot.actuated_q[k]] -= eps
        column = (chain.solve_passive(plus, tolerance=1e-14).q[robot.passive_q]
                  - chain.solve_passive(minus, tolerance=1e-14).q[robot.passive_q]) / (2 * eps)
        np.testing.assert_allclose(J_m[:, k], column, atol=1e-6 * max(1.0, np.abs(column).max()))


def test_differential_inverse_kinematics_and_torque_map_conserve_power(robot_chain):
    robot, chain = robot_chain
    rng = np.random.default_rng(5)
    q = closed_configuration(robot, chain, rng)
    output_velocity = rng.normal(size=len(robot.output_names))
    actuator_velocity = chain.actuator_velocities(q, output_velocity)              # eq. 22
    np.testing.assert_allclose(chain.output_jacobian(q) @ actuator_velocity, output_velocity, atol=1e-10)
    actuator_effort = rng.normal(size=len(robot.actuated_names)) * 100.0
    output_torque = chain.output_torques(q, actuator_effort)                        # eq. 23
    assert actuator_effort @ actuator_velocity == pytest.approx(output_torque @ output_velocity, rel=1e-9)
    np.testing.assert_allclose(chain.actuator_efforts(q, output_torque), actuator_effort, rtol=1e-9, atol=1e-9)


def test_slow_actuator_sweep_never_jumps_assembly_branch(robot_chain):
    """Sweep each actuator through its whole stroke and back in small warm-started steps: every step of
    θ_u stays within 25% of its first-order prediction J_m Δθ_a (the knee's transmission curves that
    much over one step; a jump to the other assembly branch moves joints by the order of a radian),
    and the way back retraces the way out."""
    robot, chain = robot_chain
    lower, upper = robot.position_limits(robot.actuated_names)
    for k in range(len(robot.actuated_q)):
        values = np.concatenate([np.linspace(robot.reference_q[robot.actuated_q[k]], lower[k], 40),
                                 np.linspace(lower[k], upper[k], 120), np.linspace(upper[k], lower[k], 120)])
        q = robot.reference_q.copy()
        outward = {}
        for step, value in enumerate(values):
            previous = q.copy()
            q[robot.actuated_q[k]] = value
            q = chain.solve_passive(q).q
            delta_a = value - previous[robot.actuated_q[k]]
            predicted = chain.mapping_jacobian(previous)[:, k] * delta_a
            jump = np.abs(q[robot.passive_q] - previous[robot.passive_q] - predicted).max()
            assert jump < 0.25 * np.abs(predicted).max() + 1e-9, (robot.actuated_names[k], value, jump)
            if 40 <= step < 160:
                outward[round(value, 12)] = q[robot.passive_q].copy()
            elif round(value, 12) in outward:
                np.testing.assert_allclose(q[robot.passive_q], outward[round(value, 12)], atol=1e-9)


def test_singular_configuration_is_reported_not_solved():
    """Pushing the crank-slider's actuator far past its stroke stretches the rod in line with the crank,
    a toggle position: the solver must refuse rather than return a wrong passive state."""
    from humanoid_balance.model import ClosureError, SingularConfigurationError

    robot, chain = load("crank_slider")
    q = robot.reference_q.copy()
    q[robot.actuated_q] = 0.3  # the rod (0.3 m from pivot to pin) can never reach: crank fully stretched
    with pytest.raises((ClosureError, SingularConfigurationError)) as raised:
        chain.solve_passive(q)
    assert "cond" in str(raised.value) or "‖e_l‖" in str(raised.value)


def test_output_velocity_map_reproduces_output_rates_and_closes_the_loops(robot_chain):
    """T maps (base, output rates) to a full velocity that satisfies J_l ν = 0 and moves the outputs at the
    requested rates — the projection used to run serial-equivalent controllers on closed chains."""
    robot, chain = robot_chain
    q = closed_configuration(robot, chain, np.random.default_rng(9))
    T = chain.output_velocity_map(q)
    rates = np.random.default_rng(10).normal(size=T.shape[1])
    nu = T @ rates
    np.testing.assert_allclose(chain.constraint_jacobian(q) @ nu, 0.0, atol=1e-9)
    np.testing.assert_allclose(nu[robot.output_v], rates[robot.base_nv:], atol=1e-9)


def test_loop_residuals_are_the_pose_of_frame_b_in_frame_a_loop_by_loop(robot_chain):
    """Each loop's rows of e_l, by its name, against pinocchio's relative placement oMf[a]⁻¹ oMf[b] on the loop's own
    axes (eq. 2), off the manifold, where every loop's error differs."""
    robot, chain = robot_chain
    rng = np.random.default_rng(4)
    q = closed_configuration(robot, chain, rng)
    q[robot.passive_q] += rng.normal(scale=0.05, size=len(robot.passive_q))
    residual = chain.linearize(q).residual
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    for loop in chain.loops:
        a_M_b = data.oMf[robot.model.getFrameId(loop.frame_a)].actInv(data.oMf[robot.model.getFrameId(loop.frame_b)])
        expected = np.concatenate([a_M_b.translation, pin.log3(a_M_b.rotation)])[list(loop.axis_indices)]
        np.testing.assert_allclose(residual[chain.loop_slices[loop.name]], expected, atol=1e-15, err_msg=loop.name)
        np.testing.assert_allclose(chain.residual(q)[chain.loop_slices[loop.name]], expected, atol=1e-15)


@pytest.mark.parametrize("name", ["kangaroo_like", "mahru"])
def test_linearize_leaves_the_kinematics_of_its_configuration_when_asked_even_when_kept(name):
    """With ``kinematics`` the chain's data holds pinocchio's joint Jacobians and frame placements at q afterwards,
    whether the linearization was computed or kept while other passes used the data (a serial robot: no loops)."""
    robot, chain = load(name)
    rng = np.random.default_rng(11)
    q = closed_configuration(robot, chain, rng) if chain.m else robot.reference_q
    other = pin.randomConfiguration(robot.model, -np.ones(robot.nq), np.ones(robot.nq))
    reference = robot.model.createData()
    pin.computeJointJacobians(robot.model, reference, q)
    pin.updateFramePlacements(robot.model, reference)
    frame = robot.model.nframes - 1
    for _ in range(2):  # computed, then kept
        first = chain.linearize(q, kinematics=True)
        np.testing.assert_allclose(chain.data.J, reference.J, atol=1e-12)
        np.testing.assert_allclose(chain.data.oMf[frame].homogeneous, reference.oMf[frame].homogeneous, atol=1e-12)
        pin.computeJointJacobians(robot.model, chain.data, other)  # someone else's pass on the data
        pin.updateFramePlacements(robot.model, chain.data)
        assert chain.linearize(q) is first  # kept, and the data left as it is without ``kinematics``
        assert not np.allclose(chain.data.J, reference.J)
