"""Unitree's G1 (29 joints, example-robot-data), never configured here: init with its foot links only, then the
short demo through the five nodes in momentum mode. Its feet touch the ground through four small collision spheres
each.
References: the spheres as the URDF gives them (read with xml.etree, not through the suite), pinocchio's
floating-base model for the stance and MuJoCo's ground truth for the run. Units: m, N·s, s."""
import xml.etree.ElementTree as ElementTree

import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.cli import main
from humanoid_balance.model import load_robot
from humanoid_balance.model.robot_config import load_robot_config
from humanoid_balance.resources import example_robot
from support.model_fixtures import assert_short_demo_stands

G1 = example_robot("g1_description/urdf/g1_29dof_rev_1_0.urdf")
pytestmark = pytest.mark.skipif(G1 is None, reason="example-robot-data has no G1 "
                                "(g1_description/urdf/g1_29dof_rev_1_0.urdf)")
FEET = ("left_ankle_roll_link", "right_ankle_roll_link")


@pytest.fixture(scope="module")
def g1(tmp_path_factory):
    folder = tmp_path_factory.mktemp("g1")
    assert main(["init", str(G1), "--feet", *FEET, "--output", str(folder), "--package-dirs",
                 str(G1.parents[4])]) == 0
    return folder, load_robot_config(folder)


def contact_spheres(link):
    """Centres (k, 3) and radii (k,) of the link's collision spheres, in the link frame, from the URDF."""
    element = next(e for e in ElementTree.parse(G1).getroot().iter("link") if e.get("name") == link)
    centres, radii = [], []
    for collision in element.iter("collision"):
        sphere = collision.find("geometry/sphere")
        if sphere is not None:
            centres.append([float(x) for x in collision.find("origin").get("xyz").split()])
            radii.append(float(sphere.get("radius")))
    return np.array(centres), np.array(radii)


def test_init_puts_the_soles_under_the_contact_spheres_level_with_the_com_over_them(g1):
    _, config = g1
    robot = load_robot(config.urdf_file, floating_base=True)
    model, data = robot.model, robot.model.createData()
    q = pin.neutral(model)
    for joint, value in config.stance.items():
        q[robot.joint_q_index(joint)] = value
    pin.framesForwardKinematics(model, data, q)
    soles = []
    for link, sole, rectangle in zip(FEET, config.soles, config.sole_rectangles):
        centres, radii = contact_spheres(link)
        assert len(centres) == 4
        in_link = model.frames[robot.frame_id(sole)].placement
        assert in_link.translation[2] == pytest.approx(centres[:, 2].min() - radii.max(), abs=1e-6)  # lowest points
        bottoms = (centres - in_link.translation) @ in_link.rotation  # the spheres' centres in the sole frame
        assert rectangle.x_min == pytest.approx(bottoms[:, 0].min(), abs=1e-6)
        assert rectangle.x_max == pytest.approx(bottoms[:, 0].max(), abs=1e-6)
        assert rectangle.y_min == pytest.approx(bottoms[:, 1].min(), abs=1e-6)
        assert rectangle.y_max == pytest.approx(bottoms[:, 1].max(), abs=1e-6)
        placement = data.oMf[robot.frame_id(sole)]
        np.testing.assert_allclose(placement.rotation, np.eye(3), atol=1e-5)  # level
        soles.append(placement.translation)
    assert soles[0][2] == pytest.approx(soles[1][2], abs=1e-6)
    com = pin.centerOfMass(model, data, q)  # the pelvis's mass too
    assert com[0] == pytest.approx(np.mean(soles, axis=0)[0], abs=1e-4)  # over the sole frames, under the ankles
    assert all(config.stance[knee] > 0.3 for knee in ("left_knee_joint", "right_knee_joint"))  # bent


@pytest.mark.dds
def test_short_demo_stands_and_recovers_the_pushes_on_g1_in_momentum_mode(g1, tmp_path):
    """Momentum mode on the joint impedance (position, velocity, stiffness, damping and feed-forward torque: what
    G1's low-level interface takes; kinematic mode on serial third-party robots: test_any_humanoid.py)."""
    assert_short_demo_stands(g1[0], tmp_path, "momentum", smallest_impulse=3.5)  # scaled to G1's 33 kg
