"""Joint impedance through the loops (mapping/joint_impedance.py) against the potential of the outputs' springs:
V(θ_a) = ½ (q(θ_a) − q_d)ᵀ K_q (q(θ_a) − q_d), with q(θ_a) the forward closure of the mechanism (Newton on the loop
equations with the strokes fixed). Its second differences are the actuators' stiffness Jᵀ K_q J (the restoring
force's derivative, τ_a = −∂V/∂θ_a); a serial robot gets its gains back unchanged."""
import numpy as np
import pytest

from humanoid_balance.mapping import ActuatorMap
from support.model_fixtures import closed_configuration, load

STEP = 1e-4  # finite-difference step on the strokes [m, rad]


def outputs_of(robot, chain, q, strokes):
    """Forward closure: the outputs of the mechanism with these strokes (the other joints from ``q``)."""
    moved = q.copy()
    moved[robot.actuated_q] = strokes
    return chain.solve_passive(moved).q[robot.output_q]


def test_actuator_stiffness_is_the_second_derivative_of_the_output_springs_potential(kangaroo):
    robot, chain = kangaroo
    q = closed_configuration(robot, chain, np.random.default_rng(7), fraction=0.5)  # away from the symmetric reference
    rng = np.random.default_rng(8)
    output_stiffness = rng.uniform(20.0, 400.0, len(robot.output_names))  # a different spring on every output
    output_damping = rng.uniform(1.0, 10.0, len(robot.output_names))
    mapping = ActuatorMap(robot, impedance=(output_stiffness, output_damping))
    mapping.q = q.copy()
    command = mapping.update(q[robot.output_q], np.zeros(len(robot.output_names)), np.zeros(len(robot.output_names)))

    theta, q_d = q[robot.actuated_q], q[robot.output_q]

    def potential(strokes):
        error = outputs_of(robot, chain, q, strokes) - q_d
        return 0.5 * error @ (output_stiffness * error)

    n = len(theta)
    steps = np.eye(n) * STEP
    hessian = np.empty((n, n))
    for i in range(n):
        for j in range(i, n):
            hessian[i, j] = hessian[j, i] = (potential(theta + steps[i] + steps[j]) - potential(theta + steps[i] - steps[j])
                                             - potential(theta - steps[i] + steps[j])
                                             + potential(theta - steps[i] - steps[j])) / (4 * STEP ** 2)
    np.testing.assert_allclose(command.stiffness, np.diag(hessian), rtol=1e-5)
    diagonal = np.sqrt(np.diag(hessian))
    dropped = np.abs(hessian / np.outer(diagonal, diagonal) - np.eye(n)).max()
    assert mapping.coupling() == pytest.approx(dropped, rel=1e-4)
    assert dropped > 0.1  # the parallel hips and ankles do couple their two ball screws

    # damping: the same congruence with the velocity map, checked on the forward closure's Jacobian
    jacobian = np.column_stack([(outputs_of(robot, chain, q, theta + steps[i])
                                 - outputs_of(robot, chain, q, theta - steps[i])) / (2 * STEP) for i in range(n)])
    np.testing.assert_allclose(command.damping, output_damping @ jacobian ** 2, rtol=1e-5)


def test_a_serial_robot_gets_its_gains_back_unchanged():
    robot, _ = load("mahru")
    mapping = ActuatorMap(robot, impedance=((2e4, 50.0), (200.0, 3.0)))
    zeros = np.zeros(len(robot.output_names))
    command = mapping.update(robot.reference_q[robot.output_q], zeros, zeros)
    np.testing.assert_array_equal(command.stiffness, np.full(len(robot.actuated_names), 50.0))
    np.testing.assert_array_equal(command.damping, np.full(len(robot.actuated_names), 3.0))
    assert mapping.coupling() == 0.0


def test_gains_are_bounded_per_actuator_kind_and_bad_ones_refused(kangaroo):
    robot, _ = kangaroo
    mapping = ActuatorMap(robot, impedance=((2e4, 50.0), (200.0, 3.0)), max_gains=((15000.0, 40.0), (1e3, 2.0)))
    zeros = np.zeros(len(robot.output_names))
    command = mapping.update(robot.reference_q[robot.output_q], zeros, zeros)
    prismatic = robot.prismatic(robot.actuated_names)
    assert command.stiffness[prismatic].max() <= 15000.0 and command.stiffness[~prismatic].max() <= 40.0
    assert command.damping[~prismatic].max() <= 2.0
    assert any(name.endswith("stiffness") for name in command.clamped)
    for bad in ((2e4, -1.0), (2e4, np.nan)):  # its outputs are all revolute
        with pytest.raises(ValueError, match="impedance_stiffness"):
            mapping.set_impedance(bad, (200.0, 3.0))
