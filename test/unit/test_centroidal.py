"""Centroidal quantities against pinocchio on serial models, finite differences and first principles."""
import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.model import Centroidal, ClosedChain, load_robot
from support.model_fixtures import DATA, closed_configuration, talos_urdf


@pytest.fixture(scope="module")
def kangaroo(kangaroo_floating):
    robot, chain = kangaroo_floating
    return robot, chain, Centroidal(chain)


@pytest.fixture(scope="module")
def talos():
    robot = load_robot(talos_urdf(), floating_base=True)
    return robot, Centroidal(ClosedChain(robot))


def test_serial_robot_matches_pinocchio_directly(talos):
    robot, centroidal = talos
    q = pin.randomConfiguration(robot.model, -np.ones(robot.nq), np.ones(robot.nq))
    data = robot.model.createData()
    np.testing.assert_allclose(centroidal.com(q), pin.centerOfMass(robot.model, data, q))
    np.testing.assert_allclose(centroidal.com_jacobian(q), pin.jacobianCenterOfMass(robot.model, data, q), atol=1e-12)
    np.testing.assert_allclose(centroidal.centroidal_momentum_matrix(q),
                               pin.computeCentroidalMap(robot.model, data, q), atol=1e-12)


def test_com_jacobian_matches_finite_differences_through_the_loops(kangaroo):
    robot, chain, centroidal = kangaroo
    rng = np.random.default_rng(11)
    q = closed_configuration(robot, chain, rng)
    J = centroidal.com_jacobian(q)
    eps = 1e-6
    for k in range(6, J.shape[1]):  # actuated columns: move one actuator, re-close the loops
        plus, minus = q.copy(), q.copy()
        plus[robot.actuated_q[k - 6]] += eps
        minus[robot.actuated_q[k - 6]] -= eps
        column = (centroidal.com(chain.solve_passive(plus, tolerance=1e-14).q)
                  - centroidal.com(chain.solve_passive(minus, tolerance=1e-14).q)) / (2 * eps)
        np.testing.assert_allclose(J[:, k], column, atol=1e-8)


def test_centroidal_momentum_matrix_matches_sum_of_body_momenta(kangaroo):
    """h = Σ_i [m_i v_i; I_i ω_i + (c_i − c) × m_i v_i], summed body by body from pinocchio's link
    velocities, with ν = G ν_a through the closed chains."""
    robot, chain, centroidal = kangaroo
    rng = np.random.default_rng(12)
    q = closed_configuration(robot, chain, rng)
    nu_a = rng.normal(size=6 + len(robot.actuated_v))
    v = chain.velocity_map(q) @ nu_a
    model, data = robot.model, robot.model.createData()
    pin.forwardKinematics(model, data, q, v)
    com = pin.centerOfMass(model, data, q)
    momentum = np.zeros(6)
    for joint in range(1, model.njoints):
        inertia, placement = model.inertias[joint], data.oMi[joint]
        velocity = data.v[joint]  # body twist in the joint frame
        c_world = placement.act(inertia.lever)
        v_com = placement.rotation @ (velocity.linear + np.cross(velocity.angular, inertia.lever))
        omega = placement.rotation @ velocity.angular
        I_world = placement.rotation @ inertia.inertia @ placement.rotation.T
        momentum[:3] += inertia.mass * v_com
        momentum[3:] += I_world @ omega + np.cross(c_world - com, inertia.mass * v_com)
    np.testing.assert_allclose(centroidal.centroidal_momentum_matrix(q) @ nu_a, momentum, atol=1e-10)


def test_inertia_decoupling_structure(kangaroo):
    """Λ_p = I/m (Garofalo eq. 28) and Λ_h = blockdiag(Λ_p, Λ_l) (eq. 22), through the loop projection."""
    robot, chain, centroidal = kangaroo
    q = closed_configuration(robot, chain, np.random.default_rng(13))
    result = centroidal.inertia_decoupling(q)
    np.testing.assert_allclose(result.Lambda_p, np.eye(3) / robot.total_mass, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(result.Lambda_h[:3, 3:], 0.0, atol=1e-9 * np.abs(result.Lambda_h).max())
    np.testing.assert_allclose(result.Lambda_h[3:, 3:], result.Lambda_l, rtol=1e-8)
    assert np.all(np.linalg.eigvalsh(result.Lambda_q) > 0)


def test_cartesian_inertia_is_symmetric_positive_definite(kangaroo, talos):
    robot, chain, centroidal = kangaroo
    q = closed_configuration(robot, chain, np.random.default_rng(14))
    for c, config, frame in ((centroidal, q, "left_sole"),
                             (talos[1], pin.neutral(talos[0].model), "left_sole_link")):
        Lambda = c.cartesian_inertia(config, frame)
        np.testing.assert_allclose(Lambda, Lambda.T, atol=1e-9 * np.abs(Lambda).max())
        assert np.all(np.linalg.eigvalsh((Lambda + Lambda.T) / 2) > 0)


def test_cartesian_inertia_and_camm_of_an_analytic_robot():
    """Slider (carriage 2 kg + disc 1 kg) and turntable (disc I_zz = 0.02 kg·m²), every centre of mass on
    the x axis: the disc frame sees 3 kg along x and 0.02 kg·m² about z (eq. 31 with ε → 0, the other
    directions have no joint and read 1/ε), and only the spin creates angular momentum (eq. 33)."""
    robot = load_robot(DATA / "slider_turntable.urdf", floating_base=True)
    centroidal = Centroidal(ClosedChain(robot))
    q = pin.neutral(robot.model)
    epsilon = 1e-5
    Lambda = centroidal.cartesian_inertia(q, "disc", epsilon=epsilon)
    assert Lambda[0, 0] == pytest.approx(1 / (1 / 3.0 + epsilon))
    assert Lambda[5, 5] == pytest.approx(1 / (1 / 0.02 + epsilon))
    for axis in (1, 2, 3, 4):
        assert Lambda[axis, axis] == pytest.approx(1 / epsilon)
    np.testing.assert_allclose(centroidal.camm_axis_norms(q), [0.0, 0.0, 0.02], atol=1e-12)


def test_camm_in_output_coordinates_against_closing_the_loops_by_newton(kangaroo):
    """Each output-coordinate CAMM column is the angular momentum of a unit output rate: central differences
    of the configuration the mapper closes by Newton for outputs ± δ, through pinocchio's serial CMM."""
    from humanoid_balance.mapping.actuator_map import ActuatorMap

    robot, chain, centroidal = kangaroo
    q = robot.reference_q
    outputs, delta = q[robot.output_q], 1e-6
    A_tree = pin.computeCentroidalMap(robot.model, robot.model.createData(), q)
    columns = []
    for k in range(len(outputs)):
        closed = []
        for sign in (1.0, -1.0):
            mapper = ActuatorMap(robot)
            mapper.q = q.copy()
            mapper.positions(outputs + sign * delta * np.eye(len(outputs))[k])
            closed.append(mapper.q)
        columns.append(A_tree[3:] @ pin.difference(robot.model, closed[1], closed[0]) / (2 * delta))
    expected = np.linalg.norm(np.array(columns).T, axis=1)
    np.testing.assert_allclose(centroidal.camm_axis_norms(q, outputs=True), expected, rtol=1e-5)
