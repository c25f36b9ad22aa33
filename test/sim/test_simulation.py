"""The embedded MuJoCo plant against pinocchio on the same URDF + loops, and against Newton's laws."""
import mujoco
import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.model import ClosedChain, load_robot
from humanoid_balance.sim.simulation import Simulation
from support.model_fixtures import ROBOT_CONFIGS, ROBOT_FILES


@pytest.fixture(scope="module")
def standing():
    sim = Simulation.from_config(ROBOT_CONFIGS["kangaroo_like"])
    sim.step(round(1.0 / sim.model.opt.timestep))
    settled = sim.ground_truth()
    sim.step(round(1.0 / sim.model.opt.timestep))
    return sim, settled


def test_loops_stay_closed_in_the_sense_of_the_pinocchio_model(standing):
    """MuJoCo's joint state after standing for 1 s satisfies the loop equations of the pinocchio model."""
    sim, _ = standing
    robot = load_robot(*ROBOT_FILES["kangaroo_like"])
    q, _, _ = sim.joint_states(robot.joint_names)
    assert np.linalg.norm(ClosedChain(robot).residual(q)) < 1e-4


def test_standing_still_on_the_position_drives(standing):
    """Once the drives have taken the weight (a few mm of ball-screw compliance), the robot stays put."""
    sim, settled = standing
    truth = sim.ground_truth()
    robot = load_robot(*ROBOT_FILES["kangaroo_like"])
    assert abs(truth.base_position[2] - settled.base_position[2]) < 1e-3
    assert truth.sole_forces[:, 2].sum() == pytest.approx(robot.total_mass * 9.81, rel=1e-2)
    quaternion, gyro, accelerometer = sim.imu()
    np.testing.assert_allclose(quaternion, truth.base_quaternion, atol=1e-5)  # sensors lag qpos by one step
    base_to_world = pin.Quaternion(truth.base_quaternion[3], *truth.base_quaternion[:3]).toRotationMatrix()
    np.testing.assert_allclose(accelerometer, base_to_world.T @ [0, 0, 9.81], atol=0.05)  # at rest: −g, IMU frame
    assert np.abs(gyro).max() < 0.05


def test_ground_truth_com_matches_pinocchio(standing):
    sim, _ = standing
    robot = load_robot(*ROBOT_FILES["kangaroo_like"], floating_base=True)
    truth = sim.ground_truth()
    q_joints, _, _ = sim.joint_states(robot.joint_names)
    q = np.r_[truth.base_position, truth.base_quaternion, q_joints]
    np.testing.assert_allclose(truth.com, pin.centerOfMass(robot.model, robot.model.createData(), q), atol=1e-9)


def test_push_changes_the_momentum_by_the_impulse():
    """In free fall (no contact, no gravity) a 0.1 s push of 50 N on the pelvis changes the total linear
    momentum by exactly 5 N·s."""
    sim = Simulation.from_config(ROBOT_CONFIGS["kangaroo_like"])
    sim.model.opt.gravity[:] = 0.0
    sim.reset(height=3.0)
    robot = load_robot(*ROBOT_FILES["kangaroo_like"])
    sim.push("base_link", [0.0, 50.0, 0.0], duration=0.1)
    sim.step(300)
    com_velocity = sim.ground_truth().com_velocity
    assert robot.total_mass * com_velocity[1] == pytest.approx(5.0, rel=1e-3)
    assert abs(com_velocity[0]) < 1e-4 and abs(com_velocity[2]) < 1e-4  # soft loop constraints: ~1e-5 drift


def test_the_accelerometer_integrates_to_the_base_velocity_while_stiff_drives_jerk_the_arms():
    """An IMU's mean specific force over a sample period integrates to the change of velocity (Newton: ∫(a − g) dt):
    the arms stepped to new position targets every 10 ms (a 100 Hz controller's staircase, 1 rad/s) jerk the base
    through stiff drives; integrating the readings as a kinematic-inertial estimator does, v += (R f + g) T, follows
    the ground truth's base velocity. MuJoCo's accelerometer sensor (the explicit dynamics' acceleration, not what
    the implicit integrator realises) drifted by 0.3 m/s in 0.1 s here."""
    sim = Simulation.from_config(ROBOT_CONFIGS["kangaroo_like"])
    period = 0.01
    steps = round(period / sim.model.opt.timestep)
    sim.step(round(1.0 / sim.model.opt.timestep))
    arms = [i for i, name in enumerate(sim.actuators) if "shoulder_pitch" in name or "elbow" in name]
    targets = sim.data.qpos[sim.actuator_qpos].copy()
    sim.imu()  # the mean starts here
    velocity = sim.ground_truth().base_linear_velocity.copy()
    worst = 0.0
    for tick in range(100):
        targets[arms] -= 1.0 * period  # the elbows bend, the arms rise (1 rad/s)
        sim.set_command("position", targets)
        sim.step(steps)
        quaternion, _, specific_force = sim.imu()
        x, y, z, w = quaternion
        velocity += (pin.Quaternion(w, x, y, z).toRotationMatrix() @ specific_force + sim.model.opt.gravity) * period
        worst = max(worst, float(np.abs(velocity - sim.ground_truth().base_linear_velocity).max()))
    assert worst < 0.02, f"the integrated accelerometer went {worst:.3f} m/s from the base's velocity"


def test_foot_force_torque_sensor_on_a_serial_robot():
    """Mahru standing: each foot sensor (ankle side of the foot) reads the ground force minus the foot's weight."""
    sim = Simulation.from_config(ROBOT_CONFIGS["mahru"], force_torque_sensors=True)
    sim.step(1000)
    truth = sim.ground_truth()
    foot_mass = sim.model.body_mass[sim.model.body(sim.soles[0]).parentid[0]]
    for index, sole in enumerate(sim.soles):
        frame, wrench = sim.foot_wrench(sole)
        assert frame == f"{sole.split('_')[0]}_foot"
        assert wrench[2] == pytest.approx(truth.sole_forces[index, 2] - foot_mass * 9.81, rel=1e-2)


def test_bad_commands_are_refused():
    sim = Simulation.from_config(ROBOT_CONFIGS["kangaroo_like"])
    with pytest.raises(ValueError, match="interface must be one of"):
        sim.set_command("torque", np.zeros(12))
    with pytest.raises(ValueError, match=f"3 values for {len(sim.actuators)} actuators"):
        sim.set_command("position", np.zeros(3))


def test_a_pure_torque_push_changes_the_angular_momentum_by_its_impulse():
    """No gravity, no contact: 5 N·m about z for 0.1 s turns 0.5 N·m·s into angular momentum about the CoM,
    and leaves the linear momentum at zero."""
    sim = Simulation.from_config(ROBOT_CONFIGS["kangaroo_like"])
    sim.model.opt.gravity[:] = 0.0
    sim.reset(height=3.0)
    sim.push("base_link", [0.0, 0.0, 0.0], torque=[0.0, 0.0, 5.0], duration=0.1)
    sim.step(300)
    truth = sim.ground_truth()
    np.testing.assert_allclose(truth.angular_momentum, [0.0, 0.0, 0.5], atol=5e-4)
    np.testing.assert_allclose(truth.linear_momentum, 0.0, atol=5e-4)


def test_ground_truth_zmp_is_under_the_com_when_standing_still(standing):
    """Static equilibrium: the floor's centre of pressure is the CoM's ground projection."""
    sim, _ = standing
    truth = sim.ground_truth()
    np.testing.assert_allclose(truth.zmp[:2], truth.com[:2], atol=2e-3)
    assert abs(truth.zmp[2]) < 1e-3


def test_joint_impedance_force_follows_its_law():
    """force = K (q_d − q) + D (q̇_d − q̇) + τ_ff per actuator, clipped to the URDF effort limit, on Mahru I
    started with bent knees (the reference override)."""
    sim = Simulation.from_config(ROBOT_CONFIGS["mahru"], reference={"left_knee": 0.8, "right_knee": 0.8})
    position, velocity, _ = sim.joint_states(sim.actuators)
    assert position[sim.actuators.index("left_knee")] == pytest.approx(0.8)
    rng = np.random.default_rng(3)
    target, rate, feedforward = (position + rng.uniform(-0.05, 0.05, position.size),
                                 rng.uniform(-0.5, 0.5, position.size), rng.uniform(-20.0, 20.0, position.size))
    stiffness, damping = rng.uniform(20.0, 80.0, position.size), rng.uniform(1.0, 5.0, position.size)  # per actuator
    sim.set_command("impedance", np.concatenate([target, rate, feedforward, stiffness, damping]))
    sim.step(5)
    mujoco.mj_forward(sim.model, sim.data)  # actuator forces of the current state, not the last step's start
    position, velocity, effort = sim.joint_states(sim.actuators)
    expected = stiffness * (target - position) + damping * (rate - velocity) + feedforward
    limit = sim.model.actuator_forcerange[:, 1]
    np.testing.assert_allclose(effort, np.clip(expected, -limit, limit), rtol=1e-6, atol=1e-6)
