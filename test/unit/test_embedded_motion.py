"""CoM Jacobian with embedded motions (Choi–Kim eqs. 14–20, Kim–Choi–Kim eq. 15), checked on whole-body
velocities with pinocchio's own CoM and frame Jacobians."""
import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.control.embedded_motion import BASE, C_BUSY, IDLE, J_BUSY, EmbeddedMotionResolver, Section
from humanoid_balance.model import load_robot
from support.model_fixtures import talos_urdf



def talos_sections():
    leg = [f"leg_{{}}_{k}_joint" for k in range(1, 7)]
    arm = [f"arm_{{}}_{k}_joint" for k in range(1, 8)]
    return [Section("left_leg", tuple(j.format("left") for j in leg), "left_sole_link", BASE),
            Section("right_leg", tuple(j.format("right") for j in leg), "right_sole_link", C_BUSY),
            Section("left_arm", tuple(j.format("left") for j in arm), "gripper_left_base_link", J_BUSY),
            Section("right_arm", tuple(j.format("right") for j in arm), "gripper_right_base_link", J_BUSY),
            Section("torso", ("torso_1_joint", "torso_2_joint"), "torso_2_link", IDLE)]


@pytest.fixture(scope="module")
def talos():
    robot = load_robot(talos_urdf(), floating_base=True)
    q = pin.neutral(robot.model)
    for side in ("left", "right"):  # a slightly crouched stance: the support leg is not singular
        q[robot.joint_q_index(f"leg_{side}_3_joint")] = -0.3
        q[robot.joint_q_index(f"leg_{side}_4_joint")] = 0.6
        q[robot.joint_q_index(f"leg_{side}_5_joint")] = -0.3
    return robot, q


def check_resolution(robot, q, resolver, u, omega, rates, twists=None):
    nu = resolver.resolve(q, u, omega, twists=twists, joint_rates=rates).velocity
    data = robot.model.createData()
    pin.computeJointJacobians(robot.model, data, q)
    pin.updateFramePlacements(robot.model, data)
    np.testing.assert_allclose(pin.jacobianCenterOfMass(robot.model, data, q) @ nu, u, atol=1e-9)
    base_section = resolver.base_section
    J_support = pin.getFrameJacobian(robot.model, data, robot.frame_id(base_section.end_frame), pin.LOCAL_WORLD_ALIGNED)
    np.testing.assert_allclose(J_support @ nu, 0.0, atol=1e-9)
    np.testing.assert_allclose(data.oMi[1].rotation @ nu[3:6], omega, atol=1e-9)
    for name, section in resolver.sections.items():
        columns = [robot.joint_v_index(j) for j in section.joints]
        if section.role == J_BUSY:
            np.testing.assert_allclose(nu[columns], rates[name], atol=1e-12)
        elif section.role == IDLE:
            np.testing.assert_allclose(nu[columns], 0.0, atol=1e-12)
        elif section.role == C_BUSY:
            J = pin.getFrameJacobian(robot.model, data, robot.frame_id(section.end_frame), pin.LOCAL_WORLD_ALIGNED)
            np.testing.assert_allclose(J @ nu, (twists or {}).get(name, np.zeros(6)), atol=1e-9)
    return nu


def test_arms_follow_joint_trajectories_while_the_com_follows_its_command(talos):
    robot, q = talos
    resolver = EmbeddedMotionResolver(robot, talos_sections())
    rng = np.random.default_rng(41)
    for _ in range(5):
        rates = {"left_arm": rng.normal(size=7), "right_arm": rng.normal(size=7)}  # 1-rad/s-scale "dancing"
        check_resolution(robot, q, resolver, rng.normal(size=3) * 0.05, rng.normal(size=3) * 0.05, rates)


def test_cartesian_task_on_the_other_foot_and_support_swap(talos):
    robot, q = talos
    resolver = EmbeddedMotionResolver(robot, talos_sections())
    rates = {"left_arm": np.zeros(7), "right_arm": np.zeros(7)}
    swing = np.array([0.02, 0.0, 0.05, 0.0, 0.1, 0.0])  # lift the right foot
    check_resolution(robot, q, resolver, np.array([0.0, 0.02, 0.0]), np.zeros(3), rates, {"right_leg": swing})
    with pytest.raises(ValueError, match="exactly one section must stay the base"):
        resolver.set_roles({"left_leg": C_BUSY})
    resolver.set_roles({"left_leg": C_BUSY, "right_leg": BASE})
    check_resolution(robot, q, resolver, np.array([0.0, -0.02, 0.0]), np.zeros(3), rates)


def test_closed_chain_robot_through_the_output_projection():
    """kangaroo_like: legs made of serial-equivalent outputs; the resolved full velocity keeps every loop
    closed (J_l ν = 0), fixes the support sole and gives the commanded CoM velocity of the whole tree,
    linkages included."""
    from support.model_fixtures import load

    robot, chain = load("kangaroo_like", floating_base=True)
    joints = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")
    sections = [Section("left_leg", tuple(f"left_{j}" for j in joints), "left_sole", BASE),
                Section("right_leg", tuple(f"right_{j}" for j in joints), "right_sole", C_BUSY)]
    q = robot.reference_q.copy()
    for k, target in enumerate(np.linspace(0, -0.06, 6)[1:]):  # crouch: retract both knee actuators
        q[[robot.joint_q_index("left_knee_actuator"), robot.joint_q_index("right_knee_actuator")]] = target
        q = chain.solve_passive(q).q
    resolver = EmbeddedMotionResolver(robot, sections)
    u, omega = np.array([0.01, -0.02, 0.005]), np.array([0.0, 0.02, 0.0])
    nu = check_resolution(robot, q, resolver, u, omega, {})
    np.testing.assert_allclose(chain.constraint_jacobian(q) @ nu, 0.0, atol=1e-9)


MAHRU_ARM = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_yaw", "wrist_roll")


def mahru_sections():
    leg = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")
    arm = MAHRU_ARM
    return [Section("left_leg", tuple(f"left_{j}" for j in leg), "left_sole", BASE),
            Section("right_leg", tuple(f"right_{j}" for j in leg), "right_sole", C_BUSY),
            Section("left_arm", tuple(f"left_{j}" for j in arm), "left_hand", J_BUSY),
            Section("right_arm", tuple(f"right_{j}" for j in arm), "right_hand", J_BUSY),
            Section("waist", ("waist_yaw",), "torso", IDLE),
            Section("head", ("neck_yaw", "neck_pitch"), "head", IDLE)]


def test_mahru_dancing_arms_keep_the_commanded_com_velocity():
    """Choi–Kim section 5 on Mahru I (Table 1): both arms follow large 1 Hz joint trajectories (J-busy),
    the right foot stays on the ground (C-busy), the left leg balances: the resolved CoM velocity equals the
    command to 1e-9 and both soles stay fixed, at every sample of the dance."""
    from support.model_fixtures import REPO

    robot = load_robot(REPO / "urdf" / "mahru.urdf", floating_base=True)
    resolver = EmbeddedMotionResolver(robot, mahru_sections())
    q = pin.neutral(robot.model)
    for side in ("left", "right"):
        q[robot.joint_q_index(f"{side}_hip_pitch")] = -0.4
        q[robot.joint_q_index(f"{side}_knee")] = 0.8
        q[robot.joint_q_index(f"{side}_ankle_pitch")] = -0.4
    arm_columns = {side: [robot.joint_q_index(f"{side}_{j}") for j in MAHRU_ARM] for side in ("left", "right")}
    amplitude = np.array([0.8, 0.5, 0.4, 0.7, 0.3, 0.3])
    for t in np.linspace(0.0, 1.0, 11):
        rates = {}
        for side, sign in (("left", 1.0), ("right", -1.0)):
            phase = 2 * np.pi * t + (0 if side == "left" else np.pi)
            shape = sign * 0.5 * amplitude * np.array([1, 1, 1, -1, 1, 1])  # half amplitudes, elbow bent [rad]
            q[arm_columns[side]] = shape * np.sin(phase) - np.array([0, 0, 0, 0.5, 0, 0])
            rates[f"{side}_arm"] = shape * 2 * np.pi * np.cos(phase)
        check_resolution(robot, q, resolver, np.array([0.01, -0.005, 0.0]), np.zeros(3), rates)


def test_damped_pseudo_inverse_is_exact_away_from_singularities_and_bounded_near_them():
    from humanoid_balance.control.embedded_motion import damped_pseudo_inverse

    rng = np.random.default_rng(7)
    J = rng.normal(size=(6, 6))
    np.testing.assert_allclose(damped_pseudo_inverse(J), np.linalg.inv(J), atol=1e-10)
    U, _, Vt = np.linalg.svd(J)
    singular = U @ np.diag([3.0, 2.0, 1.0, 0.5, 0.2, 1e-9]) @ Vt
    assert np.linalg.norm(damped_pseudo_inverse(singular), 2) <= 1 / (2 * 0.05) + 1e-9  # σ/(σ²+λ²) ≤ 1/(2λ)
    assert np.linalg.norm(np.linalg.pinv(singular), 2) > 1e8
