"""humanoid-balance init on a robot never configured here: TALOS (serial, mesh feet) from example-robot-data, by the
README's command as printed.

References: TALOS's own sole frame (left_sole_link, shipped by PAL in its URDF, which init does not use), pinocchio
forward kinematics of the stance, and the closed-loop demo through the five nodes on the written configuration."""
import re
import shlex
import subprocess
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.cli import main
from humanoid_balance.model import load_robot
from humanoid_balance.model.robot_config import load_robot_config
from humanoid_balance.resources import executable
from support.model_fixtures import REPO, assert_short_demo_stands, talos_urdf

FEET = ("leg_left_6_link", "leg_right_6_link")
README_INIT = re.search(r"^\.venv/bin/humanoid-balance (init talos_reduced\.urdf [^#\n]*)",
                        (REPO / "README.md").read_text(), re.MULTILINE)  # "Your own robot"'s first command


@pytest.fixture(scope="module")
def talos(tmp_path_factory):
    """TALOS configured by the README's command, run as printed in an empty folder: the URDF named by its file name
    in example-robot-data, where a newcomer does not know to look for it."""
    assert README_INIT, "the README's section \"Your own robot\" starts with `humanoid-balance init talos_reduced.urdf`"
    arguments = shlex.split(README_INIT.group(1))
    folder = tmp_path_factory.mktemp("talos")
    result = subprocess.run([executable("humanoid-balance"), *arguments], cwd=folder, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    written = folder / arguments[arguments.index("--output") + 1]
    assert f"{talos_urdf()} → {written.name}/" in result.stdout.splitlines()[0]
    return talos_urdf(), written, load_robot_config(written)


def test_a_robot_name_init_does_not_know_is_one_line_listing_example_robot_datas(tmp_path, capsys):
    assert main(["init", "talos", "--feet", *FEET, "--output", str(tmp_path / "talos")]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and not (tmp_path / "talos").exists()
    assert "talos: no such file, nor a model of example-robot-data" in error
    assert "talos_reduced" in error.split("did you mean")[1] and "icub" in error.split("models:")[1]


def test_soles_found_from_the_mesh_feet_match_the_robots_own_sole_frames(talos):
    urdf, _, config = talos
    ours = load_robot(config.urdf_file)
    pal = load_robot(urdf)
    for sole, theirs in zip(config.soles, ("left_sole_link", "right_sole_link")):
        mine = ours.model.frames[ours.frame_id(sole)].placement
        reference = pal.model.frames[pal.frame_id(theirs)].placement
        np.testing.assert_allclose(mine.translation, reference.translation, atol=2e-3)
    for rectangle in config.sole_rectangles:  # TALOS's foot: about 0.21 m × 0.13 m around the ankle
        assert 0.18 < rectangle.x_max - rectangle.x_min < 0.25 and 0.10 < rectangle.y_max - rectangle.y_min < 0.16
        assert rectangle.x_min < 0.0 < rectangle.x_max and rectangle.y_min < 0.0 < rectangle.y_max


def test_stance_bends_the_knees_with_flat_soles_under_the_com(talos):
    _, _, config = talos
    robot = load_robot(config.urdf_file)
    model, data = robot.model, robot.model.createData()
    q = robot.reference_q.copy()
    for joint, value in config.stance.items():
        q[robot.joint_q_index(joint)] = value
    pin.framesForwardKinematics(model, data, q)
    floating = load_robot(config.urdf_file, floating_base=True)  # its CoM counts the root link's mass too
    com = pin.centerOfMass(floating.model, floating.model.createData(), np.r_[0, 0, 0, 0, 0, 0, 1, q])
    soles = [data.oMf[robot.frame_id(sole)] for sole in config.soles]
    for sole in soles:
        np.testing.assert_allclose(sole.rotation, np.eye(3), atol=1e-5)  # flat
    assert soles[0].translation[2] == pytest.approx(soles[1].translation[2], abs=1e-6)
    assert np.mean([s.translation[0] for s in soles]) == pytest.approx(com[0], abs=1e-4)
    knees = [config.stance[leg[3]] for leg in config.leg_joints.values()]  # TALOS: leg_<side>_4_joint
    assert all(knee > 0.3 for knee in knees)  # bent, away from the straight-leg singularity


@pytest.mark.parametrize("option, wrong, right", [
    ("--feet", "leg_left_6", "did you mean leg_left_6_link"),
    ("--stance", "leg_left_4_join=0.5", "did you mean leg_left_4_joint"),
    ("--limbs", "gripper_left_motor_link", "not a limb candidate (gripper_left_motor_double_link, "),
    ("--cartesian-limbs", "gripper_right_motor_link", "not a limb candidate (gripper_left_motor_double_link, "),
])
def test_a_misspelled_name_is_one_line_naming_the_valid_ones_and_writes_nothing(tmp_path, capsys, option, wrong,
                                                                                  right):
    """A name init cannot use stops it before it writes anything (a folder half written, without its robot.yaml,
    would only mislead); what it cannot find is another matter: it writes it marked MISSING
    (test_any_humanoid's simple_humanoid)."""
    given = [wrong, FEET[1]] if option == "--feet" else [*FEET, option, wrong]
    assert main(["init", "talos_reduced.urdf", "--feet", *given, "--output", str(tmp_path / "talos")]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and f"{option} {wrong}: " in error and right in error, error
    assert not (tmp_path / "talos").exists()


@pytest.mark.dds
def test_a_hand_init_gives_to_cartesian_limbs_takes_pose_targets_in_the_balancer(tmp_path):
    """init --cartesian-limbs HAND: the balancer, started on the folder with its parameters in their layers as the
    launch files start it, configures the hand as a C-busy limb, subscribes to balance/HAND/pose and takes the pose
    sent there over DDS (a folder written without the option: no such subscription, as before the option)."""
    import rclpy
    from geometry_msgs.msg import PoseStamped
    from rclpy.executors import SingleThreadedExecutor

    from humanoid_balance.deployment import node_parameters, write_parameter_file
    from humanoid_balance.nodes import node_factory
    from humanoid_balance.nodes.qos import RELIABLE_QOS

    hand, target = "gripper_right_motor_double_link", (0.3, -0.35, 0.9)  # TALOS's right arm, as init lists it
    folder = tmp_path / "talos"
    assert main(["init", "talos_reduced.urdf", "--feet", *FEET, "--cartesian-limbs", hand,
                 "--output", str(folder)]) == 0
    assert load_robot_config(folder).cartesian_limbs == (hand,)
    path = write_parameter_file({"centroidal_balancer": node_parameters("centroidal_balancer", folder / "robot.yaml")},
                                tmp_path / "parameters.yaml")
    context = rclpy.Context()
    rclpy.init(context=context)
    nodes = []
    try:
        balancer = node_factory("centroidal_balancer")(cli_args=["--ros-args", "--params-file", str(path)],
                                                       context=context)
        nodes.append(balancer)
        probe = rclpy.create_node("pose_probe", context=context)
        nodes.append(probe)
        publisher = probe.create_publisher(PoseStamped, f"balance/{hand}/pose", RELIABLE_QOS)
        executor = SingleThreadedExecutor(context=context)
        for node in nodes:
            executor.add_node(node)
        message = PoseStamped()
        message.header.frame_id = "odom"
        message.pose.position.x, message.pose.position.y, message.pose.position.z = target
        message.pose.orientation.w = 1.0
        deadline = time.monotonic() + 10.0
        while hand not in balancer.stage.poses and time.monotonic() < deadline:
            if publisher.get_subscription_count():
                publisher.publish(message)
            executor.spin_once(timeout_sec=0.05)
        assert publisher.get_subscription_count() == 1, "the balancer does not subscribe to the hand's pose"
        np.testing.assert_allclose(balancer.stage.poses[hand].translation, target)
    finally:
        for node in nodes:
            node.destroy_node()
        rclpy.shutdown(context=context)


@pytest.mark.dds
def test_short_demo_stands_and_recovers_the_pushes_on_talos_in_momentum_mode(talos, tmp_path):
    """Momentum mode on TALOS's joint impedance (torque-controlled, as the real robot), from the configuration init
    wrote (kinematic mode on serial third-party robots: test_any_humanoid.py)."""
    assert_short_demo_stands(talos[1], tmp_path, "momentum", smallest_impulse=9.0)  # scaled to TALOS's 90 kg


def test_demo_with_a_wrong_robot_folder_is_one_line(tmp_path, capsys):
    (tmp_path / "robot.yaml").write_text("/**:\n  ros__parameters:\n    urdf_file: nowhere.urdf\n    feet: [a, b]\n"
                                         "    soles: [a]\n")
    assert main(["demo", "--scenario", "short", "--robot", str(tmp_path), "--output", str(tmp_path / "r")]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "soles" in error


@pytest.mark.parametrize("line, name", [("k_p: -2.0", "k_p"), ("cutoff_frequency: fast", "cutoff_frequency")])
def test_a_bad_gain_or_cutoff_in_the_robot_file_is_one_line(tmp_path, capsys, line, name):
    mahru = (Path(__file__).resolve().parents[2] / "config" / "robots" / "mahru.yaml").read_text()
    (tmp_path / "robot.yaml").write_text(re.sub(rf"\n    {name}: [^\n]*", "", mahru) + f"    {line}\n")
    assert main(["demo", "--scenario", "short", "--robot", str(tmp_path), "--output", str(tmp_path / "r")]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and name in error


def test_check_model_finds_the_feet_as_init_does(capsys):
    """check-model --feet: TALOS's soles (about 0.21 × 0.13 m, PAL's sole frame 0.107 m below the ankle link) and
    legs; an arm given as a foot is refused in one line, since feet stand level."""
    urdf = talos_urdf()
    package_dirs = ["--package-dirs", str(urdf.parents[4])]
    assert main(["check-model", "talos_reduced.urdf", "--samples", "0", "--feet", *FEET, *package_dirs]) == 0
    out = capsys.readouterr().out
    pal = load_robot(urdf)
    for foot, theirs in zip(FEET, ("left_sole_link", "right_sole_link")):
        line = next(line for line in out.splitlines() if line.startswith(f"foot {foot}"))
        width, length, x, y, z = map(float, re.search(r"sole ([\d.]+) × ([\d.]+) m, at \[(.+?)\]", line).groups()[:2]
                                     + tuple(re.search(r"at \[(.+?)\]", line).group(1).split()))
        np.testing.assert_allclose([x, y, z], pal.model.frames[pal.frame_id(theirs)].placement.translation, atol=2e-3)
        assert 0.18 < width < 0.25 and 0.10 < length < 0.16
    legs = [line for line in out.splitlines() if line.lstrip().startswith("leg ")]
    assert [leg.split()[1] for leg in legs] == ["leg_left_1_joint,", "leg_right_1_joint,"]
    assert main(["check-model", str(urdf), "--samples", "0", "--feet", FEET[0], "arm_left_7_link", *package_dirs]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "arm_left_7_link" in error and "not a foot" in error
