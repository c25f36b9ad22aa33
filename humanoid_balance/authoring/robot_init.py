"""``humanoid-balance init``: a robot configuration directory from a URDF (and its loops) and the two foot links.

DIR/robot.yaml is a ROS 2 parameter file for every node (``/**``), read by the nodes, the demo, the bench and the
launch files (``robot:=DIR``); DIR/<robot>.urdf is the URDF with a sole link added under each foot;
DIR/<robot>.loops.yaml the loop closures, copied. The folder is portable: its files name each other relative to
it, meshes keep their ``package://`` URIs and meshes given as files are copied into DIR/meshes. What
:mod:`~humanoid_balance.authoring.robot_setup` finds is printed and written with comments; what the command line
gives (``--sole``, ``--stance``, ``--limbs``, ``--cartesian-limbs``) replaces what it would look for. What it cannot
find is written marked MISSING, and :class:`IncompleteConfiguration` names the option that gives it. A name it cannot
use (a foot link, a stance joint, a limb) stops it before it writes anything, naming the closest valid ones.
"""
import difflib
import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pinocchio as pin
import yaml

from humanoid_balance.authoring.robot_setup import (RestingFace, SoleNotFound, StanceNotFound, drive_gains,
                                                   find_flat_feet, find_sole, leg_chains, limb_candidates,
                                                   limb_end_link, standing_stance)
from humanoid_balance.model import ClosedChain, ModelFileError, load_robot
from humanoid_balance.model.robot_config import (ROBOT_DEFAULTS, RobotConfig, check_robot_config, load_robot_config,
                                                 robot_config_parameters)
from humanoid_balance.model.soles import SoleRectangle
from humanoid_balance.resources import find_file

__all__ = ["init_robot", "FOOT_NAMES", "IncompleteConfiguration", "SOLE_OPTION", "STANCE_OPTION", "LIMBS_OPTION"]

LINE_FOOT_CUTOFF = 10.0  # wrench low-pass for line feet [Hz]: Cassie bounced off its soles at 5 Hz, stands at 10

FOOT_NAMES = ("left_foot", "right_foot")  # the feet's names in topics, in the order --feet gives their links
SOLE_OPTION = "--sole LINK Z X_MIN X_MAX Y_MIN Y_MAX"
STANCE_OPTION = "--stance JOINT=VALUE ..."
LIMBS_OPTION = "--limbs NAME[=JOINT,JOINT,...] ..."
MESH_FOLDER = "meshes"
SOLE_MARGIN_FRACTION = 0.4  # of the shortest sole's half-length: the largest support margin init writes


class Missing(NamedTuple):
    """An entry init could not find: the robot.yaml fields, the option that gives it, and why."""

    fields: tuple
    option: str
    reason: str


class IncompleteConfiguration(ModelFileError):
    """init wrote the folder, but with entries marked MISSING; the message names each one's option."""


def _write_urdf(urdf_path, soles, folder, package_dirs):
    """DIR/<robot>.urdf: the URDF with a fixed sole link under each foot (``Sole`` placements; None: at the foot's
    origin, a place holder), its ``package://`` meshes as they are and its file meshes copied into DIR/meshes
    (paths relative to the URDF); returns the URDF's path, the sole link names and the meshes not found."""
    tree = ElementTree.parse(urdf_path)
    robot = tree.getroot()
    links = {link.get("name") for link in robot.iter("link")}
    unresolved, copied = [], {}
    for mesh in robot.iter("mesh"):
        filename = mesh.get("filename", "")
        path = find_file(filename, urdf_path, package_dirs)
        if path is None:
            unresolved.append(filename)
        elif not filename.startswith("package://"):
            if path not in copied:
                copied[path] = f"{MESH_FOLDER}/{len(copied)}_{path.name}"
                (folder / MESH_FOLDER).mkdir(exist_ok=True)
                shutil.copyfile(path, folder / copied[path])
            mesh.set("filename", copied[path])
    names = []
    for foot_link, placement in soles:
        name = f"{foot_link}_sole"
        while name in links:
            name += "_"
        names.append(name)
        ElementTree.SubElement(robot, "link", name=name)
        joint = ElementTree.SubElement(robot, "joint", name=f"{name}_fixed", type="fixed")
        ElementTree.SubElement(joint, "parent", link=foot_link)
        ElementTree.SubElement(joint, "child", link=name)
        placement = placement if placement is not None else pin.SE3.Identity()
        rpy = pin.rpy.matrixToRpy(placement.rotation)
        ElementTree.SubElement(joint, "origin", xyz=" ".join(f"{v:.6f}" for v in placement.translation),
                               rpy=" ".join(f"{v:.6f}" for v in rpy))
    ElementTree.indent(tree)
    output = folder / f"{Path(urdf_path).stem}.urdf"
    tree.write(output, encoding="unicode", xml_declaration=True)
    return output, names, unresolved


def _given_soles(urdf, feet, soles):
    """--sole LINK Z X_MIN X_MAX Y_MIN Y_MAX (as text) → {link: (Z, SoleRectangle)}.

    Raises:
        ModelFileError: naming the option and the value that is wrong.
    """
    given = {}
    for entry in soles:
        link, *numbers = entry
        if link not in feet:
            raise ModelFileError(urdf, f"--sole {link}", f"not one of the --feet links {list(feet)}")
        try:
            height, x_min, x_max, y_min, y_max = (float(v) for v in numbers)
        except ValueError:
            raise ModelFileError(urdf, f"--sole {link}", f"{numbers}: give Z X_MIN X_MAX Y_MIN Y_MAX in metres") \
                from None
        if not (x_min < x_max and y_min < y_max):
            raise ModelFileError(urdf, f"--sole {link}", f"x [{x_min}, {x_max}] y [{y_min}, {y_max}] is empty "
                                 "(X_MIN < X_MAX and Y_MIN < Y_MAX)")
        given[link] = (height, SoleRectangle(x_min, x_max, y_min, y_max))
    return given


def _given_stance(urdf, robot, stance):
    """--stance JOINT=VALUE ... → {joint: value}.

    Raises:
        ModelFileError: a pair that is not JOINT=VALUE, an unknown joint or a value outside its limits.
    """
    values = {}
    for pair in stance:
        joint, _, text = pair.partition("=")
        try:
            value = float(text)
        except ValueError:
            raise ModelFileError(urdf, f"--stance {pair}", "give JOINT=VALUE with VALUE in rad or m") from None
        if joint not in robot.joint_names:
            close = difflib.get_close_matches(joint, robot.joint_names, n=3)
            raise ModelFileError(urdf, f"--stance {pair}", f"'{joint}' is not a joint of the URDF"
                                 + (f"; did you mean {', '.join(close)}?" if close else ""))
        index = robot.joint_q_index(joint)
        lower, upper = robot.model.lowerPositionLimit[index], robot.model.upperPositionLimit[index]
        if not lower <= value <= upper:
            raise ModelFileError(urdf, f"--stance {pair}", f"outside the joint's limits [{lower:.3f}, {upper:.3f}]")
        values[joint] = value
    return values


def _given_limbs(urdf, robot, candidates, limbs, option="--limbs"):
    """``option`` (--limbs, --cartesian-limbs) NAME or NAME=JOINT,JOINT,... → {name: (joints, end frame)}: candidates
    by name, or limbs by their joints (their end frame: the link after the last joint).

    Raises:
        ModelFileError: an unknown candidate or joint.
    """
    chosen = {}
    for entry in limbs:
        name, _, joints = entry.partition("=")
        if not joints:
            if name not in candidates:
                raise ModelFileError(urdf, f"{option} {name}", "not a limb candidate (" + (", ".join(candidates) or
                                     "none found") + "); give NAME=JOINT,JOINT,... for another chain")
            chosen[name] = candidates[name]
            continue
        names = tuple(joints.split(","))
        unknown = [joint for joint in names if joint not in robot.output_names]
        if unknown:
            raise ModelFileError(urdf, f"{option} {entry}", f"{unknown} are not output joints of the URDF")
        chosen[name] = (names, limb_end_link(robot.model, robot.model.getJointId(names[-1])))
    return chosen


def init_robot(urdf, feet, output, loops=None, package_dirs=(), soles=(), stance=(), limbs=(), cartesian_limbs=(),
               out=print):
    """Write the configuration directory ``output`` for ``urdf`` (+ ``loops``) with foot links ``feet`` (left,
    right); print what was found; return the :class:`RobotConfig`. ``soles``: (LINK, Z, X_MIN, X_MAX, Y_MIN,
    Y_MAX) per foot whose sole is given (:func:`~humanoid_balance.authoring.robot_setup.given_sole`); ``stance``:
    JOINT=VALUE pairs of the standing configuration; ``limbs``, ``cartesian_limbs``: J-busy and C-busy limbs,
    candidates by name or NAME=JOINTS.

    Raises:
        IncompleteConfiguration: the folder is written, but entries it could not find are marked MISSING.
        ModelFileError: naming the file, the link, the option or the value that is wrong (nothing written).
    """
    urdf, output = Path(urdf), Path(output)
    if len(feet) != 2 or feet[0] == feet[1]:
        raise ModelFileError(urdf, "--feet", f"give the left and the right foot link, got {list(feet)}")
    original = load_robot(urdf, loops)
    given_soles = _given_soles(urdf, feet, soles)
    given_stance = _given_stance(urdf, original, stance)
    missing = []
    try:
        flat = find_flat_feet(urdf, original, feet, package_dirs, ClosedChain(original) if loops else None,
                              given_soles)
    except SoleNotFound as first:
        flat = None
        missing += _missing_soles(urdf, original, feet, given_soles, package_dirs, first)
    legs = flat.legs if flat else leg_chains(original, feet, urdf)  # the sole links init adds change no joint
    candidates = limb_candidates(original, legs)
    busy = _given_limbs(urdf, original, candidates, limbs)
    cartesian = _given_limbs(urdf, original, candidates, cartesian_limbs, "--cartesian-limbs")
    both = sorted(set(busy) & set(cartesian))
    if both:
        raise ModelFileError(urdf, "--cartesian-limbs", f"{both} given to --limbs too: a limb follows joint "
                             "trajectories or poses, not both")
    output.mkdir(parents=True, exist_ok=True)
    found = flat.soles if flat else []
    urdf_copy, sole_links, unresolved = _write_urdf(
        urdf, [(sole.foot_link, sole.placement) for sole in found] or [(link, None) for link in feet], output,
        package_dirs)
    loops_copy = None
    if loops is not None:
        loops_copy = output / f"{urdf.stem}.loops.yaml"
        shutil.copyfile(loops, loops_copy)
    robot = load_robot(urdf_copy, loops_copy)
    line_feet = any(len(leg) == 5 for leg in legs)  # the sole rolls on its line (model.soles.free_contact_twists)
    leg_length, lowering, stance_values = _stance(robot, flat, sole_links, legs, loops, given_stance, missing)
    config = RobotConfig(
        urdf_file=urdf_copy.name, loops_file=loops_copy.name if loops_copy else "",
        feet=FOOT_NAMES, soles=tuple(sole_links), sole_rectangles=tuple(sole.rectangle for sole in found),
        leg_joints=dict(zip(FOOT_NAMES, legs)), busy_limbs=tuple(busy), cartesian_limbs=tuple(cartesian),
        limb_joints={name: joints for name, (joints, _) in {**busy, **cartesian}.items()},
        limb_end_frames={name: end for name, (_, end) in {**busy, **cartesian}.items()}, stance=stance_values,
        base_frame=robot.root_link, cutoff_frequency=LINE_FOOT_CUTOFF if line_feet else ROBOT_DEFAULTS["cutoff_frequency"],
        support_margin=_support_margin(found), **drive_gains(robot.total_mass, leg_length))
    robot_file = output / "robot.yaml"
    _write_config(robot_file, config, candidates, urdf, missing)
    if flat is not None:  # without its soles the file cannot be read until they are given
        config = load_robot_config(robot_file)
        check_robot_config(config, robot, str(robot_file))
    _summary(out, urdf, output, robot, config, found, sole_links, legs, candidates, flat, lowering, leg_length,
             line_feet, unresolved, bool(given_stance))
    if missing:
        raise IncompleteConfiguration(robot_file, ", ".join(dict.fromkeys(f for entry in missing for f in entry.fields))
                                      + " marked MISSING", "; ".join(f"{entry.reason}: add {entry.option}"
                                                                     for entry in missing)
                                      + " and run init again")
    out(f"next: humanoid-balance demo --robot {output}   |   ros2 launch humanoid_balance sim.launch.py "
        f"robot:={output.resolve()}")
    return config


def _support_margin(soles):
    """The CoM reference's margin inside the support [m]: the default, or SOLE_MARGIN_FRACTION of the shortest
    sole's half-length for short feet (a 6 cm foot leaves no room inside a 4 cm margin)."""
    default = ROBOT_DEFAULTS["support_margin"]
    if not soles:
        return default
    half_length = min(sole.rectangle.x_max - sole.rectangle.x_min for sole in soles) / 2.0
    return float(min(default, round(SOLE_MARGIN_FRACTION * half_length, 4)))


def _missing_soles(urdf, robot, feet, given, package_dirs, first):
    """A :class:`Missing` entry for every foot whose sole can be neither found nor was given, not only the ``first``
    (the SoleNotFound that stopped the search)."""
    missing = []
    for link in feet:
        error = first if link == first.link else None
        if error is None and link not in given:
            try:
                find_sole(urdf, robot.model, robot.reference_q, link, package_dirs)
            except SoleNotFound as not_found:
                error = not_found
        if error is not None:
            missing.append(Missing(("sole_rectangles",), SOLE_OPTION.replace("LINK", link),
                                   f"link '{link}': {error.detail}"))
    return missing


def _stance(robot, flat, sole_links, legs, loops, given, missing):
    """(leg length [m], lowering [m], stance {joint: value}) of the robot; a stance that cannot be found is
    appended to ``missing``."""
    if given:
        return _leg_length(robot, sole_links, legs), 0.0, given
    if flat is None:
        missing.append(Missing(("stance_joints", "stance_positions"), STANCE_OPTION, "no stance without the soles"))
        return _leg_length(robot, sole_links, legs), 0.0, {}
    if flat.stance is not None:  # the feet lie flat only away from the reference: stand there, every joint given
        return flat.leg_length, flat.lowering, {joint: float(flat.stance[robot.joint_q_index(joint)])
                                                for joint in robot.joint_names}
    if loops is not None:  # a closed-chain robot stands in its loops file's reference (every loop closed there)
        return _leg_length(robot, sole_links, legs), 0.0, {}
    flat_soles = [(link, RestingFace(pin.SE3.Identity(), 0.0, False)) for link in sole_links]
    try:
        q, leg_length, lowering = standing_stance(robot, flat_soles, legs)
    except StanceNotFound as error:
        missing.append(Missing(("stance_joints", "stance_positions"), STANCE_OPTION, error.detail))
        return _leg_length(robot, sole_links, legs), 0.0, {}
    return leg_length, lowering, {joint: float(q[robot.joint_q_index(joint)]) for leg in legs for joint in leg}


def _leg_length(robot, sole_links, legs):
    """Hip to sole at the reference configuration [m]."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.reference_q)
    hip = data.oMi[robot.model.getJointId(legs[0][0])].translation[2]
    return float(hip - data.oMf[robot.frame_id(sole_links[0])].translation[2])


def _summary(out, urdf, output, robot, config, soles, sole_links, legs, candidates, flat, lowering, leg_length,
             line_feet, unresolved, stance_given):
    out(f"humanoid-balance init: {urdf} → {output}/")
    out(f"  mass {robot.total_mass:.1f} kg, leg length {leg_length:.3f} m")
    for foot, link, leg, k in zip(FOOT_NAMES, sole_links, legs, range(2)):
        if soles:
            sole, r = soles[k], soles[k].rectangle
            where = ("given by --sole" if sole.points == 0 else f"{sole.points} points of its "
                     + ("visual geometry (it has no collision geometry)" if sole.from_visual else "collision geometry")
                     + " on it")
            out(f"  {foot}: link {sole.foot_link}, sole frame {link} at {np.round(sole.placement.translation, 4)} m "
                f"in it, rectangle x [{r.x_min:+.3f}, {r.x_max:+.3f}] y [{r.y_min:+.3f}, {r.y_max:+.3f}] m ({where})")
            if sole.from_visual:
                out(f"  warning: link '{sole.foot_link}' has no collision geometry: its visual geometry stands in "
                    "for it, here and in the plant")
        else:
            out(f"  {foot}: sole frame {link} (MISSING: its place and rectangle)")
        out(f"    leg: {', '.join(leg)}")
    out("  limb candidates (J-busy: --limbs, busy_limbs; C-busy: --cartesian-limbs, cartesian_limbs): " + (", ".join(
        f"{n} ({len(j)} joints)" for n, (j, _) in candidates.items()) or "none"))
    if config.busy_limbs:
        out(f"  busy limbs (balance/<limb>/trajectory): {', '.join(config.busy_limbs)}")
    if config.cartesian_limbs:
        out(f"  cartesian limbs (balance/<limb>/pose): {', '.join(config.cartesian_limbs)}")
    if stance_given:
        out("  stance: as given by --stance")
    elif flat is not None and flat.stance is not None:
        out(f"  stance: feet laid flat (tilted {', '.join(f'{np.degrees(t):.0f}°' for t in flat.tilt)} in the "
            f"reference), soles {lowering * 1000:.0f} mm higher under the root, every loop closed")
    elif config.stance:
        out(f"  stance: knees bent, base {lowering * 1000:.0f} mm below straight legs")
    elif config.loops:
        out("  stance: the loops file's reference")
    if config.support_margin < ROBOT_DEFAULTS["support_margin"]:
        out(f"  support margin {config.support_margin * 1000:.0f} mm (short soles; default "
            f"{ROBOT_DEFAULTS['support_margin'] * 1000:.0f} mm)")
    out(f"  drive gains: position {config.drive_stiffness[1]:.0f} N·m/rad, {config.drive_stiffness[0]:.0f} N/m")
    if line_feet:
        out(f"  legs of five joints: line feet, free to roll on their line; wrench low-pass {LINE_FOOT_CUTOFF:.0f} Hz "
            f"(cutoff_frequency; default {ROBOT_DEFAULTS['cutoff_frequency']:g} Hz), since a line foot rocks from heel "
            "to toe within a slower one's lag")
    for path in unresolved:
        out(f"  warning: mesh {path} not found (give --package-dirs or set ROS_PACKAGE_PATH); the plant drops it")


def _write_config(path, config, limbs, source, missing):
    parameters = robot_config_parameters(config)
    for key in ("busy_limbs", "cartesian_limbs", "stance_joints"):
        parameters[key] = parameters[key] or [""]  # ROS 2 parameter files cannot hold an empty list
    parameters["stance_positions"] = parameters["stance_positions"] or [0.0]
    for limb, (joints, end) in limbs.items():
        if limb not in config.busy_limbs + config.cartesian_limbs:
            parameters[f"{limb}_joints"], parameters[f"{limb}_end_frame"] = list(joints), end
    body = yaml.safe_dump({"/**": {"ros__parameters": parameters}}, sort_keys=False, width=120,
                          default_flow_style=None)
    options = {}
    for entry in missing:
        for field in entry.fields:
            options[field] = f"{options[field]}; {entry.option}" if field in options else entry.option
    lines = body.splitlines()
    for k, line in enumerate(lines):
        field = line.strip().partition(":")[0]
        if line.startswith("    ") and field in options:
            lines[k] = f"{line}  # MISSING: {options[field]}"
    body = "\n".join(lines) + "\n"
    header = (f"# Robot configuration of {source}, written by humanoid-balance init; edit freely.\n"
              "# A ROS 2 parameter file for every node: --params-file robot.yaml, or robot:=<this folder> for the\n"
              "# launch files, --robot <this folder> for the demo. Files are named relative to this folder.\n"
              "# sole_rectangles: [x_min, x_max, y_min, y_max] per foot in its sole frame [m]. Limb candidates "
              "found: " + (", ".join(limbs) or "none") + ";\n# list the ones that follow joint trajectories in "
              "busy_limbs, and give <limb>_swing (offsets at mid-swing [rad]) for the demo's dance; list those whose\n"
              "# end follows target poses (balance/<limb>/pose, world frame) in cartesian_limbs.\n")
    if missing:
        header += "".join(f"# MISSING {', '.join(entry.fields)}: {entry.reason}; run init again with {entry.option}\n"
                          for entry in missing)
    path.write_text(header + body)
