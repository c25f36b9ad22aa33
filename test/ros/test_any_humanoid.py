"""Humanoids from example-robot-data that no other test configures, each from its URDF and foot links alone
(issue 36): Romeo (COLLADA meshes, knees straight at their joint limit), Alexander (OBJ meshes, feet with visual
geometry only, hips roll-yaw-pitch) and iCub (COLLADA meshes, knees that bend to negative angles, hips
pitch-roll-yaw, a root frame facing backwards), through init and the five nodes, the modes shared out among them
(each robot in one, to keep the suite's time: both modes run on every bundled robot elsewhere).

References: the soles from the foot meshes as the URDF places them, read with trimesh and xml.etree (init reads them
through pinocchio's assimp loader), pinocchio's kinematics of the plain URDF, and MuJoCo's ground truth for the
runs. Units: m, rad, N·s."""
import shutil
import xml.etree.ElementTree as ElementTree

import numpy as np
import pinocchio as pin
import pytest
import trimesh

from humanoid_balance.cli import main
from humanoid_balance.model import load_robot
from humanoid_balance.model.robot_config import load_robot_config
from humanoid_balance.resources import example_robot
from humanoid_balance.sim.simulation import Simulation
from support.model_fixtures import assert_short_demo_stands

ROBOTS = {  # name: (URDF in example-robot-data, foot links, the short demo's smallest push [N·s], its balance mode)
    "romeo": ("romeo_description/urdf/romeo.urdf", ("l_ankle", "r_ankle"), 4.0, "kinematic"),
    "alexander": ("alexander_description/urdf/alexander_v1.lowerBodyOnly.urdf", ("LEFT_FOOT", "RIGHT_FOOT"), 4.5,
                  "momentum"),
    "icub": ("icub_description/robots/icub_reduced.urdf", ("l_foot", "r_foot"), 2.5, "kinematic"),
}
SOLE_TOLERANCE = 0.003  # points this close to the lowest one are on the sole [m] (as init's definition)


def urdf_of(name):
    path = example_robot(ROBOTS[name][0])
    if path is None:
        pytest.skip(f"example-robot-data has no {ROBOTS[name][0]}")
    return path


@pytest.fixture(scope="module")
def configured(tmp_path_factory):
    """name → (init's exit code, its output, the folder); init is given the URDF and the feet only."""
    folders = {}

    def configure(name):
        if name not in folders:
            folder = tmp_path_factory.mktemp(name)
            code = main(["init", str(urdf_of(name)), "--feet", *ROBOTS[name][1], "--output", str(folder)])
            folders[name] = (code, folder)
        return folders[name]
    return configure


def package_path(uri, urdf):
    """A package:// URI of example-robot-data as a file: the share folder holds the package."""
    return urdf.parents[4] / uri[len("package://"):]


def mesh_points_in_world(urdf, link, model, data):
    """The vertices of ``link``'s collision meshes (its visual meshes if it has no collision element) in the world
    frame at the URDF's zero configuration, read with trimesh [m]."""
    element = next(e for e in ElementTree.parse(urdf).getroot().iter("link") if e.get("name") == link)
    shapes = element.findall("collision") or element.findall("visual")
    placement = data.oMf[model.getFrameId(link)]
    points = []
    for shape in shapes:
        mesh = shape.find("geometry/mesh")
        origin = shape.find("origin")
        xyz = [float(v) for v in origin.get("xyz", "0 0 0").split()] if origin is not None else [0.0] * 3
        rpy = [float(v) for v in origin.get("rpy", "0 0 0").split()] if origin is not None else [0.0] * 3
        scale = [float(v) for v in mesh.get("scale", "1 1 1").split()]
        vertices = trimesh.load(package_path(mesh.get("filename"), urdf), force="mesh").vertices * scale
        in_link = vertices @ pin.rpy.rpyToMatrix(*rpy).T + xyz
        points.append(in_link @ placement.rotation.T + placement.translation)
    return np.vstack(points)


@pytest.mark.parametrize("name", ROBOTS)
def test_init_finds_the_soles_in_the_foot_meshes_of_any_format(configured, name):
    """Each sole frame lies at the lowest point of its foot's meshes, straight under the foot link's origin, its
    rectangle spanning the mesh points on that plane: COLLADA (Romeo, iCub) and OBJ visual meshes (Alexander)."""
    code, folder = configured(name)
    assert code == 0
    urdf = urdf_of(name)
    config = load_robot_config(folder)
    plain = pin.buildModelFromUrdf(str(urdf))
    data = plain.createData()
    pin.framesForwardKinematics(plain, data, pin.neutral(plain))
    ours = load_robot(config.urdf_file)
    ours_data = ours.model.createData()
    pin.framesForwardKinematics(ours.model, ours_data, pin.neutral(ours.model))
    for link, sole, rectangle in zip(ROBOTS[name][1], config.soles, config.sole_rectangles):
        points = mesh_points_in_world(urdf, link, plain, data)
        lowest = points[:, 2].min()
        on_sole = points[points[:, 2] < lowest + SOLE_TOLERANCE]
        foot = data.oMf[plain.getFrameId(link)]
        world = ours_data.oMf[ours.frame_id(sole)]  # the sole frame init added under the foot
        np.testing.assert_allclose(world.translation, [*foot.translation[:2], lowest], atol=1e-5)
        np.testing.assert_allclose(world.rotation, np.eye(3), atol=1e-6)  # world-aligned (the URDF rounds to 1e-6)
        x, y = on_sole[:, 0] - foot.translation[0], on_sole[:, 1] - foot.translation[1]
        np.testing.assert_allclose(list(rectangle), [x.min(), x.max(), y.min(), y.max()], atol=1e-5)


def test_visual_only_feet_are_used_with_a_warning_naming_the_link(tmp_path, capsys):
    urdf = urdf_of("alexander")
    assert main(["init", str(urdf), "--feet", *ROBOTS["alexander"][1], "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for link in ROBOTS["alexander"][1]:
        assert f"warning: link '{link}' has no collision geometry: its visual geometry stands in" in out
    simulation = Simulation.from_config(load_robot_config(tmp_path))
    assert simulation.warnings == []  # the plant reads the visual meshes: no sole box, no dropped mesh
    assert any("LEFT_FOOT" in notice and "visual" in notice for notice in simulation.notices)


def test_icub_stands_on_knees_bent_to_negative_angles(configured):
    """iCub's knees range over [-2.18, 0.40] rad: init bends them negative, soles flat and level, the CoM over the
    sole frames (pinocchio's floating-base CoM), and scales the support margin to its 6 cm soles."""
    code, folder = configured("icub")
    assert code == 0
    config = load_robot_config(folder)
    robot = load_robot(config.urdf_file, floating_base=True)
    q = pin.neutral(robot.model)
    q[2] = 1.0
    for joint, value in config.stance.items():
        q[robot.joint_q_index(joint)] = value
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    soles = [data.oMf[robot.frame_id(sole)] for sole in config.soles]
    for sole in soles:
        np.testing.assert_allclose(sole.rotation, np.eye(3), atol=1e-5)
    assert soles[0].translation[2] == pytest.approx(soles[1].translation[2], abs=1e-5)
    com = pin.centerOfMass(robot.model, data, q)
    np.testing.assert_allclose(com[:2], np.mean([s.translation[:2] for s in soles], axis=0), atol=1e-4)
    assert config.stance["l_knee"] < -0.3 and config.stance["r_knee"] < -0.3
    assert config.support_margin < 0.4 * 0.031 + 1e-4  # the soles are 6.1 cm long


@pytest.mark.dds
@pytest.mark.parametrize("name", ROBOTS)
def test_short_demo_stands_and_recovers_the_pushes(configured, name, tmp_path):
    """The plant reads every mesh (no geometry warning: all nodes OK), in the robot's mode (ROBOTS)."""
    code, folder = configured(name)
    assert code == 0
    assert_short_demo_stands(folder, tmp_path, ROBOTS[name][3], smallest_impulse=ROBOTS[name][2])


def test_the_robot_folder_can_be_moved_and_its_meshes_follow(tmp_path):
    """A URDF whose meshes are files next to it: init copies them into the folder and names every file relative to
    it; moved to another place with the original gone, the folder still gives the same robot and the plant finds
    every mesh."""
    source = tmp_path / "source"
    shutil.copytree(urdf_of("alexander").parents[1] / "meshes", source / "meshes")
    text = urdf_of("alexander").read_text().replace("package://example-robot-data/robots/alexander_description/", "../")
    (source / "urdf").mkdir()
    (source / "urdf" / "alexander.urdf").write_text(text)
    assert main(["init", str(source / "urdf" / "alexander.urdf"), "--feet", *ROBOTS["alexander"][1],
                 "--output", str(tmp_path / "first")]) == 0
    shutil.move(tmp_path / "first", tmp_path / "moved")
    shutil.rmtree(source)
    moved = "\n".join(line for line in (tmp_path / "moved" / "robot.yaml").read_text().splitlines()
                      if not line.startswith("#"))
    assert "urdf_file: alexander.urdf" in moved and str(tmp_path) not in moved
    meshes = [m.get("filename") for m in ElementTree.parse(tmp_path / "moved" / "alexander.urdf").iter("mesh")]
    assert meshes and all(name.startswith("meshes/") for name in meshes)
    config = load_robot_config(tmp_path / "moved")
    assert config.urdf_file == str(tmp_path / "moved" / "alexander.urdf")
    assert Simulation.from_config(config).warnings == []


def test_feet_without_geometry_write_the_folder_and_name_the_option(tmp_path, capsys):
    """A robot whose feet have no geometry at all (example-robot-data's simple humanoid): one line naming --sole
    for each foot and the file written with the entries marked; given --sole, init completes."""
    urdf = example_robot("simple_humanoid_description/urdf/simple_humanoid.urdf")
    if urdf is None:
        pytest.skip("example-robot-data has no simple_humanoid")
    feet = ("l_ankle", "r_ankle")
    assert main(["init", str(urdf), "--feet", *feet, "--output", str(tmp_path)]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and str(tmp_path / "robot.yaml") in error
    assert all(f"--sole {foot} Z X_MIN X_MAX Y_MIN Y_MAX" in error for foot in feet)
    written = (tmp_path / "robot.yaml").read_text()
    assert "sole_rectangles: []  # MISSING: --sole" in written and "stance_joints: ['']  # MISSING" in written
    soles = [arg for foot in feet for arg in ("--sole", foot, "-0.05", "-0.1", "0.13", "-0.06", "0.06")]
    assert main(["init", str(urdf), "--feet", *feet, "--output", str(tmp_path), *soles]) == 0
    config = load_robot_config(tmp_path)
    assert [list(r) for r in config.sole_rectangles] == [[-0.1, 0.13, -0.06, 0.06]] * 2
    robot = load_robot(config.urdf_file)
    for foot, sole in zip(feet, config.soles):  # 5 cm below the ankle's origin, world-aligned at the reference
        placement = robot.model.frames[robot.frame_id(sole)].placement
        data = robot.model.createData()
        pin.framesForwardKinematics(robot.model, data, robot.reference_q)
        world = data.oMf[robot.frame_id(foot)] * placement
        np.testing.assert_allclose(world.translation - data.oMf[robot.frame_id(foot)].translation, [0, 0, -0.05],
                                   atol=1e-9)
    assert no_missing_entries(tmp_path)


def no_missing_entries(folder):
    """The robot.yaml init wrote into ``folder`` marks nothing MISSING."""
    return "MISSING" not in (folder / "robot.yaml").read_text()


def test_a_stance_held_by_a_joint_limit_names_it_and_takes_one_from_the_command_line(tmp_path, capsys):
    """TALOS with its knees limited to 0.05 rad and its hips' rolls fixed cannot crouch: init names the limits that
    hold it and --stance, writes the folder with the stance MISSING; given --stance, the configuration holds it."""
    urdf = example_robot("talos_data/robots/talos_reduced.urdf")
    root = ElementTree.parse(urdf)
    limits = {"leg_left_4_joint": ("0", "0.05"), "leg_right_4_joint": ("0", "0.05"),
              "leg_left_2_joint": ("0", "0"), "leg_right_2_joint": ("0", "0")}
    for joint in root.getroot().findall("joint"):
        if joint.get("name") in limits:
            joint.find("limit").set("lower", limits[joint.get("name")][0])
            joint.find("limit").set("upper", limits[joint.get("name")][1])
    for mesh in root.iter("mesh"):  # the copy elsewhere: its meshes by absolute path
        mesh.set("filename", str(package_path(mesh.get("filename"), urdf)))
    stiff = tmp_path / "talos_stiff_knees.urdf"
    root.write(stiff)
    feet = ("leg_left_6_link", "leg_right_6_link")
    assert main(["init", str(stiff), "--feet", *feet, "--output", str(tmp_path / "out")]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "--stance JOINT=VALUE" in error
    assert "leg_left_4_joint at its upper limit +0.050 rad" in error and "leg_left_2_joint fixed at +0.000" in error
    assert "stance_joints: ['']  # MISSING: --stance" in (tmp_path / "out" / "robot.yaml").read_text()
    stance = ["leg_left_4_joint=0.05", "leg_right_4_joint=0.05"]
    assert main(["init", str(stiff), "--feet", *feet, "--output", str(tmp_path / "out"), "--stance", *stance]) == 0
    assert load_robot_config(tmp_path / "out").stance == {"leg_left_4_joint": 0.05, "leg_right_4_joint": 0.05}
    assert no_missing_entries(tmp_path / "out")
