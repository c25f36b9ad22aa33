"""Cassie (example-robot-data), never configured here, from its SDF: import-sdf, then init with its foot links
only, then standing. Its legs have five joints and its feet are cylinders: line contacts that roll freely about
their line. References: pinocchio's floating-base model (its CoM counts the pelvis), the collision cylinders
placed by pinocchio, pinocchio's frame Jacobians and MuJoCo's contact forces. Units: m, rad, N, s."""

import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.cli import main
from humanoid_balance.control.balancer import balance_controller, BalancerConfig, Foot
from humanoid_balance.estimation.contact_state import ACTUATOR_FORCES, ContactEstimator
from humanoid_balance.model import load_robot
from humanoid_balance.model.robot_config import load_robot_config
from humanoid_balance.resources import example_robot
from humanoid_balance.sim.simulation import Simulation
from support.model_fixtures import assert_short_demo_stands

CASSIE = example_robot("cassie_description/robots/cassie_v2.sdf")
pytestmark = pytest.mark.skipif(CASSIE is None, reason="example-robot-data has no Cassie "
                                "(cassie_description/robots/cassie_v2.sdf)")
SIDES = ("left", "right")
# Cassie as built: the foot motor turns the crank at the top of the tarsus; the foot is its serial-equivalent output.
ACTUATED = [f"{side}-{joint}" for side in SIDES for joint in ("roll-op", "yaw-op", "pitch-op", "knee-op",
                                                                "tarsus-crank-joint")]
OUTPUTS = [name.replace("tarsus-crank-joint", "foot-op") for name in ACTUATED]
FOOT_RADIUS = 0.0168  # the SDF's foot cylinders


@pytest.fixture(scope="module")
def cassie(tmp_path_factory):
    """import-sdf (the Achilles rods kept in their plane), then init with the foot links alone; returns the robot
    folder and its configuration."""
    imported, folder = tmp_path_factory.mktemp("cassie_sdf"), tmp_path_factory.mktemp("cassie_robot")
    assert main(["import-sdf", str(CASSIE), "--output", str(imported), "--actuated", *ACTUATED, "--outputs", *OUTPUTS,
                 "--loop-axes", "left-pitch-rod-joint=x,y", "right-pitch-rod-joint=x,y"]) == 0
    assert main(["init", str(imported / "cassie.urdf"), "--loops", str(imported / "cassie.loops.yaml"),
                 "--feet", "left-foot", "right-foot", "--output", str(folder)]) == 0
    return folder, load_robot_config(folder)


def stance_q(robot, config):
    """The configuration init wrote, the floating base (if any) at the origin."""
    q = pin.neutral(robot.model)
    for joint, value in config.stance.items():
        q[robot.joint_q_index(joint)] = value
    return q


def test_init_lays_the_cylinder_feet_flat_in_a_symmetric_bent_knee_stance_over_the_feet(cassie):
    """The SDF draws the feet pointing down (24° here); init stands Cassie on their cylinders' lowest lines, level,
    hips neither rolled nor yawed, knees bent, the CoM (pelvis included) over the middle of the two lines."""
    _, config = cassie
    robot = load_robot(config.urdf_file, config.loops, floating_base=True)
    model, data = robot.model, robot.model.createData()
    q = stance_q(robot, config)
    pin.framesForwardKinematics(model, data, q)
    geometry = pin.buildGeomFromUrdf(model, config.urdf_file, pin.GeometryType.COLLISION)
    placements = geometry.createData()
    pin.updateGeometryPlacements(model, data, geometry, placements, q)
    centres = []
    for k, (foot, sole) in enumerate(zip(("left-foot", "right-foot"), config.soles)):
        cylinder = next(i for i, item in enumerate(geometry.geometryObjects) if item.name.startswith(f"{foot}_"))
        axis, centre = placements.oMg[cylinder].rotation[:, 2], placements.oMg[cylinder].translation
        sole_placement = data.oMf[robot.frame_id(sole)]
        assert abs(axis[2]) < 1e-6 and abs(axis[1]) < 0.02  # level, pointing forward
        assert centre[2] - FOOT_RADIUS == pytest.approx(sole_placement.translation[2], abs=1e-6)  # on its line
        rectangle = config.sole_rectangles[k]
        assert rectangle.x_max - rectangle.x_min == pytest.approx(0.18, abs=0.01)  # the cylinder's length
        assert rectangle.y_max - rectangle.y_min < 0.03                           # a line, widened by tolerance
        centres.append(centre)  # the middle of the line it stands on
    for side in SIDES:
        assert abs(config.stance[f"{side}-roll-op"]) < 0.01 and abs(config.stance[f"{side}-yaw-op"]) < 0.01
        assert config.stance[f"{side}-knee-op"] < -0.2
    com = pin.centerOfMass(model, data, q)
    middle = np.mean(centres, axis=0)
    assert com[0] == pytest.approx(middle[0], abs=1e-4)
    assert com[1] == pytest.approx(middle[1], abs=2e-3)  # laterally, to the spacing of the cylinders' sampled lines
    assert config.cutoff_frequency == 10.0  # line feet


def test_embedded_motion_rolls_the_line_feet_and_holds_the_rest(cassie):
    """A leg of five joints cannot hold all six of its sole's motions: the resolution meets the CoM and base
    rotation commands exactly, and each sole moves only by rolling about its line (pinocchio's Jacobians)."""
    _, config = cassie
    robot = load_robot(config.urdf_file, config.loops, floating_base=True)
    feet = tuple(Foot(name, sole, config.leg_joints[name], config.rectangle(k))
                 for k, (name, sole) in enumerate(zip(config.feet, config.soles)))
    balancer = balance_controller(robot, BalancerConfig(feet=feet))
    q = stance_q(robot, config)
    u, omega = np.array([0.05, -0.04, 0.03]), np.array([0.04, 0.03, -0.02])
    velocity = balancer.resolver.resolve(q, u, omega).velocity
    model, data = robot.model, robot.model.createData()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    np.testing.assert_allclose(pin.jacobianCenterOfMass(model, data, q) @ velocity, u, atol=1e-9)
    np.testing.assert_allclose(data.oMi[1].rotation @ velocity[3:6], omega, atol=1e-9)
    rolls = []
    for k, sole in enumerate(config.soles):
        twist = pin.getFrameJacobian(model, data, robot.frame_id(sole), pin.LOCAL) @ velocity
        free = config.sole_rectangles[k].roll_twist()
        rolls.append(twist @ free)
        np.testing.assert_allclose(twist - rolls[-1] * free, 0.0, atol=1e-9)
    assert min(abs(roll) for roll in rolls) > 1e-3  # the lateral CoM motion does roll them


def test_contact_estimate_of_the_line_feet_matches_the_plant(cassie):
    """Standing on its drives in MuJoCo, the sole forces from the actuator efforts (eqs. 45–46) are MuJoCo's
    contact forces, with no moment about the line the foot may roll on."""
    _, config = cassie
    sim = Simulation.from_config(config)
    sim.step(2000)  # settled on its soles
    robot = load_robot(config.urdf_file, config.loops, floating_base=True)
    estimator = ContactEstimator(robot, config.soles, mode=ACTUATOR_FORCES, rectangles=config.sole_rectangles)
    truth = sim.ground_truth()
    joints = sim.joint_states(list(robot.joint_names))[0]
    q = np.r_[truth.base_position, truth.base_quaternion, joints]
    q[[robot.joint_q_index(name) for name in robot.joint_names]] = joints
    effort = sim.joint_states(list(robot.actuated_names))[2]
    estimate = estimator.update(q, actuator_efforts=effort)
    for foot, force, rectangle in zip(estimate.feet, truth.sole_forces, config.sole_rectangles):
        assert foot.wrench[2] == pytest.approx(force[2], rel=0.03)
        np.testing.assert_allclose(foot.wrench[:2], force[:2], atol=1.0)  # sole frames level, heading forward
        assert foot.wrench @ rectangle.roll_twist() == pytest.approx(0.0, abs=1e-9)
    assert sum(foot.wrench[2] for foot in estimate.feet) == pytest.approx(robot.total_mass * 9.81, rel=0.01)
    np.testing.assert_allclose(estimate.zmp[:2], truth.zmp[:2], atol=0.005)


@pytest.mark.dds
def test_short_demo_stands_and_recovers_the_pushes_on_cassie(cassie, tmp_path):
    """Through the four nodes, kinematic mode on position drives."""
    assert_short_demo_stands(cassie[0], tmp_path, "kinematic", smallest_impulse=3.5)  # scaled to Cassie's 33 kg
