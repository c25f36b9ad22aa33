"""A robot's configuration for the whole suite: its files, feet, soles, legs, limbs, stance and drive gains.

One YAML file holds it, written by ``humanoid-balance init`` (or by hand) as a ROS 2 parameter file whose
parameters apply to every node (``/**: ros__parameters:``); the nodes, the demo, the bench and the launch files
read the same file. File paths are relative to the file (what ``init`` writes: the folder can be copied), absolute
or ``package://<package>/...``; a node reads them as they are, so whoever passes the file to a node passes
:func:`robot_file_parameters` after it (the launch files, the demo and the bench do). Names of joints, frames and
limbs live only there, never in code. Units: SI (m, rad, N/m, N·m/rad).

    urdf_file, loops_file          the spanning tree and its loop closures ('' for a serial robot)
    feet                           foot names (topics contact/<foot>/...), one per sole
    soles                          sole frames (z up out of the ground, origin on the contact surface)
    sole_rectangles                [x_min, x_max, y_min, y_max] per foot, in the sole frame [m] (flat list; [] =
                                   from the feet's collision boxes)
    <foot>_joints                  serial-equivalent leg joints, hip to ankle
    busy_limbs                     J-busy limbs (follow balance/<limb>/trajectory); candidates in limb_candidates
    cartesian_limbs                C-busy limbs (their end frames follow balance/<limb>/pose; the centroidal_balancer's
                                   parameter)
    <limb>_joints, <limb>_end_frame  of each busy limb; <limb>_swing (J-busy: the demo's arm motion, joint offsets at
                                   mid-swing [rad])
    stance_joints, stance_positions  the standing configuration the plant starts in [rad, m]
    base_frame, imu_frame          root link (REP-105 base_link) and IMU frame ('' = root)
    drive_stiffness, drive_damping  the plant's position drives, [prismatic, revolute]
    impedance_stiffness, impedance_damping  joint impedance of the serial-equivalent outputs, [prismatic, revolute];
                                   the mapper maps it onto the actuators (torque-controlled robots, momentum mode)
    cutoff_frequency               the contact estimate's wrench low-pass [Hz] (the contact_estimator's parameter;
                                   default 5, Kangaroo paper section VI-B)
    k_p, k_c                       the balancer's ZMP and CoM gains [1/s] (Choi–Kim eq. 24; the centroidal_balancer's
                                   parameters): a larger k_p lets the CoM move to hold the ZMP
    support_margin                 the CoM reference stays this far inside the support polygon [m] (the
                                   centroidal_balancer's parameter; init scales it to the soles' length)
"""
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import yaml

from humanoid_balance.model.errors import ModelFileError
from humanoid_balance.model.soles import SoleRectangle
from humanoid_balance.resources import resolve_uri

__all__ = ["RobotConfig", "RobotParameter", "ROBOT_SCHEMA", "ROBOT_DEFAULTS", "FOOT_PARAMETERS", "LIMB_PARAMETERS",
           "robot_parameter", "load_robot_config", "robot_config_parameters", "config_from_parameters",
           "check_robot_config", "robot_file_parameters", "FILE_KEYS"]

FILE_KEYS = ("urdf_file", "loops_file")
TEXT, NAMES, NUMBERS, GAINS, POSITIVE = "text", "names", "numbers", "gains", "positive"  # RobotParameter kinds


class RobotParameter(NamedTuple):
    """One parameter of a robot's configuration file, as the nodes declare it."""

    name: str
    kind: str             # TEXT; NAMES, NUMBERS (lists); GAINS ([prismatic, revolute], ≥ 0); POSITIVE (a number > 0)
    default: object
    description: str
    every_node: bool = True  # declared by every node; False: by the node that uses it (its own parameter)


ROBOT_SCHEMA = (
    RobotParameter("urdf_file", TEXT, "", "URDF of the spanning tree"),
    RobotParameter("loops_file", TEXT, "", "loop-closure YAML ('' for a serial robot)"),
    RobotParameter("feet", NAMES, (), "foot names (topics contact/<foot>/...)"),
    RobotParameter("soles", NAMES, (), "sole frames, one per foot"),
    RobotParameter("sole_rectangles", NUMBERS, (),
                   "[x_min, x_max, y_min, y_max] per foot in the sole frame [m] ([] = from collision boxes)"),
    RobotParameter("busy_limbs", NAMES, (), "J-busy limbs following balance/<limb>/trajectory"),
    RobotParameter("cartesian_limbs", NAMES, (), "C-busy limbs following balance/<limb>/pose (set <limb>_joints, "
                   "<limb>_end_frame)", False),
    RobotParameter("stance_joints", NAMES, (), "joints of the standing configuration"),
    RobotParameter("stance_positions", NUMBERS, (), "their values [rad, m]"),
    RobotParameter("base_frame", TEXT, "", "root link (REP-105 base_link; '' = the URDF's root)"),
    RobotParameter("imu_frame", TEXT, "", "IMU frame ('' = root link)"),
    RobotParameter("drive_stiffness", GAINS, (2e5, 1e4), "plant position drives [N/m, N·m/rad] (prismatic, revolute)"),
    RobotParameter("drive_damping", GAINS, (2e3, 100.0),
                   "plant position drives [N·s/m, N·m·s/rad] (prismatic, revolute)"),
    RobotParameter("impedance_stiffness", GAINS, (2e4, 50.0),
                   "joint impedance of the serial-equivalent outputs [N/m, N·m/rad] (prismatic, revolute); "
                   "loop_closure_mapper maps it onto the actuators"),
    RobotParameter("impedance_damping", GAINS, (200.0, 3.0),
                   "joint impedance of the outputs [N·s/m, N·m·s/rad] (prismatic, revolute)"),
    RobotParameter("cutoff_frequency", POSITIVE, 7.5,
                   "Butterworth low-pass cutoff on the wrenches [Hz] (Kangaroo paper section VI-B: 5 Hz, at 1 kHz; "
                   "through the nodes at 100 Hz its lag rocked a standing robot for 10 s)", False),
    RobotParameter("k_p", POSITIVE, 2.0, "ZMP gain k_p [1/s], 0 < k_p < ω_n and k_p·k_c < ω_n² (Choi–Kim eqs. 25, 31); "
                   "tuned with k_c on kangaroo_like", False),
    RobotParameter("k_c", POSITIVE, 5.0, "CoM gain k_c [1/s], k_c > ω_n = √(g / CoM height) (Choi–Kim eq. 25)", False),
    RobotParameter("support_margin", POSITIVE, 0.04,
                   "the CoM reference stays this far inside the support polygon's edges [m] (for soles of 0.2 m and "
                   "more; init scales it to shorter soles)", False),
)
"""The robot configuration's parameters, written once: RobotConfig's defaults, the flat parameters of a robot file
and what the nodes declare (nodes.parameters) derive from it."""
FOOT_PARAMETERS = (RobotParameter("{}_joints", NAMES, (), "serial-equivalent leg joints, hip to ankle"),)
LIMB_PARAMETERS = (RobotParameter("{}_joints", NAMES, (), "joints of a J-busy limb"),
                   RobotParameter("{}_end_frame", TEXT, "", "end frame of a J-busy limb"),
                   RobotParameter("{}_swing", NUMBERS, (), "the demo's swing: offsets at mid-swing [rad]"))
"""The parameters of each foot and of each busy limb, their name formatted with the foot's or the limb's."""
ROBOT_DEFAULTS = {parameter.name: parameter.default for parameter in ROBOT_SCHEMA}


def robot_parameter(name):
    """The RobotParameter ``name`` of :data:`ROBOT_SCHEMA`."""
    return next(parameter for parameter in ROBOT_SCHEMA if parameter.name == name)


@dataclass(frozen=True)
class RobotConfig:
    """What the suite needs to know about a robot beyond its URDF and loops (see the module docstring)."""

    urdf_file: str
    loops_file: str = ""
    feet: tuple = ()
    soles: tuple = ()
    sole_rectangles: tuple = ()        # SoleRectangle per foot, or () to read them from collision boxes
    leg_joints: dict = field(default_factory=dict)   # foot → joints, hip to ankle
    busy_limbs: tuple = ()
    cartesian_limbs: tuple = ()
    limb_joints: dict = field(default_factory=dict)  # limb → joints, of the busy and cartesian limbs
    limb_end_frames: dict = field(default_factory=dict)
    limb_swing: dict = field(default_factory=dict)   # limb → joint offsets at mid-swing [rad]
    stance: dict = field(default_factory=dict)       # joint → standing value [rad, m]
    base_frame: str = ""
    imu_frame: str = ""
    drive_stiffness: tuple = ROBOT_DEFAULTS["drive_stiffness"]
    drive_damping: tuple = ROBOT_DEFAULTS["drive_damping"]
    impedance_stiffness: tuple = ROBOT_DEFAULTS["impedance_stiffness"]
    impedance_damping: tuple = ROBOT_DEFAULTS["impedance_damping"]
    cutoff_frequency: float = ROBOT_DEFAULTS["cutoff_frequency"]
    k_p: float = ROBOT_DEFAULTS["k_p"]
    k_c: float = ROBOT_DEFAULTS["k_c"]
    support_margin: float = ROBOT_DEFAULTS["support_margin"]

    @property
    def loops(self):
        """The loop-closure file, or None for a serial robot."""
        return self.loops_file or None

    def rectangle(self, foot_index):
        return self.sole_rectangles[foot_index] if self.sole_rectangles else None


def robot_config_parameters(config):
    """The configuration as flat ROS 2 parameters (names → str, float, lists)."""
    values = {"urdf_file": str(config.urdf_file), "loops_file": str(config.loops_file or ""),
              "feet": list(config.feet), "soles": list(config.soles),
              "sole_rectangles": [float(v) for r in config.sole_rectangles for v in r],
              "busy_limbs": list(config.busy_limbs), "cartesian_limbs": list(config.cartesian_limbs),
              "stance_joints": list(config.stance),
              "stance_positions": [float(v) for v in config.stance.values()],
              "base_frame": config.base_frame, "imu_frame": config.imu_frame}
    for foot in config.feet:
        values[f"{foot}_joints"] = list(config.leg_joints.get(foot, ()))
    for limb in (*config.busy_limbs, *config.cartesian_limbs):
        values[f"{limb}_joints"] = list(config.limb_joints.get(limb, ()))
        values[f"{limb}_end_frame"] = config.limb_end_frames.get(limb, "")
        if limb in config.limb_swing:
            values[f"{limb}_swing"] = [float(v) for v in config.limb_swing[limb]]
    for parameter in ROBOT_SCHEMA:
        if parameter.kind == GAINS:
            values[parameter.name] = [float(v) for v in getattr(config, parameter.name)]
        elif parameter.kind == POSITIVE:
            values[parameter.name] = float(getattr(config, parameter.name))
    return values


def config_from_parameters(value, source="parameters"):
    """A :class:`RobotConfig` from flat parameters; ``value(name, default)`` reads one (a dict's ``get`` or a ROS
    node's parameter lookup). ``source`` names where they came from, for errors."""
    def strings(name, default=()):
        return tuple(str(v) for v in (value(name, default) or ()) if str(v))

    def pair(name):
        gains = tuple(float(v) for v in value(name, ROBOT_DEFAULTS[name]))
        if len(gains) != 2 or min(gains) < 0.0:
            raise ModelFileError(source, name, f"give [prismatic, revolute], both ≥ 0; got {list(gains)}")
        return gains

    feet, soles = strings("feet"), strings("soles")
    if not feet:
        raise ModelFileError(source, "feet", "no foot names given")
    if len(soles) != len(feet):
        raise ModelFileError(source, "soles", f"{len(soles)} sole frames for {len(feet)} feet {list(feet)}")
    flat = [float(v) for v in (value("sole_rectangles", ()) or ())]
    if flat and len(flat) != 4 * len(feet):
        raise ModelFileError(source, "sole_rectangles", f"{len(flat)} values; give [x_min, x_max, y_min, y_max] "
                             f"per foot, {4 * len(feet)} in all, or [] to read them from the collision boxes")
    rectangles = tuple(SoleRectangle(*flat[4 * k:4 * k + 4]) for k in range(len(flat) // 4))
    for foot, rectangle in zip(feet, rectangles):
        if rectangle.x_min >= rectangle.x_max or rectangle.y_min >= rectangle.y_max:
            raise ModelFileError(source, "sole_rectangles", f"foot '{foot}': {list(rectangle)} is empty "
                                 "(x_min < x_max and y_min < y_max)")
    limbs, cartesian = strings("busy_limbs"), strings("cartesian_limbs")
    stance_joints = strings("stance_joints")
    stance_positions = [float(v) for v in (value("stance_positions", ()) or ())][:len(stance_joints)]
    if len(stance_positions) != len(stance_joints):
        raise ModelFileError(source, "stance_positions", f"{len(stance_positions)} values for "
                             f"{len(stance_joints)} stance_joints")

    def positive(name):
        try:
            number = float(value(name, ROBOT_DEFAULTS[name]))
        except (TypeError, ValueError):
            number = float("nan")
        if not number > 0.0:
            raise ModelFileError(source, name, f"{value(name, None)!r}; give a positive number")
        return number

    scalars = {parameter.name: (pair if parameter.kind == GAINS else positive)(parameter.name)
               for parameter in ROBOT_SCHEMA if parameter.kind in (GAINS, POSITIVE)}
    return RobotConfig(
        urdf_file=resolve_uri(value("urdf_file", "")), loops_file=resolve_uri(value("loops_file", "") or ""),
        feet=feet, soles=soles, sole_rectangles=rectangles,
        leg_joints={foot: strings(f"{foot}_joints") for foot in feet},
        busy_limbs=limbs, cartesian_limbs=cartesian,
        limb_joints={limb: strings(f"{limb}_joints") for limb in (*limbs, *cartesian)},
        limb_end_frames={limb: str(value(f"{limb}_end_frame", "")) for limb in (*limbs, *cartesian)},
        limb_swing={limb: tuple(float(v) for v in value(f"{limb}_swing", ())) for limb in limbs
                    if value(f"{limb}_swing", ())},
        stance=dict(zip(stance_joints, stance_positions)),
        base_frame=str(value("base_frame", "")), imu_frame=str(value("imu_frame", "")), **scalars)


def load_robot_config(path):
    """Read a robot configuration file (a ROS 2 parameter file; the ``/**`` section, else the only section).

    Raises:
        ModelFileError: the file is missing or malformed, naming the file and the field.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "robot.yaml"
    if not path.is_file():
        raise ModelFileError(path, None, "no such robot configuration (humanoid-balance init writes one)")
    try:
        document = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise ModelFileError(path, None, f"not valid YAML: {str(error).splitlines()[0]}") from None
    sections = document if isinstance(document, dict) else {}
    section = sections.get("/**") or (next(iter(sections.values())) if len(sections) == 1 else None)
    parameters = section.get("ros__parameters") if isinstance(section, dict) else None
    if not isinstance(parameters, dict):
        raise ModelFileError(path, "/**", "expected a ROS 2 parameter file: '/**: {ros__parameters: {...}}'")
    parameters = dict(parameters)
    for key in FILE_KEYS:
        if parameters.get(key) and not str(parameters[key]).startswith("package://"):
            parameters[key] = str((path.parent / parameters[key]).resolve())
    if not parameters.get("urdf_file"):
        raise ModelFileError(path, "urdf_file", "missing")
    return config_from_parameters(parameters.get, str(path))


def robot_file_parameters(path):
    """The robot configuration file ``path``'s files as absolute paths, to pass after it: a folder written by
    ``init`` names its files relative to itself, which a node reading the parameter file cannot resolve.

    Raises:
        ModelFileError: as :func:`load_robot_config`.
    """
    config = load_robot_config(path)
    return {key: str(getattr(config, key)) for key in FILE_KEYS if getattr(config, key)}


def _closest(name, candidates):
    close = difflib.get_close_matches(name, list(candidates), n=3)
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""


def check_robot_config(config, robot, source="robot configuration"):
    """Check every name of ``config`` against the loaded ``robot`` (a RobotModel).

    Raises:
        ModelFileError: naming the field, the unknown name and the closest valid ones.
    """
    frames = [frame.name for frame in robot.model.frames]
    outputs = robot.output_names

    def need(names, valid, entry, kind):
        for name in names:
            if name not in valid:
                raise ModelFileError(source, entry, f"'{name}' is not a {kind} of {Path(robot.urdf_path).name}"
                                     + _closest(name, valid))

    need(config.soles, frames, "soles", "frame")
    for frame_key in ("base_frame", "imu_frame"):
        need([getattr(config, frame_key)] if getattr(config, frame_key) else [], frames, frame_key, "frame")
    for foot in config.feet:
        joints = config.leg_joints.get(foot, ())
        if not joints:
            raise ModelFileError(source, f"{foot}_joints", "missing: list the leg's joints, hip to ankle")
        need(joints, outputs, f"{foot}_joints", "serial-equivalent output joint")
    both = sorted(set(config.busy_limbs) & set(config.cartesian_limbs))
    if both:
        raise ModelFileError(source, "cartesian_limbs", f"{both} in busy_limbs too: a limb follows joint trajectories "
                             "or poses, not both")
    for limb in (*config.busy_limbs, *config.cartesian_limbs):
        if not config.limb_joints.get(limb):
            raise ModelFileError(source, f"{limb}_joints", "missing: list the limb's joints, root to end")
        need(config.limb_joints.get(limb, ()), outputs, f"{limb}_joints", "serial-equivalent output joint")
        need([config.limb_end_frames.get(limb, "")], frames, f"{limb}_end_frame", "frame")
        swing = config.limb_swing.get(limb)
        if swing is not None and len(swing) != len(config.limb_joints[limb]):
            raise ModelFileError(source, f"{limb}_swing", f"{len(swing)} values for "
                                 f"{len(config.limb_joints[limb])} joints")
    need(config.stance, robot.joint_names, "stance_joints", "joint")
