"""Projected dynamics (Kangaroo appendix B) and quasi-static maps (eqs. 43–46) against the full
constrained (KKT) equations of the spanning tree solved directly."""
import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.model import (contact_forces_from_actuator_efforts, load_robot, projected_dynamics,
                                    quasi_static_actuator_efforts)
from humanoid_balance.model.projected_dynamics import gravity_from_joint_jacobians, output_dynamics
from support.model_fixtures import (closed_configuration, consistent_velocity, constrained_accelerations, load,
                                    talos_urdf)


def actuated_force(robot, tau):
    """S τ: the actuators' efforts as a generalized force of the tree (nv,)."""
    force = np.zeros(robot.nv)
    force[robot.actuated_v] = tau
    return force


@pytest.mark.parametrize("name, floating_base", [("crank_slider", False), ("kangaroo_like", True)])
def test_projected_dynamics_match_constrained_forward_dynamics(name, floating_base):
    """Solve M ν̇ + h = Sτ + J_lᵀλ, J_l ν̇ = −J̇_l ν as one KKT system; the projected model must give the
    same base and actuated accelerations."""
    robot, chain = load(name, floating_base)
    rng = np.random.default_rng(7)
    q = closed_configuration(robot, chain, rng)
    v = consistent_velocity(robot, chain, q, rng)
    tau = rng.normal(size=len(robot.actuated_v)) * 20.0
    accel_full = constrained_accelerations(robot, chain, q, v, actuated_force(robot, tau))

    dyn = projected_dynamics(chain, q, v)
    b = robot.base_nv
    generalized_force = np.concatenate([np.zeros(b), tau])
    accel_actuated = np.linalg.solve(dyn.M, generalized_force - dyn.h)
    expected = np.concatenate([accel_full[:b], accel_full[robot.actuated_v]])
    np.testing.assert_allclose(accel_actuated, expected, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("name", ["kangaroo_like", "mahru"])
def test_output_dynamics_match_constrained_forward_dynamics(name):
    """The dynamics in serial-equivalent output coordinates, driven by the output torques of eq. 23, give the base's
    and the outputs' accelerations of the KKT system on the spanning tree (Mahru I: serial, T = I)."""
    robot, chain = load(name, True)
    rng = np.random.default_rng(11)
    q = closed_configuration(robot, chain, rng)
    v = consistent_velocity(robot, chain, q, rng)
    tau = rng.normal(size=len(robot.actuated_v)) * 20.0
    accel_full = constrained_accelerations(robot, chain, q, v, actuated_force(robot, tau))

    dyn = output_dynamics(chain, q, v)
    b = robot.base_nv
    accel_outputs = np.linalg.solve(dyn.M, np.concatenate([np.zeros(b), chain.output_torques(q, tau)]) - dyn.h)
    np.testing.assert_allclose(accel_outputs, np.concatenate([accel_full[:b], accel_full[robot.output_v]]),
                               rtol=1e-7, atol=1e-7)


def test_quasi_static_actuator_efforts_match_full_statics():
    """Eq. 44 vs solving g = Sτ + J_cᵀF + J_lᵀλ for (τ, λ) on the fixed-base spanning tree."""
    robot, chain = load("kangaroo_like")
    rng = np.random.default_rng(8)
    q = closed_configuration(robot, chain, rng)
    data = robot.model.createData()
    pin.computeJointJacobians(robot.model, data, q)
    pin.updateFramePlacements(robot.model, data)
    J_c = np.vstack([pin.getFrameJacobian(robot.model, data, robot.frame_id(f), pin.LOCAL)
                     for f in ("left_sole", "right_sole")])
    F = rng.normal(size=12) * np.tile([30, 30, 200, 5, 5, 2], 2)
    g = pin.computeGeneralizedGravity(robot.model, data, q)
    S = np.zeros((robot.nv, len(robot.actuated_v)))
    S[robot.actuated_v, np.arange(len(robot.actuated_v))] = 1.0
    J_l = chain.constraint_jacobian(q)
    unknowns = np.linalg.solve(np.hstack([S, J_l.T]), g - J_c.T @ F)
    tau_reference = unknowns[:len(robot.actuated_v)]
    np.testing.assert_allclose(quasi_static_actuator_efforts(chain, q, J_c, F), tau_reference, rtol=1e-8, atol=1e-6)
    # Eq. 46 inverts eq. 44: each sole wrench is determined by its leg's six actuators.
    np.testing.assert_allclose(contact_forces_from_actuator_efforts(chain, q, J_c, tau_reference), F,
                               rtol=1e-7, atol=1e-6)


@pytest.mark.parametrize("name", ["talos", "kangaroo_like"])
def test_gravity_from_the_joint_jacobians_is_the_rnea_gravity(name):
    """g(q) = −m J_comᵀ g₀ read from a computeJointJacobians pass equals pinocchio's RNEA gravity, base rows
    included, at random configurations of a third-party robot (TALOS) and of kangaroo_like's tree."""
    robot = load_robot(talos_urdf(), floating_base=True) if name == "talos" else load(name, True)[0]
    model, data = robot.model, robot.model.createData()
    lower, upper = np.maximum(model.lowerPositionLimit, -1.0), np.minimum(model.upperPositionLimit, 1.0)
    for _ in range(3):
        q = pin.randomConfiguration(model, lower, upper)
        pin.computeJointJacobians(model, data, q)
        reference = pin.computeGeneralizedGravity(model, model.createData(), q)
        np.testing.assert_allclose(gravity_from_joint_jacobians(model, data), reference, rtol=1e-10,
                                   atol=1e-9 * np.abs(reference).max())
