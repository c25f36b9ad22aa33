"""Momentum-based balance (Garofalo et al. eqs. 36–39): wrench distribution and joint torques checked
against Newton–Euler at the CoM, the constraint set, and the full statics of the model."""
import daqp
import numpy as np
import osqp
import pinocchio as pin
import pytest
from scipy import sparse

from humanoid_balance.control.momentum_balance import (TIPPING_CUT, MomentumGains, QpStatus, WrenchDistribution,
                                                       contact_wrench_map, desired_com_wrench, joint_torques)
from humanoid_balance.control.balance_controller import WRENCH_TOLERANCE
from humanoid_balance.model import Centroidal
from humanoid_balance.model.projected_dynamics import output_dynamics
from humanoid_balance.model.soles import sole_rectangle
from support.model_fixtures import (closed_configuration, consistent_velocity, constrained_accelerations, load,
                                    static_stance)

SOLES = ("left_sole", "right_sole")
GAINS = MomentumGains(K_P=np.eye(3) * 800.0, K_D=np.eye(3) * 4.0, K_R=np.eye(3) * 300.0, D=np.eye(3) * 4.0)


@pytest.fixture(scope="module")
def kangaroo(kangaroo_floating):
    robot, chain = kangaroo_floating
    q = robot.reference_q
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    placements = [data.oMf[robot.frame_id(s)].copy() for s in SOLES]
    com = pin.centerOfMass(robot.model, data, q)
    rectangles = [sole_rectangle(robot, s) for s in SOLES]
    return robot, chain, q, placements, com, rectangles


def check_constraints(wrench, rectangle, mu, f_min, torsion, tol=1e-6):
    f, t = wrench[:3], wrench[3:]
    assert f[2] >= f_min - tol
    assert abs(f[0]) <= mu * f[2] + tol and abs(f[1]) <= mu * f[2] + tol
    assert rectangle.x_min * f[2] - tol <= -t[1] <= rectangle.x_max * f[2] + tol
    assert rectangle.y_min * f[2] - tol <= t[0] <= rectangle.y_max * f[2] + tol
    assert abs(t[2]) <= torsion * f[2] + tol


def test_desired_wrench_at_rest_on_target_is_the_weight():
    R = np.eye(3)
    w = desired_com_wrench(40.0, [0, 0, 0.8], np.array([0, 0, 0.8]), R, R, np.zeros(6), GAINS)
    np.testing.assert_allclose(w, [0, 0, 40.0 * 9.81, 0, 0, 0])


def test_orientation_spring_restores_towards_the_desired_attitude():
    """A base rolled by +0.1 rad about x: τ_P must push back (negative x torque), of size ≈ K_R·0.1 for the
    quaternion spring −2(δ K_R ε + ε × K_R ε), ε = sin(0.05) x̂."""
    R = pin.rpy.rpyToMatrix(0.1, 0, 0)
    w = desired_com_wrench(40.0, [0, 0, 0.8], np.array([0, 0, 0.8]), R, np.eye(3), np.zeros(6), GAINS)
    assert w[3] == pytest.approx(-2 * np.cos(0.05) * 300.0 * np.sin(0.05))
    np.testing.assert_allclose(w[4:], 0.0, atol=1e-12)


def test_static_stance_wrenches_sum_to_the_desired_com_wrench_and_satisfy_every_constraint(kangaroo):
    robot, _, q, placements, com, rectangles = kangaroo
    mass = robot.total_mass
    distribution = WrenchDistribution(rectangles, mu=0.7, f_min=10.0)
    G = [contact_wrench_map(M, com) for M in placements]
    for shift in ([0, 0, 0], [0.01, 0.005, 0], [-0.02, 0.01, 0.01]):
        w_d = desired_com_wrench(mass, com + np.array(shift), com, np.eye(3), np.eye(3), np.zeros(6), GAINS)
        result = distribution.solve(G, w_d, (0, 1), mass)
        assert result.status == "solved"
        np.testing.assert_allclose(result.residual, 0.0, atol=1e-6)
        for wrench, rectangle, torsion in zip(result.wrenches, rectangles, distribution.torsion):
            check_constraints(wrench, rectangle, 0.7, 10.0, torsion)
        # Newton–Euler at the CoM, summed independently of G: Σ (R f, R τ + (p − c) × R f).
        total = np.zeros(6)
        for M, wrench in zip(placements, result.wrenches):
            force = M.rotation @ wrench[:3]
            total += np.r_[force, M.rotation @ wrench[3:] + np.cross(M.translation - com, force)]
        np.testing.assert_allclose(total, w_d, atol=1e-6)


def test_the_feet_squeeze_each_other_no_more_than_the_desired_wrench_asks(kangaroo):
    """The internal forces between the feet are the least that meet w_d, whatever came before: after desired
    wrenches that push the CoPs and the friction pyramids to their limits (a push's), back to the weight alone the
    distribution is the minimum-norm one of numpy's pseudo-inverse of Σ G_i (no constraint active), not internal
    forces the warm start left (33 N sideways and 3 N·m of yaw when they were left in)."""
    robot, _, _, placements, com, rectangles = kangaroo
    mass = robot.total_mass
    distribution = WrenchDistribution(rectangles, mu=0.7, f_min=10.0)
    G = [contact_wrench_map(M, com) for M in placements]
    weight = np.array([0.0, 0.0, mass * 9.81, 0.0, 0.0, 0.0])
    for phase in np.linspace(0.0, 2.0 * np.pi, 200):
        distribution.solve(G, weight + np.sin(phase) * np.array([-200.0, 80.0, 0.0, 40.0, -120.0, 15.0]), (0, 1),
                           mass)
    result = distribution.solve(G, weight, (0, 1), mass)
    least = np.linalg.pinv(np.hstack(G)) @ weight
    np.testing.assert_allclose(result.wrenches.ravel(), least, atol=1e-3)
    np.testing.assert_allclose(result.residual, 0.0, atol=1e-6)


@pytest.mark.parametrize("torque_length", [None, 0.05])
def test_wrenches_within_the_constraints_are_the_least_ones_without_the_solver(kangaroo, torque_length):
    """Desired wrenches the feet give with their CoPs inside (a standing robot's, its CoM a centimetre off): the
    distribution is the least wrenches of the sum, numpy's pseudo-inverse of Σ G_i (with a torque length ℓ, of
    Σ G_i S^-1/2 in the scaled wrenches S^1/2 w, S = diag(1, 1, 1, ℓ⁻², ℓ⁻², ℓ⁻²): the lever rule), found without
    OSQP (0 iterations); one beyond the soles' reach goes to OSQP and keeps the CoPs inside."""
    robot, _, _, placements, com, rectangles = kangaroo
    mass = robot.total_mass
    distribution = WrenchDistribution(rectangles, mu=0.7, f_min=10.0, torque_length=torque_length)
    G = [contact_wrench_map(M, com) for M in placements]
    scale = np.tile([1.0, 1.0, 1.0] + [1.0 if torque_length is None else torque_length] * 3, 2)  # S^-1/2
    for shift in ([0, 0, 0], [0.01, 0.005, 0], [-0.01, -0.01, 0.005]):
        w_d = desired_com_wrench(mass, com + np.array(shift), com, np.eye(3), np.eye(3), np.zeros(6), GAINS)
        result = distribution.solve(G, w_d, (0, 1), mass)
        assert result.status == QpStatus.SOLVED and result.iterations == 0
        least = scale * (np.linalg.pinv(np.hstack(G) * scale) @ w_d)
        np.testing.assert_allclose(result.wrenches.ravel(), least, atol=1e-9 * mass * 9.81)
    push = desired_com_wrench(mass, com, com, np.eye(3), np.eye(3), np.zeros(6), GAINS) \
        + mass * 9.81 * np.array([0.0, 0.0, 0.0, 0.2, -0.2, 0.0])  # a ZMP 20 cm off: beyond the soles
    result = distribution.solve(G, push, (0, 1), mass)
    assert result.status == QpStatus.SOLVED and result.iterations > 0
    for wrench, rectangle, torsion in zip(result.wrenches, rectangles, distribution.torsion):
        check_constraints(wrench, rectangle, 0.7, 10.0, torsion)


@pytest.mark.parametrize("torque_length", [None, 0.05])
def test_a_saturated_distribution_carries_no_internal_forces_the_constraints_do_not_ask_for(kangaroo, torque_length):
    """A desired wrench whose least wrenches break the lighter foot's friction pyramid (a sideways force, the ZMP 6 cm
    towards the right foot, the left one carrying ~40 of ~520 N: as on a slope): the distribution is the
    least wrenches (‖f‖² + ‖τ/ℓ‖², ℓ = 1 m without a torque length) of its own sum within the constraints, as a
    polished OSQP solve of that QP finds them, and its sum is the QP's (as close to the desired wrench as DAQP's exact
    optimum)."""
    robot, _, _, placements, com, rectangles = kangaroo
    mass = robot.total_mass
    distribution = WrenchDistribution(rectangles, torque_length=torque_length, tolerance=WRENCH_TOLERANCE)
    G = [contact_wrench_map(M, com) for M in placements]
    weight = mass * 9.81 * np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    w_d = weight + np.array([30.0, 50.0, 0.0, -0.06 * mass * 9.81, 0.0, 0.0])  # the ZMP 6 cm towards the right foot
    result = distribution.solve(G, w_d, (0, 1), mass)
    assert result.status == QpStatus.SOLVED and result.iterations > 0
    x, G_all = result.wrenches.ravel(), np.hstack(G)
    qp = distribution.build(G, w_d, (0, 1))
    exact, _, flag, _ = daqp.solve(qp.P, qp.q, qp.A, qp.u, qp.l, np.zeros(len(qp.l), dtype=np.intc))
    assert flag == 1
    weighted = [np.sqrt(distribution.weights) * (G_all @ w - w_d) for w in (x, exact)]
    assert np.linalg.norm(weighted[0]) <= np.linalg.norm(weighted[1]) + 1e-4 * mass * 9.81
    ell = 1.0 if torque_length is None else torque_length
    cost = np.tile([1.0, 1.0, 1.0] + [ell ** -2] * 3, 2)
    reference = osqp.OSQP()  # the least wrenches of x's sum within the constraints, a solver of its own, polished
    reference.setup(sparse.csc_matrix(np.diag(cost)), np.zeros(12), sparse.csc_matrix(np.vstack([G_all, qp.A])),
                    np.r_[G_all @ x, qp.l], np.r_[G_all @ x, qp.u], eps_abs=1e-10, eps_rel=1e-10, max_iter=100000,
                    polishing=True, verbose=False)
    least = reference.solve(raise_error=False)
    assert least.info.status == "solved"
    np.testing.assert_allclose(x, least.x, atol=1e-6 * mass * 9.81)
    for wrench, rectangle, torsion in zip(result.wrenches, rectangles, distribution.torsion):
        check_constraints(wrench, rectangle, 0.7, 10.0, torsion)


def test_a_saturated_push_is_distributed_within_a_thousand_iterations_as_exactly_as_daqp_finds_it(kangaroo):
    """A push's desired wrenches beyond what the feet can give (swept through 300 ticks, warm-started as a balancer
    does) at the modes' WRENCH_TOLERANCE: each solved by OSQP within 1,000 ADMM iterations (at 1e-10 it ran to its
    10,000 on most of them, ~4 ms each), each as close to the desired wrench as DAQP's exact active-set optimum of the
    same QP, to 1e-4 of the weight in the weighted residual."""
    robot, _, _, placements, com, rectangles = kangaroo
    mass = robot.total_mass
    distribution = WrenchDistribution(rectangles, tolerance=WRENCH_TOLERANCE)
    G = [contact_wrench_map(M, com) for M in placements]
    weight = mass * 9.81 * np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    push = mass * 9.81 * np.array([-0.4, 1.0, 0.1, 0.09, -0.06, 0.015])  # [N, N·m] well beyond the soles' reach
    for phase in np.linspace(0.0, 2.0 * np.pi, 300):
        w_d = weight + np.sin(phase) * push
        result = distribution.solve(G, w_d, (0, 1), mass)
        assert result.status == QpStatus.SOLVED and result.iterations <= 1000, (phase, result.iterations)
        qp = distribution.build(G, w_d, (0, 1))
        exact, _, flag, _ = daqp.solve(qp.P, qp.q, qp.A, qp.u, qp.l, np.zeros(len(qp.l), dtype=np.intc))
        assert flag == 1
        weighted = [np.sqrt(distribution.weights) * (np.hstack(G) @ x - w_d) for x in (result.wrenches.ravel(), exact)]
        assert np.linalg.norm(weighted[0]) <= np.linalg.norm(weighted[1]) + 1e-4 * mass * 9.81


def test_a_saturated_cop_stays_the_margin_inside_the_sole(kangaroo):
    """One foot asked for a moment that would put its CoP 3 cm behind the heel (a backward push in a step): the CoP
    −τ_y / f_z of the distribution sits on the heel moved in by stance_cop_margin of the sole's length, and on the heel
    itself without the margin. Two feet asked the same keep their soles less cop_margin: both CoPs on their heels moved
    in by that share of the length, or on the heels themselves without it."""
    robot, _, _, placements, com, rectangles = kangaroo
    mass = robot.total_mass
    G = [contact_wrench_map(M, com) for M in placements]
    sole, rectangle = placements[1], rectangles[1]
    weight = mass * 9.81
    heel = sole.translation[0] + rectangle.x_min
    w_d = np.array([0.0, 0.0, weight, 0.0, weight * (com[0] - (heel - 0.03)), 0.0])  # about the CoM: τ_y = f_z Δx
    for margin in (0.0, 0.05):
        wrench = WrenchDistribution(rectangles, stance_cop_margin=margin).solve(G, w_d, (1,), mass).wrenches[1]
        assert -wrench[4] / wrench[2] == pytest.approx(rectangle.x_min + margin * (rectangle.x_max - rectangle.x_min),
                                                       abs=1e-6)
    for shared in (0.0, 0.03):
        both = WrenchDistribution(rectangles, stance_cop_margin=0.05, cop_margin=shared).solve(G, w_d, (0, 1),
                                                                                                mass).wrenches
        np.testing.assert_allclose(-both[:, 4] / both[:, 2],
                                   [r.x_min + shared * (r.x_max - r.x_min) for r in rectangles], atol=1e-6)


@pytest.mark.parametrize("edge", ["heel", "toe", "outer"])
def test_a_tipping_sole_keeps_its_cop_off_the_edge_it_rolls_over(kangaroo, edge):
    """A ZMP asked 3 cm beyond an edge of the right sole (its heel, its toe: both feet's; its outer side): flat, its
    CoP sits on that edge moved in by cop_margin. Tilted towards that edge by 1° (how its normal leans from the
    floor's, control.floor.Floor.edge_tilts), its CoP sits gain × (sin 1° − deadband) further in, by the
    rectangle's arithmetic, while the left sole, flat, stays on its bound; flat again, it returns there; tilted 10°, the
    bound moves in TIPPING_CUT of the length or width the margins leave, no more. Alone on the tilted sole (no
    stance_cop_margin here), the CoP is on the edge itself. The right sole's frame sits on its heel, so the
    heel bound's coefficient (x_min = 0) is a structural zero of the QP's matrix, and it moves all the same."""
    robot, _, _, placements, com, rectangles = kangaroo
    mass, weight = robot.total_mass, robot.total_mass * 9.81
    heel = rectangles[1].x_min
    placements = [placements[0], pin.SE3(placements[1].rotation, placements[1].act(np.array([heel, 0.0, 0.0])))]
    rectangles = [rectangles[0], rectangles[1]._replace(x_min=0.0, x_max=rectangles[1].x_max - heel)]
    G = [contact_wrench_map(M, com) for M in placements]
    margin, gain, deadband, tilt = 0.05, 3.0, 0.01, np.radians(1.0)
    distribution = WrenchDistribution(rectangles, cop_margin=margin, tolerance=WRENCH_TOLERANCE,
                                      tipping=(gain, deadband))
    axis, sign = {"heel": (0, -1.0), "toe": (0, 1.0), "outer": (1, -1.0)}[edge]

    def bounds(r):  # the edge's coordinate and the side's length [m]
        low, high = (r.x_min, r.x_max) if axis == 0 else (r.y_min, r.y_max)
        return (high if sign > 0 else low), high - low

    edge_at, length = bounds(rectangles[1])
    zmp = placements[1].act(np.array([edge_at + sign * 0.03, 0.0, 0.0] if axis == 0 else [0.0, edge_at - 0.03, 0.0]))
    w_d = np.array([0.0, 0.0, weight, weight * (zmp[1] - com[1]), -weight * (zmp[0] - com[0]), 0.0])

    def cops(tilts):
        wrenches = distribution.solve(G, w_d, (0, 1), mass, tilts).wrenches
        return (-wrenches[:, 4] if axis == 0 else wrenches[:, 3]) / wrenches[:, 2]

    bound = edge_at - sign * margin * length
    assert cops(None)[1] == pytest.approx(bound, abs=1e-4)
    leaning = np.zeros(2)
    leaning[axis] = -sign * np.sin(tilt)  # negative: the + edge is the lower one
    tipping = cops([(0.0, 0.0), tuple(leaning)])
    assert tipping[1] == pytest.approx(bound - sign * gain * (np.sin(tilt) - deadband), abs=1e-4)
    if axis == 0:  # the left foot shares the ZMP beyond its own heel or toe
        left_edge, left_length = bounds(rectangles[0])
        assert tipping[0] == pytest.approx(left_edge - sign * margin * left_length, abs=1e-4)
    assert cops([(0.0, 0.0), (0.0, 0.0)])[1] == pytest.approx(bound, abs=1e-4)
    assert cops([(0.0, 0.0), tuple(10.0 * leaning)])[1] == pytest.approx(
        bound - sign * TIPPING_CUT * (1.0 - 2.0 * margin) * length, abs=1e-4)
    alone = distribution.solve(G, w_d, (1,), mass, [None, tuple(leaning)]).wrenches[1]  # keeps its whole sole
    assert (-alone[4] if axis == 0 else alone[3]) / alone[2] == pytest.approx(edge_at, abs=1e-4)


def test_failed_solve_falls_back_and_says_so(kangaroo):
    """A request the solver cannot use (NaN, as from a corrupted estimate) holds the last feasible
    distribution; with none yet, the weight is shared equally as pure normal forces."""
    robot, _, q, placements, com, rectangles = kangaroo
    mass = robot.total_mass
    G = [contact_wrench_map(M, com) for M in placements]
    fresh = WrenchDistribution(rectangles)
    gravity_only = fresh.solve(G, np.full(6, np.nan), (0, 1), mass)
    assert gravity_only.status == "fallback: gravity only"
    np.testing.assert_allclose(gravity_only.wrenches[:, 2], mass * 9.81 / 2)

    distribution = WrenchDistribution(rectangles)
    good = distribution.solve(G, desired_com_wrench(mass, com, com, np.eye(3), np.eye(3), np.zeros(6), GAINS),
                              (0, 1), mass)
    assert good.status == "solved"
    held = distribution.solve(G, np.full(6, np.nan), (0, 1), mass)
    assert held.status == "fallback: last feasible"
    np.testing.assert_allclose(held.wrenches, good.wrenches)


def test_the_statuses_say_which_are_fallbacks(kangaroo):
    """What the balancer node warns about: a fallback, not a solved QP nor a robot with no foot on the ground."""
    robot, _, q, placements, com, rectangles = kangaroo
    G = [contact_wrench_map(M, com) for M in placements]
    airborne = WrenchDistribution(rectangles).solve(G, np.zeros(6), (), robot.total_mass)
    assert airborne.status is QpStatus.NO_CONTACT and not airborne.status.fallback
    assert not np.any(airborne.wrenches)
    gravity_only = WrenchDistribution(rectangles).solve(G, np.full(6, np.nan), (0, 1), robot.total_mass)
    assert gravity_only.status.fallback and QpStatus.LAST_FEASIBLE.fallback and not QpStatus.SOLVED.fallback


def test_joint_torques_equal_the_full_statics(kangaroo):
    """τ = −Σ J̄_iqᵀ w_i in projected coordinates equals the actuator forces of the full statics
    g = Sτ + J_cᵀF + J_lᵀλ for the same statically admissible wrenches (gravity rides in w, eq. 26)."""
    robot, chain, _, _, _, _ = kangaroo
    q, F, tau_statics, _ = static_stance(robot, chain, SOLES)
    centroidal = Centroidal(chain)
    M = centroidal.mass_matrix(q)
    data = robot.model.createData()
    pin.computeJointJacobians(robot.model, data, q)
    pin.updateFramePlacements(robot.model, data)
    G = chain.velocity_map(q)
    J = [pin.getFrameJacobian(robot.model, data, robot.frame_id(s), pin.LOCAL) @ G for s in SOLES]
    np.testing.assert_allclose(joint_torques(M, J, F), tau_statics, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["kangaroo_like", "mahru"])
def test_joint_torques_realise_the_joints_accelerations_and_leave_the_momentum_rate_to_the_wrenches(name):
    """With q̈_d and h, τ = Λ_q (q̈_d + Q M⁻¹ (h − Σ Jᵀ w)) in output coordinates, driven through the actuators into
    the spanning tree's constrained forward dynamics (KKT) with the soles' wrenches applied, gives the outputs q̈_d,
    and the centroidal momentum changes at Σ w (at the CoM) − m g e_z whatever the joints do: Garofalo et al.'s
    decoupling (eq. 15), on pinocchio's centroidal dynamics."""
    robot, chain = load(name, floating_base=True)
    rng = np.random.default_rng(3)
    q = closed_configuration(robot, chain, rng, fraction=0.3)
    v = consistent_velocity(robot, chain, q, rng)
    model, data = robot.model, robot.model.createData()
    T = chain.output_velocity_map(q)
    pin.computeJointJacobians(model, data, q)
    pin.framesForwardKinematics(model, data, q)
    J = [pin.getFrameJacobian(model, data, robot.frame_id(s), pin.LOCAL) for s in SOLES]
    wrenches = rng.normal(size=(len(J), 6)) * [20, 20, 300, 5, 5, 2]
    accelerations = rng.normal(size=len(robot.output_v)) * 5.0
    dynamics = output_dynamics(chain, q, v)
    tau_o = joint_torques(dynamics.M, [Ji @ T for Ji in J], wrenches, accelerations=accelerations, bias=dynamics.h)

    generalized = sum(Ji.T @ w for Ji, w in zip(J, wrenches))
    generalized[robot.actuated_v] += chain.actuator_efforts(q, tau_o)
    a = constrained_accelerations(robot, chain, q, v, generalized)
    np.testing.assert_allclose(a[robot.output_v], accelerations, atol=1e-6)
    momentum_rate = pin.computeCentroidalMomentumTimeVariation(model, data, q, v, a).np
    placements = [data.oMf[robot.frame_id(s)] for s in SOLES]
    com = pin.centerOfMass(model, data, q)
    expected = sum(contact_wrench_map(P, com) @ w for P, w in zip(placements, wrenches))
    expected[2] -= robot.total_mass * 9.81
    np.testing.assert_allclose(momentum_rate, expected, atol=1e-6 * np.abs(expected).max())
