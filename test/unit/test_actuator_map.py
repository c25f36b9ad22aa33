"""Joint → actuator mapping (Kangaroo eqs. 2, 22–23, 47) against the forward closure, finite differences,
virtual power and the limits."""
import numpy as np
import pytest

from humanoid_balance.mapping import ActuatorMap
from humanoid_balance.model import SingularConfigurationError
from support.model_fixtures import closed_configuration


def test_round_trip_outputs_to_actuators_to_outputs_across_the_workspace(kangaroo):
    """Forward: random strokes → closed mechanism → outputs q. Inverse: the map recovers the strokes."""
    robot, chain = kangaroo
    mapping = ActuatorMap(robot, max_condition=np.inf)
    rng = np.random.default_rng(51)
    for _ in range(15):
        truth = closed_configuration(robot, chain, rng, fraction=0.9)
        mapping.q = robot.reference_q.copy()
        for s in np.linspace(0.0, 1.0, 6)[1:]:  # commands arrive as a continuous motion, as from a controller
            outputs = robot.reference_q[robot.output_q] + s * (truth[robot.output_q] - robot.reference_q[robot.output_q])
            positions, _ = mapping.positions(outputs)
        np.testing.assert_allclose(positions, truth[robot.actuated_q], atol=1e-10)
        forward = truth.copy()  # and back: those strokes, loops closed, give the same outputs
        forward[robot.actuated_q] = positions
        np.testing.assert_allclose(chain.solve_passive(forward).q[robot.output_q], truth[robot.output_q], atol=1e-10)


def test_velocity_map_matches_finite_differences(kangaroo):
    robot, chain = kangaroo
    rng = np.random.default_rng(52)
    q = closed_configuration(robot, chain, rng, fraction=0.6)
    mapping = ActuatorMap(robot)
    mapping.q = q.copy()
    outputs, rates = q[robot.output_q], rng.normal(size=len(robot.output_names)) * 0.5
    command = mapping.update(outputs, rates, np.zeros(len(rates)))
    eps = 1e-6
    plus, _ = mapping.positions(outputs + eps * rates)
    minus, _ = mapping.positions(outputs - eps * rates)
    np.testing.assert_allclose(command.velocity, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-9)


def test_power_is_conserved(kangaroo):
    robot, chain = kangaroo
    rng = np.random.default_rng(53)
    mapping = ActuatorMap(robot)
    mapping.q = closed_configuration(robot, chain, rng, fraction=0.6)
    rates, torques = rng.normal(size=len(robot.output_names)) * 0.2, rng.normal(size=len(robot.output_names)) * 20.0
    command = mapping.update(mapping.q[robot.output_q], rates, torques)
    assert not command.clamped
    assert command.effort @ command.velocity == pytest.approx(torques @ rates, rel=1e-9)


def test_every_limit_clamps_and_is_named(kangaroo):
    robot, _ = kangaroo
    mapping = ActuatorMap(robot)
    outputs = robot.reference_q[robot.output_q]
    command = mapping.update(outputs, np.full(len(robot.output_names), 50.0), np.full(len(robot.output_names), 1e5))
    lower, upper = robot.position_limits(robot.actuated_names)
    np.testing.assert_allclose(np.abs(command.velocity), robot.velocity_limits(robot.actuated_names))
    assert np.all(np.abs(command.effort) <= robot.effort_limits(robot.actuated_names) + 1e-9)
    assert {f"{name} velocity" for name in robot.actuated_names} <= set(command.clamped)
    assert {f"{name} effort" for name in robot.actuated_names} <= set(command.clamped)
    hip = robot.output_names.index("left_hip_yaw")
    beyond = outputs.copy()
    for value in np.linspace(0.0, 0.9, 10):  # hip yaw far past what the stroke allows
        beyond[hip] = value
        command = mapping.update(beyond, np.zeros(len(robot.output_names)), np.zeros(len(robot.output_names)))
    assert "left_hip_yaw_actuator position" in command.clamped
    assert lower[0] <= command.position[0] <= upper[0]


def test_motor_torque_output_for_ballscrews(kangaroo):
    robot, _ = kangaroo
    forces = ActuatorMap(robot).update(robot.reference_q[robot.output_q], np.zeros(len(robot.output_names)), np.full(len(robot.output_names), 10.0)).effort
    torques = ActuatorMap(robot, efforts_as_motor_torques=True).update(
        robot.reference_q[robot.output_q], np.zeros(len(robot.output_names)), np.full(len(robot.output_names), 10.0)).effort
    spec = robot.spec.actuators["left_knee_actuator"]
    k = robot.actuated_names.index("left_knee_actuator")
    assert torques[k] == pytest.approx(forces[k] * spec.lead / (2 * np.pi * spec.efficiency))  # eq. 47 inverted


def test_a_configuration_driven_towards_a_singularity_is_refused(kangaroo):
    """Bending the knee with the ankle pitch held at zero drives the ankle linkage towards a toggle near
    1.8 rad: cond(P·J_m) grows from ~10 and the map refuses before the singularity."""
    robot, _ = kangaroo
    mapping = ActuatorMap(robot, max_condition=200.0)
    outputs = robot.reference_q[robot.output_q].copy()
    knee = robot.output_names.index("left_knee")
    outputs[robot.output_names.index("left_ankle_pitch")] = 0.0
    conditions = []
    with pytest.raises(SingularConfigurationError) as refused:
        for value in np.linspace(0.0, 1.8, 181):
            outputs[knee] = value
            conditions.append(mapping.update(outputs, np.zeros(len(robot.output_names)), np.zeros(len(robot.output_names))).condition_number)
    assert refused.value.condition_number > 200.0
    assert max(conditions) <= 200.0 and outputs[knee] < 1.8


def test_directly_driven_joints_pass_through_unchanged():
    """A serial robot (Mahru I, no loop file): every joint is its own actuator and output."""
    from humanoid_balance.model import load_robot
    from support.model_fixtures import REPO

    robot = load_robot(REPO / "urdf" / "mahru.urdf")
    mapping = ActuatorMap(robot)
    rng = np.random.default_rng(54)
    lower, upper = robot.position_limits(robot.output_names)
    outputs, rates, torques = rng.uniform(lower, upper), rng.normal(size=27) * 0.1, rng.normal(size=27) * 5.0
    command = mapping.update(outputs, rates, torques)
    np.testing.assert_allclose(command.position, outputs, atol=1e-15)
    np.testing.assert_allclose(command.velocity, rates, atol=1e-12)
    np.testing.assert_allclose(command.effort, torques, atol=1e-12)
