"""``humanoid-balance init``: a robot configuration directory from a URDF (and its loops) and the two foot links.

DIR/robot.yaml is a ROS 2 parameter file for every node (``/**``), read by the nodes, the demo, the bench and the
launch files (``robot:=DIR``); DIR/<robot>.urdf is the URDF with a sole link added under each foot and its mesh
paths made absolute; DIR/<robot>.loops.yaml the loop closures, copied. What :mod:`humanoid_balance.model.robot_setup`
finds is printed and written with comments; every value can be edited afterwards.
"""
import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pinocchio as pin
import yaml

from humanoid_balance.model import ClosedChain, ModelFileError, load_robot
from humanoid_balance.model.robot_config import (DEFAULT_CUTOFF, RobotConfig, check_robot_config,
                                                 load_robot_config, robot_config_parameters)
from humanoid_balance.model.robot_setup import (RestingFace, drive_gains, find_flat_feet, leg_chains,
                                               limb_candidates, standing_stance)
from humanoid_balance.resources import find_file

__all__ = ["init_robot", "FOOT_NAMES"]

LINE_FOOT_CUTOFF = 10.0  # wrench low-pass for line feet [Hz]: Cassie bounced off its soles at 5 Hz, stands at 10

FOOT_NAMES = ("left_foot", "right_foot")  # the feet's names in topics, in the order --feet gives their links


def _write_urdf(urdf_path, soles, output, package_dirs):
    """The URDF with a fixed sole link under each foot (``Sole`` placements) and absolute mesh paths; returns the
    sole link names and the mesh paths that could not be resolved."""
    tree = ElementTree.parse(urdf_path)
    robot = tree.getroot()
    links = {link.get("name") for link in robot.iter("link")}
    unresolved = []
    for mesh in robot.iter("mesh"):
        path = find_file(mesh.get("filename", ""), urdf_path, package_dirs)
        if path is None:
            unresolved.append(mesh.get("filename", ""))
        else:
            mesh.set("filename", str(path))
    names = []
    for sole in soles:
        name = f"{sole.foot_link}_sole"
        while name in links:
            name += "_"
        names.append(name)
        ElementTree.SubElement(robot, "link", name=name)
        joint = ElementTree.SubElement(robot, "joint", name=f"{name}_fixed", type="fixed")
        ElementTree.SubElement(joint, "parent", link=sole.foot_link)
        ElementTree.SubElement(joint, "child", link=name)
        rpy = pin.rpy.matrixToRpy(sole.placement.rotation)
        ElementTree.SubElement(joint, "origin", xyz=" ".join(f"{v:.6f}" for v in sole.placement.translation),
                               rpy=" ".join(f"{v:.6f}" for v in rpy))
    ElementTree.indent(tree)
    tree.write(output, encoding="unicode", xml_declaration=True)
    return names, unresolved


def init_robot(urdf, feet, output, loops=None, package_dirs=(), out=print):
    """Write the configuration directory ``output`` for ``urdf`` (+ ``loops``) with foot links ``feet`` (left,
    right); print what was found; return the :class:`RobotConfig`.

    Raises:
        ModelFileError: naming the file, the link or the value that could not be found.
    """
    urdf, output = Path(urdf), Path(output)
    if len(feet) != 2 or feet[0] == feet[1]:
        raise ModelFileError(urdf, "--feet", f"give the left and the right foot link, got {list(feet)}")
    original = load_robot(urdf, loops)
    flat = find_flat_feet(urdf, original, feet, package_dirs, ClosedChain(original) if loops else None)
    soles = flat.soles
    output.mkdir(parents=True, exist_ok=True)
    name = urdf.stem
    urdf_copy = output / f"{name}.urdf"
    sole_links, unresolved = _write_urdf(urdf, soles, urdf_copy, package_dirs)
    loops_copy = None
    if loops is not None:
        loops_copy = output / f"{name}.loops.yaml"
        shutil.copyfile(loops, loops_copy)
    robot = load_robot(urdf_copy, loops_copy)
    legs = leg_chains(robot, sole_links, urdf)
    limbs = limb_candidates(robot, legs)
    line_feet = any(len(leg) == 5 for leg in legs)  # the sole rolls on its line (model.soles.free_contact_twists)
    if flat.stance is not None:  # the feet lie flat only away from the reference: stand there, every joint given
        leg_length, lowering = flat.leg_length, flat.lowering
        stance = {joint: float(flat.stance[robot.joint_q_index(joint)]) for joint in robot.joint_names}
    elif loops is None:
        flat_soles = [(link, RestingFace(pin.SE3.Identity(), 0.0, False)) for link in sole_links]
        q, leg_length, lowering = standing_stance(robot, flat_soles, legs)
        stance = {joint: float(q[robot.joint_q_index(joint)]) for leg in legs for joint in leg}
    else:  # a closed-chain robot stands in its loops file's reference (every loop closed there)
        data = robot.model.createData()
        pin.framesForwardKinematics(robot.model, data, robot.reference_q)
        hip = data.oMi[robot.model.getJointId(legs[0][0])].translation[2]
        leg_length, lowering = float(hip - data.oMf[robot.frame_id(sole_links[0])].translation[2]), 0.0
        stance = {}
    config = RobotConfig(
        urdf_file=str(urdf_copy.resolve()), loops_file=str(loops_copy.resolve()) if loops_copy else "",
        feet=FOOT_NAMES, soles=tuple(sole_links), sole_rectangles=tuple(sole.rectangle for sole in soles),
        leg_joints=dict(zip(FOOT_NAMES, legs)), stance=stance, base_frame=robot.root_link,
        cutoff_frequency=LINE_FOOT_CUTOFF if line_feet else DEFAULT_CUTOFF, **drive_gains(robot.total_mass, leg_length))
    _write_config(output / "robot.yaml", config, limbs, urdf)
    config = load_robot_config(output / "robot.yaml")
    check_robot_config(config, robot, str(output / "robot.yaml"))

    out(f"humanoid-balance init: {urdf} → {output}/")
    out(f"  mass {robot.total_mass:.1f} kg, leg length {leg_length:.3f} m")
    for foot, sole, link, leg in zip(FOOT_NAMES, soles, sole_links, legs):
        r = sole.rectangle
        out(f"  {foot}: link {sole.foot_link}, sole frame {link} at {np.round(sole.placement.translation, 4)} m in "
            f"it, rectangle x [{r.x_min:+.3f}, {r.x_max:+.3f}] y [{r.y_min:+.3f}, {r.y_max:+.3f}] m "
            f"({sole.points} collision points on it)")
        out(f"    leg: {', '.join(leg)}")
    out("  limb candidates (J-busy, set busy_limbs): " + (", ".join(f"{n} ({len(j)} joints)" for n, (j, _) in
                                                                      limbs.items()) or "none"))
    if flat.stance is not None:
        out(f"  stance: feet laid flat (tilted {', '.join(f'{np.degrees(t):.0f}°' for t in flat.tilt)} in the "
            f"reference), soles {lowering * 1000:.0f} mm higher under the root, every loop closed")
    else:
        out("  stance: " + (f"knees bent, base {lowering * 1000:.0f} mm below straight legs" if stance
                            else "the loops file's reference"))
    out(f"  drive gains: position {config.drive_stiffness[1]:.0f} N·m/rad, {config.drive_stiffness[0]:.0f} N/m")
    if line_feet:
        out(f"  legs of five joints: line feet, free to roll on their line; wrench low-pass {LINE_FOOT_CUTOFF:.0f} Hz "
            f"(cutoff_frequency), since a line foot rocks from heel to toe within the lag of {DEFAULT_CUTOFF:.0f} Hz")
    for path in unresolved:
        out(f"  warning: mesh {path} not found (give --package-dirs or set ROS_PACKAGE_PATH); the plant drops it")
    out(f"next: humanoid-balance demo --robot {output}   |   ros2 launch humanoid_balance sim.launch.py "
        f"robot:={output.resolve()}")
    return config


def _write_config(path, config, limbs, source):
    parameters = robot_config_parameters(config)
    for key in ("busy_limbs", "stance_joints"):
        parameters[key] = parameters[key] or [""]  # ROS 2 parameter files cannot hold an empty list
    parameters["stance_positions"] = parameters["stance_positions"] or [0.0]
    for limb, (joints, end) in limbs.items():
        parameters[f"{limb}_joints"], parameters[f"{limb}_end_frame"] = list(joints), end
    body = yaml.safe_dump({"/**": {"ros__parameters": parameters}}, sort_keys=False, width=120,
                          default_flow_style=None)
    header = (f"# Robot configuration of {source}, written by humanoid-balance init; edit freely.\n"
              "# A ROS 2 parameter file for every node: --params-file robot.yaml, or robot:=<this folder> for the\n"
              "# launch files, --robot <this folder> for the demo. sole_rectangles: [x_min, x_max, y_min, y_max] per\n"
              "# foot in its sole frame [m]. Limb candidates found: " + (", ".join(limbs) or "none") +
              "; list the ones\n# that follow joint trajectories in busy_limbs, and give <limb>_swing (offsets at "
              "mid-swing [rad]) for the demo's dance.\n")
    path.write_text(header + body)
