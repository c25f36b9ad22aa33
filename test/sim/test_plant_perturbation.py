"""The perturbed plant against MuJoCo's own data and plain statistics: the masses and centres of mass it was asked to
move, the IMU's mounting tilt, the sensors' noise and biases, and commands that arrive late."""
import mujoco
import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.bench.closed_loop import robot_config
from humanoid_balance.sim import NOMINAL, PlantPerturbation, Simulation


@pytest.fixture(scope="module")
def config():
    return robot_config("kangaroo_like")


def test_each_body_keeps_its_mass_within_the_fraction_and_its_com_within_the_shift(config):
    nominal = Simulation.from_config(config)
    perturbed = Simulation.from_config(config, perturbation=PlantPerturbation(mass_error=0.2, com_error=0.02))
    heavy = nominal.model.body_mass > 0.0
    ratio = perturbed.model.body_mass[heavy] / nominal.model.body_mass[heavy]
    np.testing.assert_allclose(np.sort(np.unique(np.round(ratio, 12))), [0.8, 1.2])
    np.testing.assert_allclose(perturbed.model.body_inertia[heavy] / nominal.model.body_inertia[heavy],
                               np.repeat(ratio[:, None], 3, axis=1))
    shift = perturbed.model.body_ipos[heavy] - nominal.model.body_ipos[heavy]
    np.testing.assert_allclose(np.abs(shift), 0.02)
    assert perturbed.mass == pytest.approx(perturbed.model.body_mass.sum())  # the subtree masses follow
    assert perturbed.mass != pytest.approx(nominal.mass, rel=1e-3)
    again = Simulation.from_config(config, perturbation=PlantPerturbation(mass_error=0.2, com_error=0.02))
    np.testing.assert_array_equal(again.model.body_mass, perturbed.model.body_mass)  # seeded


def test_the_imu_reads_its_tilted_mounting_with_noise_and_bias(config):
    tilt = np.radians(1.0)
    sim = Simulation.from_config(config, perturbation=PlantPerturbation(imu_tilt=tilt, gyro_noise=0.01, gyro_bias=0.002,
                                                                        perturbation_seed=3))
    truth = Simulation.from_config(config)
    errors = []
    for _ in range(400):  # the same plant otherwise: the same motion
        sim.step()
        truth.step()
        (x, y, z, w), gyro, _ = sim.imu()
        (tx, ty, tz, tw), true_gyro, _ = truth.imu()
        mounting = pin.Quaternion(tw, tx, ty, tz).toRotationMatrix().T @ pin.Quaternion(w, x, y, z).toRotationMatrix()
        assert np.linalg.norm(pin.log3(mounting)) == pytest.approx(tilt, rel=1e-6)  # 1° off, about a horizontal axis
        assert abs(pin.log3(mounting)[2]) < 1e-9
        errors.append(gyro - mounting.T @ true_gyro)  # in the IMU's frame
    errors = np.array(errors)
    np.testing.assert_allclose(np.abs(errors.mean(axis=0)), 0.002, atol=0.0015)  # ± the bias
    np.testing.assert_allclose(errors.std(axis=0), 0.01, rtol=0.2)


def test_encoders_and_efforts_read_their_noise_and_offsets(config):
    sim = Simulation.from_config(config, perturbation=PlantPerturbation(position_noise=1e-3, position_bias=5e-3,
                                                                        effort_offset=0.01))
    names = tuple(sim.actuators)
    truth = np.array(sim.data.qpos[[sim.model.joint(n).qposadr[0] for n in names]])
    positions = np.array([sim.joint_states(names)[0] for _ in range(500)])
    np.testing.assert_allclose(np.abs(positions.mean(axis=0) - truth), 5e-3, atol=3e-4)
    np.testing.assert_allclose(positions.std(axis=0), 1e-3, rtol=0.2)
    limits = sim.model.actuator_forcerange[:, 1]
    offsets = sim.joint_states(names)[2] - sim.data.actuator_force
    np.testing.assert_allclose(np.abs(offsets), 0.01 * limits)


@pytest.mark.parametrize("delay", [0, 1, 2])
def test_commands_take_effect_the_delay_later(config, delay):
    sim = Simulation.from_config(config, perturbation=PlantPerturbation(command_delay=delay))
    base = sim.data.ctrl.copy()
    commands = [base + 0.001 * (k + 1) for k in range(4)]
    applied = []
    for command in commands:
        sim.set_command("position", command)
        applied.append(sim.data.ctrl.copy())
    for k, ctrl in enumerate(applied):
        np.testing.assert_array_equal(ctrl, commands[k - delay] if k >= delay else base)


def test_a_nominal_plant_reads_its_sensors_exactly(config):
    sim = Simulation.from_config(config, perturbation=NOMINAL)
    mujoco.mj_forward(sim.model, sim.data)
    names = tuple(sim.actuators)
    np.testing.assert_array_equal(sim.joint_states(names)[0], sim.data.qpos[[sim.model.joint(n).qposadr[0]
                                                                             for n in names]])


def test_an_inclined_floor_turns_gravity_and_the_imu_reads_its_attitude_against_gravity(config):
    """On a floor rolled 3° and pitched −2°, the robot held still: the accelerometer's specific force, turned into the
    world by the IMU's attitude, is +g along the vertical (an attitude filter's frame), the plant's gravity is the
    vertical in the floor's frame, and the soles hold where MuJoCo's soft contacts would creep downhill."""
    incline = (np.radians(3.0), np.radians(-2.0))
    sim = Simulation.from_config(config, perturbation=PlantPerturbation(floor_roll=incline[0], floor_pitch=incline[1]))
    floor = pin.rpy.rpyToMatrix(*incline, 0.0)
    np.testing.assert_allclose(floor @ sim.model.opt.gravity, [0.0, 0.0, -9.81], atol=1e-12)
    start = sim.data.xpos[sim.sole_bodies].copy()
    sim.step(2000)  # 1 s, the drives holding the standing posture
    (x, y, z, w), _, specific_force = sim.imu()
    attitude = pin.Quaternion(w, x, y, z).toRotationMatrix()
    np.testing.assert_allclose(attitude @ specific_force, [0.0, 0.0, 9.81], atol=0.05)
    np.testing.assert_allclose(attitude, floor @ sim.data.xmat[sim.model.jnt_bodyid[0]].reshape(3, 3), atol=1e-9)
    assert np.abs(sim.data.xpos[sim.sole_bodies, :2] - start[:, :2]).max() < 2e-4  # (it settles into the floor in z)
