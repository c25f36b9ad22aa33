"""Import an SDF model with closed chains as the suite's robot files: a URDF spanning tree and the loop-closure
YAML of DESIGN.md.

SDF may close kinematic loops (a link reached by two joints); URDF cannot. :func:`import_sdf`

- reads the model's links, joints and frames with their poses at the assembly configuration (every joint at 0,
  the poses written in the SDF) in the model frame;
- keeps a spanning tree from the root link, preferring 1-DOF and fixed joints in their SDF direction, and cuts
  the remaining joints (ball joints first). Each cut becomes a loop between two frames added on both sides of
  the cut joint (``<joint>_cut_a`` on its SDF parent, ``<joint>_cut_b`` on its SDF child) that coincide at the
  assembly pose, so the URDF zero configuration closes every loop;
- locks spring joints (SDF ``spring_stiffness`` > 0) at their assembly angle, since a loop cannot determine a
  compliant joint (``keep_springs`` keeps them as joints, to be listed as actuated);
- constrains, per loop, the directions the cut joint fixes (ball: x y z; revolute: all but rz about its axis;
  prismatic: all but z along it; fixed: all six) minus those the mechanism satisfies identically (planar
  loops), found by a rank test on closed configurations near the assembly pose;
- chooses actuated joints, outputs, measured passive joints and a reference configuration where every loop is
  closed, then loads the result with :func:`~humanoid_balance.model.robot.load_robot` to check it;
- reports what it changed and the problems it found (limits excluding the assembly pose, near-singular loops,
  missing inertials, unresolved meshes).

No ROS. Units: m, rad, kg, kg·m², N, N·m, s.
"""
import difflib
import itertools
import math
import re
import shutil
import tempfile
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin
import yaml

from humanoid_balance.model.closed_chain import ClosedChain
from humanoid_balance.model.errors import ClosureError, ModelFileError, SingularConfigurationError
from humanoid_balance.model.robot import load_robot
from humanoid_balance.resources import find_file

__all__ = ["SdfImportError", "SdfModel", "SdfJoint", "SdfLink", "ImportedLoop", "SdfImport", "is_sdf",
           "parse_sdf", "import_sdf"]

MOVABLE = ("revolute", "continuous", "prismatic")
SUPPORTED = MOVABLE + ("fixed", "ball")
UNBOUNDED = 1e15          # |limit| at or above this is SDF's "no limit" (its default is ±1e16)
UNLIMITED_RANGE = {"revolute": math.pi, "prismatic": 1.0}  # written for joints without limits [rad, m]
NO_LIMIT = 1e9            # effort [N, N·m] / velocity [rad/s, m/s] written when the SDF gives none
NEAR_SINGULAR = 100.0     # cond of a loop's constraint Jacobian above which it is reported (the mapper refuses 200)
RANK_TOLERANCE = 1e-8     # singular values below this fraction of the largest count as zero
NOMINAL_AXES = {"ball": ("x", "y", "z"), "revolute": ("x", "y", "z", "rx", "ry"),
                "prismatic": ("x", "y", "rx", "ry", "rz"), "fixed": ("x", "y", "z", "rx", "ry", "rz")}
AXIS_ROWS = {"x": 0, "y": 1, "z": 2, "rx": 3, "ry": 4, "rz": 5}
LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
RESOURCE_PATH_VARIABLES = ("GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "GAZEBO_MODEL_PATH", "SDF_PATH",
                           "ROS_PACKAGE_PATH")  # where model:// and package:// meshes are looked up


class SdfImportError(ModelFileError):
    """The SDF file cannot be imported; the message names the file, the element and what is wrong."""


# -- SDF reading --------------------------------------------------------------------------------------------------

@dataclass
class Shape:
    """A visual or collision geometry of a link: ``kind`` box/sphere/cylinder/mesh, its SDF pose in the link frame,
    sizes [m] and, for meshes, the resolved file (None if not found) and scale."""

    kind: str
    pose: pin.SE3
    size: tuple = ()
    filename: str = None
    uri: str = ""
    scale: tuple = (1.0, 1.0, 1.0)
    rgba: tuple = None


@dataclass
class SdfLink:
    """A link at the assembly pose: its frame in the model frame, mass [kg], inertial frame (in the link frame)
    and rotational inertia about the CoM in that frame [kg·m²]."""

    name: str
    pose: pin.SE3
    mass: float = 1.0
    inertial_pose: pin.SE3 = field(default_factory=pin.SE3.Identity)
    inertia: np.ndarray = field(default_factory=lambda: np.eye(3))
    has_inertial: bool = False
    visuals: list = field(default_factory=list)
    collisions: list = field(default_factory=list)


@dataclass
class SdfJoint:
    """A joint at the assembly pose: its frame and unit axis in the model frame; limits [rad or m], effort
    [N·m or N] and velocity limits (None: none given), damping, friction, spring stiffness and reference."""

    name: str
    kind: str
    parent: str
    child: str
    pose: pin.SE3
    axis: np.ndarray = None
    lower: float = None
    upper: float = None
    effort: float = None
    velocity: float = None
    damping: float = 0.0
    friction: float = 0.0
    stiffness: float = 0.0
    spring_reference: float = 0.0
    index: int = 0

    @property
    def is_spring(self):
        return self.kind in MOVABLE and self.stiffness > 0.0

    @property
    def has_limits(self):
        return self.lower is not None and self.upper is not None


@dataclass
class SdfModel:
    """What the importer reads from one SDF ``<model>``."""

    path: str
    version: str
    name: str
    links: dict
    joints: list
    frames: dict            # explicit <frame>: name -> (link it is attached to, pose in the model frame)
    root: str
    dropped: list           # joints to the world, dropped (the suite gives the root a floating base)
    notes: list             # problems found while reading (missing inertials, skipped geometry...)


def _error(path, entry, detail):
    return SdfImportError(path, entry, detail)


def is_sdf(path):
    """Whether ``path`` looks like an SDF file (``.sdf`` suffix or an ``<sdf`` root element in its first 4 kB)."""
    path = Path(path)
    if path.suffix.lower() == ".sdf":
        return True
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    head = re.sub(r"<!--.*?-->", "", re.sub(r"<\?.*?\?>", "", head, flags=re.S), flags=re.S)
    return re.match(r"\s*<sdf[\s>]", head) is not None


def _floats(text, count, path, where):
    try:
        values = [float(x) for x in (text or "").split()]
    except ValueError:
        raise _error(path, where, f"expected {count} numbers, got {text!r}") from None
    if len(values) != count:
        raise _error(path, where, f"expected {count} numbers, got {text!r}")
    return values


def _rpy(roll, pitch, yaw):
    return pin.rpy.rpyToMatrix(roll, pitch, yaw)


def _pose_value(element, path, where):
    """SE3 of a ``<pose>`` element: ``x y z roll pitch yaw`` (radians, or degrees with degrees="true"), or
    ``x y z qx qy qz qw`` with rotation_format="quat_xyzw" (SDF 1.9)."""
    if element is None:
        return pin.SE3.Identity()
    text = element.text or ""
    if element.get("rotation_format", "euler_rpy") == "quat_xyzw":
        x, y, z, qx, qy, qz, qw = _floats(text, 7, path, where)
        quaternion = pin.Quaternion(qw, qx, qy, qz)
        quaternion.normalize()
        return pin.SE3(quaternion.matrix(), np.array([x, y, z]))
    if not text.split():
        return pin.SE3.Identity()
    x, y, z, roll, pitch, yaw = _floats(text, 6, path, where)
    if element.get("degrees", "false").strip().lower() in ("true", "1"):
        roll, pitch, yaw = np.radians([roll, pitch, yaw])
    return pin.SE3(_rpy(roll, pitch, yaw), np.array([x, y, z]))


def _relative_to(element):
    """The frame a ``<pose>`` is written in: ``relative_to`` (SDF ≥ 1.7) or ``frame`` (SDF 1.5–1.6); "": default."""
    if element is None:
        return ""
    return (element.get("relative_to") or element.get("frame") or "").strip()


def _number(element, tag, default=None):
    child = element.find(tag) if element is not None else None
    if child is None or child.text is None or not child.text.strip():
        return default
    try:
        return float(child.text)
    except ValueError:
        raise ValueError(f"<{tag}> is not a number: {child.text.strip()!r}") from None


class _PoseGraph:
    """Resolves SDF poses (``relative_to``/``frame``, defaults per element kind) to the model frame."""

    def __init__(self, path, model):
        self.path = path
        self.elements = {}
        for kind in ("link", "joint", "frame"):
            for element in model.findall(kind):
                name = element.get("name")
                if not name:
                    raise _error(path, f"<{kind}>", "has no name")
                if name in self.elements:
                    raise _error(path, f"<{kind} name='{name}'>", "the name is used twice in the model")
                self.elements[name] = (kind, element)
        self.cache = {"": pin.SE3.Identity(), "__model__": pin.SE3.Identity(), "world": pin.SE3.Identity()}
        self.active = set()

    def default_base(self, kind, element):
        if kind == "joint":
            return (element.findtext("child") or "").strip()
        if kind == "frame":
            return (element.get("attached_to") or "").strip()
        return ""

    def world(self, name):
        """Pose of the named link, joint or frame in the model frame at the assembly pose."""
        if name in self.cache:
            return self.cache[name]
        if name not in self.elements:
            raise _error(self.path, f"pose relative to '{name}'", "no link, joint or frame has this name")
        if name in self.active:
            raise _error(self.path, f"pose of '{name}'", "the poses refer to each other in a cycle")
        self.active.add(name)
        kind, element = self.elements[name]
        pose_element = element.find("pose")
        base = _relative_to(pose_element) or self.default_base(kind, element)
        placement = self.world(base) * _pose_value(pose_element, self.path, f"<{kind} name='{name}'> <pose>")
        self.active.discard(name)
        self.cache[name] = placement
        return placement


def _resolve_uri(uri, sdf_path, package_dirs):
    """The file of a mesh URI (``model://``, ``package://``, ``file://``, absolute or relative to the SDF), looked
    up in ``package_dirs``, the SDF's ancestor folders and GZ_SIM_RESOURCE_PATH / IGN_GAZEBO_RESOURCE_PATH /
    GAZEBO_MODEL_PATH / SDF_PATH / ROS_PACKAGE_PATH; None if it is nowhere."""
    found = find_file(uri, sdf_path, [*package_dirs, *Path(sdf_path).resolve().parents], RESOURCE_PATH_VARIABLES)
    return None if found is None else str(found)


def _shapes(link_element, tag, link_name, path, package_dirs, notes):
    shapes = []
    for element in link_element.findall(tag):
        where = f"<link name='{link_name}'> <{tag} name='{element.get('name', '')}'>"
        pose = _pose_value(element.find("pose"), path, where)
        if _relative_to(element.find("pose")) not in ("", link_name):
            notes.append(f"{where}: pose relative to '{_relative_to(element.find('pose'))}' read as relative to the "
                         "link")
        geometry = element.find("geometry")
        if geometry is None or not len(geometry):
            continue
        shape = geometry[0]
        rgba = None
        for colour in ("material/diffuse", "material/ambient"):
            if element.find(colour) is not None:
                values = _floats(element.findtext(colour), len(element.findtext(colour).split()), path, where)
                rgba = tuple(values + [1.0] * (4 - len(values)))[:4]
                break
        if shape.tag == "box":
            shapes.append(Shape("box", pose, tuple(_floats(shape.findtext("size"), 3, path, where)), rgba=rgba))
        elif shape.tag == "sphere":
            shapes.append(Shape("sphere", pose, (_number(shape, "radius", 1.0),), rgba=rgba))
        elif shape.tag == "cylinder":
            shapes.append(Shape("cylinder", pose, (_number(shape, "radius", 1.0), _number(shape, "length", 1.0)),
                                rgba=rgba))
        elif shape.tag == "mesh":
            uri = (shape.findtext("uri") or "").strip()
            scale = tuple(_floats(shape.findtext("scale"), 3, path, where)) if shape.find("scale") is not None \
                else (1.0, 1.0, 1.0)
            filename = _resolve_uri(uri, path, package_dirs)
            if filename is None:
                notes.append(f"{where}: mesh '{uri}' not found (give --package-dirs); written as it is")
            shapes.append(Shape("mesh", pose, filename=filename, uri=uri, scale=scale, rgba=rgba))
        else:
            notes.append(f"{where}: <{shape.tag}> geometry has no URDF equivalent; left out")
    return shapes


def _parse_link(element, pose, path, package_dirs, notes):
    name = element.get("name")
    link = SdfLink(name, pose)
    inertial = element.find("inertial")
    if inertial is None:
        notes.append(f"link '{name}' has no <inertial>: written with SDF's default 1 kg and 1 kg·m² about its origin")
    else:
        link.has_inertial = True
        link.mass = _number(inertial, "mass", 1.0)
        link.inertial_pose = _pose_value(inertial.find("pose"), path, f"<link name='{name}'> <inertial> <pose>")
        tensor = inertial.find("inertia")
        get = (lambda tag, default: _number(tensor, tag, default)) if tensor is not None else \
            (lambda tag, default: default)
        ixx, iyy, izz = get("ixx", 1.0), get("iyy", 1.0), get("izz", 1.0)
        ixy, ixz, iyz = get("ixy", 0.0), get("ixz", 0.0), get("iyz", 0.0)
        link.inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        if not link.mass > 0.0:
            notes.append(f"link '{name}' has mass {link.mass} kg")
    link.visuals = _shapes(element, "visual", name, path, package_dirs, notes)
    link.collisions = _shapes(element, "collision", name, path, package_dirs, notes)
    return link


def _axis(joint_element, poses, joint_pose, version, path, where):
    """Unit axis of a joint in the model frame: SDF ≤ 1.6 writes it in the joint frame or, with
    use_parent_model_frame, in the model frame; SDF ≥ 1.7 in the frame named by xyz@expressed_in (default joint)."""
    axis = joint_element.find("axis")
    xyz = axis.find("xyz") if axis is not None else None
    if xyz is None:
        vector, frame = np.array([0.0, 0.0, 1.0]), joint_pose
    else:
        vector = np.array(_floats(xyz.text, 3, path, f"{where} <axis> <xyz>"))
        expressed_in = (xyz.get("expressed_in") or "").strip()
        use_parent = (axis.findtext("use_parent_model_frame") or "").strip().lower() in ("1", "true")
        if expressed_in:
            frame = poses.world(expressed_in)
        elif use_parent and _version_tuple(version) < (1, 7):
            frame = pin.SE3.Identity()
        else:
            frame = joint_pose
    norm = np.linalg.norm(vector)
    if not norm > 0.0:
        raise _error(path, f"{where} <axis> <xyz>", "is the zero vector")
    return frame.rotation @ (vector / norm)


def _version_tuple(version):
    try:
        return tuple(int(x) for x in version.split(".")[:2])
    except ValueError:
        return (1, 6)


def _parse_joint(element, index, poses, version, path):
    name = element.get("name")
    where = f"<joint name='{name}'>"
    kind = (element.get("type") or "").strip()
    if kind not in SUPPORTED:  # (universal, revolute2, screw, gearbox: not a 1-DOF joint or not kinematic)
        raise _error(path, where, f"type '{kind}' is not supported (supported: {', '.join(SUPPORTED)})")
    parent, child = (element.findtext("parent") or "").strip(), (element.findtext("child") or "").strip()
    if not parent or not child:
        raise _error(path, where, "needs a <parent> and a <child>")
    pose = poses.world(name)
    joint = SdfJoint(name, kind, parent, child, pose, index=index)
    if kind in MOVABLE:
        joint.axis = _axis(element, poses, pose, version, path, where)
        limit = element.find("axis/limit")
        lower, upper = _number(limit, "lower"), _number(limit, "upper")
        if kind != "continuous" and lower is not None and upper is not None and max(abs(lower), abs(upper)) < UNBOUNDED:
            if lower > upper:
                raise _error(path, f"{where} <limit>", f"lower {lower} is above upper {upper}")
            joint.lower, joint.upper = lower, upper
        effort, velocity = _number(limit, "effort"), _number(limit, "velocity")
        joint.effort = effort if effort is not None and effort >= 0.0 else None
        joint.velocity = velocity if velocity is not None and velocity >= 0.0 else None
        dynamics = element.find("axis/dynamics")
        joint.damping = _number(dynamics, "damping", 0.0)
        joint.friction = _number(dynamics, "friction", 0.0)
        joint.stiffness = _number(dynamics, "spring_stiffness", 0.0)
        joint.spring_reference = _number(dynamics, "spring_reference", 0.0)
    return joint


def parse_sdf(path, package_dirs=()):
    """Read the first ``<model>`` of an SDF file (directly under ``<sdf>`` or in a ``<world>``).

    Raises:
        SdfImportError: one line naming the file and what is wrong (not XML, not SDF, no model, unsupported
            joint type, inconsistent poses).
    """
    path = Path(path)
    if not path.is_file():
        raise _error(path, None, "no such file" if not path.exists() else "is not a file")
    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as error:
        raise _error(path, None, f"is not an XML file ({error})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise _error(path, None, f"cannot read: {error}") from None
    if root.tag != "sdf":
        hint = " (a URDF: check it with `humanoid-balance check-model`)" if root.tag == "robot" else ""
        raise _error(path, None, f"is not SDF: its root element is <{root.tag}>{hint}, not <sdf>")
    version = root.get("version", "1.6")
    models = root.findall("model") + root.findall("world/model")
    if not models:
        includes = root.findall(".//include")
        detail = " (only <include>s, which the importer does not follow)" if includes else ""
        raise _error(path, None, f"has no <model>{detail}")
    model = models[0]
    notes = []
    if len(models) > 1:
        notes.append(f"the file has {len(models)} models; imported the first, '{model.get('name')}'")
    if model.find("model") is not None or model.find("include") is not None:
        raise _error(path, f"<model name='{model.get('name')}'>", "nested models and <include> are not supported")
    try:
        return _parse_model(path, model, version, package_dirs, notes)
    except ValueError as error:
        raise _error(path, f"<model name='{model.get('name')}'>", str(error)) from None


def _parse_model(path, model, version, package_dirs, notes):
    name = model.get("name") or path.stem
    poses = _PoseGraph(path, model)
    links = {}
    for element in model.findall("link"):
        links[element.get("name")] = _parse_link(element, poses.world(element.get("name")), path, package_dirs, notes)
    if not links:
        raise _error(path, f"<model name='{name}'>", "has no <link>")
    joints, dropped = [], []
    for index, element in enumerate(model.findall("joint")):
        joint = _parse_joint(element, index, poses, version, path)
        for end in (joint.parent, joint.child):
            if end != "world" and end not in links:
                raise _error(path, f"<joint name='{joint.name}'>", f"'{end}' is not a link of the model")
        if "world" in (joint.parent, joint.child):
            dropped.append(joint)
        else:
            joints.append(joint)
    frames = {}
    for element in model.findall("frame"):
        frame_name = element.get("name")
        attached = (element.get("attached_to") or "").strip()
        seen = set()
        while attached in poses.elements and poses.elements[attached][0] != "link" and attached not in seen:
            seen.add(attached)
            kind, target = poses.elements[attached]
            attached = (target.findtext("child") if kind == "joint" else target.get("attached_to") or "").strip()
        frames[frame_name] = (attached if attached in links else None, poses.world(frame_name))
    canonical = (model.get("canonical_link") or "").strip()
    children = {joint.child for joint in joints}
    if canonical in links:
        root_link = canonical
    elif dropped:
        root_link = next(j.child if j.parent == "world" else j.parent for j in dropped)
    else:
        root_link = next((link for link in links if link not in children), next(iter(links)))
    for frame_name, (attached, _) in list(frames.items()):
        if attached is None:
            frames[frame_name] = (root_link, frames[frame_name][1])
    return SdfModel(str(path), version, name, links, joints, frames, root_link, dropped, notes)


# -- spanning tree and URDF -------------------------------------------------------------------------------------

@dataclass
class _TreeJoint:
    joint: SdfJoint
    parent: str          # tree parent link
    child: str           # tree child link
    reversed: bool       # the SDF parent is the tree child
    locked: bool = False  # a spring joint written as fixed

    @property
    def kind(self):
        return "fixed" if self.locked else self.joint.kind

    @property
    def movable(self):
        return self.kind in MOVABLE


def _spanning_tree(model):
    """Tree joints from the root (Prim's order: fixed and 1-DOF joints before ball joints, SDF direction before
    reversed, then file order) and the joints left out, which close the loops."""
    adjacency = {name: [] for name in model.links}
    for joint in model.joints:
        adjacency[joint.parent].append(joint)
        adjacency[joint.child].append(joint)
    visited, tree, heap = {model.root}, [], []

    def push(link):
        for joint in adjacency[link]:
            reverse = joint.child == link
            heap.append(((joint.kind == "ball", reverse, joint.index), joint, link))
        heap.sort(key=lambda item: item[0])

    push(model.root)
    used = set()
    while heap:
        _, joint, link = heap.pop(0)
        other = joint.parent if joint.child == link else joint.child
        if joint.name in used or other in visited:
            continue
        used.add(joint.name)
        visited.add(other)
        tree.append(_TreeJoint(joint, link, other, reversed=joint.child == link))
        push(other)
    unreachable = [name for name in model.links if name not in visited]
    if unreachable:
        raise _error(model.path, f"link '{unreachable[0]}'", f"is not connected to the root link '{model.root}' "
                     f"({len(unreachable)} such links)")
    cuts = [joint for joint in model.joints if joint.name not in used]
    for tree_joint in tree:
        if tree_joint.joint.kind == "ball":
            raise _error(model.path, f"<joint name='{tree_joint.joint.name}'>", "a ball joint must stay in the "
                         "spanning tree (it closes no loop); the suite supports 1-DOF joints only")
    return tree, cuts


def _cut_frame_rotation(joint):
    """Rotation of the frames added at a cut: the joint frame, turned so that z is the axis of a revolute or
    prismatic joint (the free direction is then rz or z)."""
    rotation = joint.pose.rotation
    if joint.axis is None:
        return rotation
    z = joint.axis / np.linalg.norm(joint.axis)
    for guess in (rotation[:, 0], rotation[:, 1], np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])):
        x = guess - z * (guess @ z)
        if np.linalg.norm(x) > 1e-6:
            x /= np.linalg.norm(x)
            return np.column_stack([x, np.cross(z, x), z])
    raise AssertionError("unreachable")


def _fmt(value):
    text = f"{value:.12g}"
    return "0" if text == "-0" else text


def _origin(parent, placement):
    rpy = pin.rpy.matrixToRpy(placement.rotation)
    return ElementTree.SubElement(parent, "origin", xyz=" ".join(_fmt(x) for x in placement.translation),
                                  rpy=" ".join(_fmt(x) for x in rpy))


def _add_shape(link_element, tag, shape, placement, index, link_name):
    element = ElementTree.SubElement(link_element, tag, name=f"{link_name}_{tag}_{index}")
    _origin(element, placement)
    geometry = ElementTree.SubElement(element, "geometry")
    if shape.kind == "box":
        ElementTree.SubElement(geometry, "box", size=" ".join(_fmt(x) for x in shape.size))
    elif shape.kind == "sphere":
        ElementTree.SubElement(geometry, "sphere", radius=_fmt(shape.size[0]))
    elif shape.kind == "cylinder":
        ElementTree.SubElement(geometry, "cylinder", radius=_fmt(shape.size[0]), length=_fmt(shape.size[1]))
    else:
        ElementTree.SubElement(geometry, "mesh", filename=shape.filename or shape.uri,
                               scale=" ".join(_fmt(x) for x in shape.scale))
    if tag == "visual" and shape.rgba is not None:
        material = ElementTree.SubElement(element, "material", name=f"{link_name}_material_{index}")
        ElementTree.SubElement(material, "color", rgba=" ".join(_fmt(x) for x in shape.rgba))


class _UrdfBuilder:
    """The URDF text of the spanning tree, with link frames and added frames, and what was changed doing so."""

    def __init__(self, model, tree, cuts, changes):
        self.model = model
        self.tree = tree
        self.cuts = cuts
        self.changes = changes
        self.frames = {model.root: model.links[model.root].pose}  # URDF link frame in the model frame
        self.names = set(model.links) | {j.name for j in model.joints} | {j.name for j in model.dropped}
        self.robot = ElementTree.Element("robot", name=model.name)
        self.cut_frames = {}   # cut joint -> (frame_a, frame_b)

    def unique(self, name):
        candidate, counter = name, 1
        while candidate in self.names:
            candidate, counter = f"{name}_{counter}", counter + 1
        self.names.add(candidate)
        return candidate

    def link_frames(self):
        for tree_joint in self.tree:
            link = self.model.links[tree_joint.child]
            frame = link.pose
            if tree_joint.kind in ("revolute", "continuous"):
                origin = tree_joint.joint.pose.translation
                offset = origin - link.pose.translation
                if np.linalg.norm(offset) > 1e-9:
                    distance = np.linalg.norm(offset)
                    self.changes.append(f"link '{link.name}': URDF frame origin moved {distance:.4g} m to "
                                        f"its joint '{tree_joint.joint.name}' (a URDF joint turns about its child's "
                                        "origin); inertial and geometry re-expressed")
                frame = pin.SE3(link.pose.rotation, origin.copy())
            self.frames[link.name] = frame

    def write_links(self):
        for name, link in self.model.links.items():
            element = ElementTree.SubElement(self.robot, "link", name=name)
            to_urdf = self.frames[name].inverse() * link.pose   # SDF link frame in the URDF link frame
            inertial = ElementTree.SubElement(element, "inertial")
            _origin(inertial, to_urdf * link.inertial_pose)
            ElementTree.SubElement(inertial, "mass", value=_fmt(link.mass))
            i = link.inertia
            ElementTree.SubElement(inertial, "inertia", ixx=_fmt(i[0, 0]), ixy=_fmt(i[0, 1]), ixz=_fmt(i[0, 2]),
                                   iyy=_fmt(i[1, 1]), iyz=_fmt(i[1, 2]), izz=_fmt(i[2, 2]))
            for tag, shapes in (("visual", link.visuals), ("collision", link.collisions)):
                for index, shape in enumerate(shapes):
                    _add_shape(element, tag, shape, to_urdf * shape.pose, index, name)

    def write_joints(self):
        for tree_joint in self.tree:
            joint = tree_joint.joint
            kind = tree_joint.kind
            urdf_kind = "revolute" if kind == "continuous" else kind
            element = ElementTree.SubElement(self.robot, "joint", name=joint.name, type=urdf_kind)
            ElementTree.SubElement(element, "parent", link=tree_joint.parent)
            ElementTree.SubElement(element, "child", link=tree_joint.child)
            _origin(element, self.frames[tree_joint.parent].inverse() * self.frames[tree_joint.child])
            if urdf_kind == "fixed":
                continue
            axis = self.frames[tree_joint.child].rotation.T @ joint.axis * (-1.0 if tree_joint.reversed else 1.0)
            ElementTree.SubElement(element, "axis", xyz=" ".join(_fmt(x) for x in axis))
            if joint.has_limits:
                lower, upper = joint.lower, joint.upper
            else:
                half = UNLIMITED_RANGE["prismatic" if urdf_kind == "prismatic" else "revolute"]
                lower, upper = -half, half
            ElementTree.SubElement(element, "limit", lower=_fmt(lower), upper=_fmt(upper),
                                   effort=_fmt(joint.effort if joint.effort is not None else NO_LIMIT),
                                   velocity=_fmt(joint.velocity if joint.velocity is not None else NO_LIMIT))
            if joint.damping or joint.friction:
                ElementTree.SubElement(element, "dynamics", damping=_fmt(joint.damping), friction=_fmt(joint.friction))

    def add_frame(self, name, link, placement, reason):
        """A massless link fixed to ``link`` at ``placement`` (model frame): a frame for pinocchio and the YAML."""
        name = self.unique(name)
        ElementTree.SubElement(self.robot, "link", name=name)
        element = ElementTree.SubElement(self.robot, "joint", name=self.unique(f"{name}_fixed"), type="fixed")
        ElementTree.SubElement(element, "parent", link=link)
        ElementTree.SubElement(element, "child", link=name)
        _origin(element, self.frames[link].inverse() * placement)
        self.changes.append(f"added frame '{name}' on link '{link}' ({reason})")
        return name

    def write_cut_frames(self):
        for joint in self.cuts:
            placement = pin.SE3(_cut_frame_rotation(joint), joint.pose.translation.copy())
            frame_a = self.add_frame(f"{joint.name}_cut_a", joint.parent, placement,
                                     f"frame_a of the loop cut at '{joint.name}', its SDF parent side")
            frame_b = self.add_frame(f"{joint.name}_cut_b", joint.child, placement,
                                     f"frame_b of the loop cut at '{joint.name}', its SDF child side")
            self.cut_frames[joint.name] = (frame_a, frame_b)

    def write_sdf_frames(self):
        for name, (link, placement) in self.model.frames.items():
            self.add_frame(name, link, placement, "an SDF <frame>")

    def text(self, source, loops_file):
        self.link_frames()
        self.write_links()
        self.write_joints()
        self.write_cut_frames()
        self.write_sdf_frames()
        ElementTree.indent(self.robot, space="  ")
        body = ElementTree.tostring(self.robot, encoding="unicode")
        return (f'<?xml version="1.0"?>\n<!-- Spanning tree of SDF model "{self.model.name}" from {source}, written by '
                f"humanoid-balance import-sdf; the loops it cuts are in {loops_file}. Units: m, rad, kg. -->\n"
                f"{body}\n")


# -- loop analysis ----------------------------------------------------------------------------------------------

class _LoopKinematics:
    """Loop errors and relative Jacobians on the pinocchio model of the URDF (fixed base), at the nominal axes,
    and the rank tests done on closed configurations near the assembly pose."""

    def __init__(self, urdf_text, frame_pairs):
        self.model = pin.buildModelFromXML(urdf_text)
        self.data = self.model.createData()
        self.joint_names = [self.model.names[j] for j in range(1, self.model.njoints)]
        self.index = {name: self.model.joints[j].idx_v for j, name in enumerate(self.model.names) if j > 0}
        self.pairs = [(self.model.getFrameId(a), self.model.getFrameId(b)) for a, b in frame_pairs]
        model = self.model
        self.support = np.zeros((len(self.pairs), model.nv), dtype=bool)  # joints moving one frame, not the other
        for row, (fa, fb) in enumerate(self.pairs):
            sides = [set(model.supports[model.frames[f].parentJoint][1:]) for f in (fa, fb)]
            for joint_id in sides[0] ^ sides[1]:
                self.support[row, model.joints[joint_id].idx_v] = True
        self.loop_columns = np.flatnonzero(self.support.any(axis=0))
        self.rows = np.zeros(0, dtype=int)
        self.jacobians = []   # (L, 6, nv) at the assembly pose, then at each closed sample

    def evaluate(self, q):
        """Full 6-D error of every loop (L, 6) [m, rad] and its Jacobian (L, 6, nv), both in frame_a."""
        model, data = self.model, self.data
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        errors, jacobians = np.zeros((len(self.pairs), 6)), np.zeros((len(self.pairs), 6, model.nv))
        for i, (fa, fb) in enumerate(self.pairs):
            Ma, Mb = data.oMf[fa], data.oMf[fb]
            Ja, Jb = pin.getFrameJacobian(model, data, fa, LWA), pin.getFrameJacobian(model, data, fb, LWA)
            d, RaT = Mb.translation - Ma.translation, Ma.rotation.T
            errors[i] = np.concatenate([RaT @ d, pin.log3(RaT @ Mb.rotation)])
            jacobians[i] = np.vstack([RaT @ (Jb[:3] - Ja[:3] + pin.skew(d) @ Ja[3:]), RaT @ (Jb[3:] - Ja[3:])])
        return errors, jacobians

    def set_axes(self, axes):
        self.rows = np.concatenate([6 * i + np.array([AXIS_ROWS[a] for a in loop_axes], dtype=int)
                                    for i, loop_axes in enumerate(axes)]) if axes else np.zeros(0, dtype=int)

    def sample(self, axes, count, rng, spread=0.15):
        """The assembly pose and up to ``count`` closed configurations near it: random steps on the loop joints
        projected back onto e = 0 (``axes``) by minimum-norm Gauss–Newton."""
        self.set_axes(axes)
        columns, q0 = self.loop_columns, pin.neutral(self.model)
        configurations = [q0]
        for _ in range(3 * count if len(columns) else 0):
            q = q0.copy()
            q[columns] += rng.normal(scale=spread, size=len(columns))
            for _ in range(60):
                errors, jacobians = self.evaluate(q)
                error = errors.reshape(-1)[self.rows]
                if np.linalg.norm(error) < 1e-11:
                    configurations.append(q)
                    break
                step = -np.linalg.lstsq(jacobians.reshape(-1, self.model.nv)[self.rows][:, columns], error,
                                        rcond=None)[0]
                q[columns] += step * min(1.0, 0.2 / max(np.abs(step).max(), 1e-300))
            if len(configurations) > count:
                break
        self.jacobians = [self.evaluate(q)[1] for q in configurations]

    def block(self, at, loops, axes, columns):
        """Rows ``axes`` of loops ``loops`` (lists), columns ``columns`` of the Jacobian at sample ``at``
        (0: the assembly pose)."""
        J = self.jacobians[at]
        return np.vstack([J[i][[AXIS_ROWS[a] for a in loop_axes]] for i, loop_axes in zip(loops, axes)])[:, columns]

    def generic_rank(self, matrix_at):
        """Rank of ``matrix_at(sample)`` at a generic closed configuration: the largest over the samples (the
        assembly pose counts only when no sample was found)."""
        samples = range(1, len(self.jacobians)) if len(self.jacobians) > 1 else range(1)
        return max(_rank(matrix_at(at)) for at in samples)

    def stacked(self, at):
        return self.jacobians[at].reshape(-1, self.model.nv)[self.rows]


def _rank(matrix):
    if not matrix.size:
        return 0
    singular = np.linalg.svd(matrix, compute_uv=False)
    return int(np.sum(singular > RANK_TOLERANCE * max(singular[0], 1e-300)))


def _condition(matrix):
    """2-norm condition number (∞ when rank-deficient; 1 for an empty matrix)."""
    if not matrix.size:
        return 1.0
    singular = np.linalg.svd(matrix, compute_uv=False)
    return float(singular[0] / singular[-1]) if singular[-1] > RANK_TOLERANCE * singular[0] else float("inf")


@dataclass
class ImportedLoop:
    """One loop of the import: the joint it was cut at and what the YAML says about it."""

    name: str
    cut_joint: str
    cut_kind: str
    frame_a: str
    frame_b: str
    link_a: str
    link_b: str
    axes: tuple
    dropped_axes: tuple            # nominal axes not constrained (satisfied identically, or --loop-axes)
    joints: tuple                  # tree joints moving one of its frames but not the other
    passive: tuple = ()            # its passive joints
    condition_at_assembly: float = 1.0  # cond of its constraint Jacobian (its axes × its joints) at the assembly pose
    passive_condition_at_assembly: float = 1.0  # cond of its axes × its passive joints there (∞: singular)


@dataclass
class SdfImport:
    """What :func:`import_sdf` wrote and found."""

    sdf_path: str
    model_name: str
    urdf_path: str
    loops_path: str
    links: int
    tree_joints: tuple            # movable joints of the URDF, in tree order
    loops: list
    actuated: tuple
    actuated_rule: str            # how the actuated joints were chosen
    outputs: tuple
    measured_passive: tuple
    reference: dict               # joint -> value [rad or m], every loop closed
    changes: list
    problems: list
    reference_residual: float     # ‖e_l‖ at the reference, after load_robot [m, rad]
    reference_condition: float    # cond(J_l,u) at the reference
    sample_residual: float        # worst ‖e_l‖ over closures at random actuator values [m, rad]
    samples_closed: int
    samples_tried: int

    def report(self):
        """The summary printed by ``humanoid-balance import-sdf``, as lines."""
        lines = [f"imported model '{self.model_name}' from {self.sdf_path}: {self.links} links, "
                 f"{len(self.tree_joints)} joints in the spanning tree, {len(self.loops)} loops",
                 f"wrote {self.urdf_path}", f"wrote {self.loops_path}", "changes:"]
        lines += [f"  {change}" for change in self.changes] or ["  none"]
        lines.append("loops:")
        for loop in self.loops:
            dropped = f" ({', '.join(loop.dropped_axes)} not constrained)" if loop.dropped_axes else ""
            lines.append(f"  {loop.name}: cut {loop.cut_kind} joint, {loop.frame_a} on {loop.link_a} = {loop.frame_b} "
                         f"on {loop.link_b} along [{', '.join(loop.axes)}]{dropped}; joints {', '.join(loop.joints)}; "
                         f"at the assembly pose cond(J_l) {loop.condition_at_assembly:.3g}, cond(J_l,u) "
                         f"{loop.passive_condition_at_assembly:.3g}")
        lines += [f"actuated ({self.actuated_rule}): {', '.join(self.actuated) or 'none'}",
                  f"outputs: {', '.join(self.outputs) or 'none'}",
                  f"measured_passive: {', '.join(self.measured_passive) or 'none'}",
                  f"reference: ‖e_l‖ = {self.reference_residual:.2e}, cond(J_l,u) = "
                  f"{self.reference_condition:.3g}; loops closed at {self.samples_closed} of {self.samples_tried} "
                  f"random actuator values, worst ‖e_l‖ {self.sample_residual:.2e}"]
        lines.append("problems:")
        lines += [f"  {problem}" for problem in self.problems] or ["  none found"]
        return lines


def _yaml_scalar(name):
    return yaml.safe_dump(name, default_flow_style=True).strip().removesuffix("...").strip()


def _yaml_list(names):
    return "[" + ", ".join(_yaml_scalar(name) for name in names) + "]"


def _loops_yaml(model_name, source, loops, actuated, outputs, measured, reference, note):
    lines = [f"# Closed loops of {model_name}.urdf (each loop cut at one SDF joint), written by humanoid-balance "
             f"import-sdf from {source}.", "# axes: constrained directions expressed in frame_a. Units: m, rad.",
             "humanoid_balance_loops: 1", "loops:" if loops else "loops: []"]
    for loop in loops:
        lines += [f"  - name: {_yaml_scalar(loop.name)}", f"    frame_a: {_yaml_scalar(loop.frame_a)}",
                  f"    frame_b: {_yaml_scalar(loop.frame_b)}", f"    axes: {_yaml_list(loop.axes)}"]
    lines += [f"actuated: {_yaml_list(actuated)}", f"outputs: {_yaml_list(outputs)}",
              f"measured_passive: {_yaml_list(measured)}"]
    if reference:
        lines.append(f"reference:  # {note}")
        lines += [f"  {_yaml_scalar(name)}: {value:.12f}" for name, value in reference.items()]
    return "\n".join(lines) + "\n"


def _check_names(path, option, names, known, why):
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=3)
            raise _error(path, option, f"'{name}' is not {why}" + (f"; did you mean {close}?" if close else ""))
    duplicates = sorted({name for name in names if list(names).count(name) > 1})
    if duplicates:
        raise _error(path, option, f"lists {duplicates} more than once")


def _describe_tree(model, tree, cuts, keep_springs, changes, problems):
    """Lock spring joints (unless kept) and record what the conversion changes and the limits that exclude the
    assembly pose."""
    for joint in model.dropped:
        changes.append(f"dropped joint '{joint.name}' ({joint.kind}) to the world: the suite gives the root link "
                       f"'{model.root}' a floating base")
    for joint in cuts:
        changes.append(f"cut joint '{joint.name}' ({joint.kind}, {joint.parent} → {joint.child}): not in the URDF; "
                       f"loop '{joint.name}' closes it" + (", holding the spring at its assembly value" if
                                                         joint.is_spring and not keep_springs else ""))
    for tree_joint in tree:
        joint = tree_joint.joint
        if tree_joint.reversed:
            changes.append(f"joint '{joint.name}' runs from '{tree_joint.parent}' to '{tree_joint.child}' in the URDF "
                           "(reversed from the SDF; axis negated so that its value keeps its SDF meaning)")
        if joint.is_spring and not keep_springs:
            tree_joint.locked = True
            note = f", not at its spring_reference {joint.spring_reference:g}" if joint.spring_reference else ""
            changes.append(f"locked spring joint '{joint.name}' ({joint.stiffness:g} N·m/rad or N/m) as fixed at its "
                           f"assembly value 0{note}: a loop cannot determine a compliant joint (--keep-springs keeps "
                           "it)")
        elif joint.kind in MOVABLE and not joint.has_limits:
            kind = "prismatic" if joint.kind == "prismatic" else "revolute"
            changes.append(f"joint '{joint.name}' has no position limits: written as {kind} with limits "
                           f"±{UNLIMITED_RANGE[kind]:.4g} {'m' if kind == 'prismatic' else 'rad'}")
        if tree_joint.movable and joint.has_limits and not joint.lower <= 0.0 <= joint.upper:
            problems.append(f"joint '{joint.name}': its limits [{joint.lower:g}, {joint.upper:g}] exclude its own "
                            "assembly pose (0)")


def _choose_axes(path, cuts, kinds, kinematics, loop_axes, rng, changes, problems):
    """Each loop's constrained axes: the nominal ones of its cut joint, minus those the mechanism satisfies
    identically (rank test on closed configurations), or as given in ``loop_axes``."""
    nominal = [NOMINAL_AXES[kinds[joint.name]] for joint in cuts]
    for name, axes in loop_axes.items():
        _check_names(path, "--loop-axes", [name], [joint.name for joint in cuts], "a loop (a cut joint)")
        i = [joint.name for joint in cuts].index(name)
        _check_names(path, f"--loop-axes {name}", axes, nominal[i], f"an axis that a {kinds[name]} cut constrains")
    kinematics.sample(nominal, 8, rng)
    if len(kinematics.jacobians) < 4 and len(cuts):
        problems.append(f"only {len(kinematics.jacobians) - 1} closed configurations found near the assembly pose; "
                        "the loops' axes were chosen from those")
    chosen = []
    for i, joint in enumerate(cuts):
        columns = np.flatnonzero(kinematics.support[i])
        rank = kinematics.generic_rank(lambda at: kinematics.block(at, [i], [nominal[i]], columns))
        best = nominal[i]
        if rank < len(nominal[i]):
            def score(subset):
                samples = range(1, len(kinematics.jacobians)) if len(kinematics.jacobians) > 1 else range(1)
                return min(1.0 / _condition(kinematics.block(at, [i], [subset], columns)) for at in samples)
            best = max(itertools.combinations(nominal[i], rank), key=score)
        if joint.name in loop_axes:
            given = tuple(a for a in nominal[i] if a in loop_axes[joint.name])
            changes.append(f"loop '{joint.name}': axes [{', '.join(given)}] as given with --loop-axes (the "
                           f"mechanism's own: [{', '.join(best)}])")
            best = given
        chosen.append(tuple(best))
    kinematics.sample(chosen, 8, rng)
    return nominal, chosen


def _relaxation(kinematics, i, loop):
    """For a loop that cannot move: the axis whose removal lets it move with the least drift of that axis, as a
    suggestion (an SDF may over-constrain a loop that its simulator then closes with compliance)."""
    if len(loop.axes) < 2:
        return ""
    columns = [kinematics.index[name] for name in loop.joints]
    drifts = {}
    for axis in loop.axes:
        rest = [a for a in loop.axes if a != axis]
        rates = []
        for J in kinematics.jacobians:
            block = J[i][[AXIS_ROWS[a] for a in loop.axes]][:, columns]
            keep = [loop.axes.index(a) for a in rest]
            null = np.linalg.svd(block[keep])[2][-1]   # the motion the other axes allow (unit, rad or m)
            rates.append(abs(block[loop.axes.index(axis)] @ null))
        drifts[axis] = max(rates)
    axis = min(drifts, key=drifts.get)
    unit = "m" if axis in ("x", "y", "z") else "rad"
    return (f"; if the SDF over-constrains it, --loop-axes {loop.name}={','.join(a for a in loop.axes if a != axis)} "
            f"lets it move ({axis} of frame_a then drifts {drifts[axis]:.3g} {unit} per unit of joint motion)")


def _choose_actuated(path, model, tree, kinematics, m, actuated, keep_springs):
    """The actuated joints and how they were chosen (the default rule is in :func:`import_sdf`)."""
    names = [tree_joint.joint.name for tree_joint in tree if tree_joint.movable]
    joints = {joint.name: joint for joint in model.joints}
    if actuated is not None:
        _check_names(path, "--actuated", actuated, names, "a joint of the spanning tree" +
                     ("" if keep_springs else " (spring joints are locked; --keep-springs keeps them)"))
        return tuple(actuated), "given with --actuated"
    on_loop = {kinematics.joint_names[c] for c in kinematics.loop_columns}
    springs = {name for name in names if joints[name].is_spring}
    by_effort = {name for name in on_loop if name not in springs and (joints[name].effort or 0.0) > 0.0}
    chosen = {name for name in names if name not in on_loop} | by_effort
    passive = [name for name in names if name not in chosen]
    depth, depths = {}, {}
    for tree_joint in tree:
        depth[tree_joint.child] = depth.get(tree_joint.parent, 0) + (1 if tree_joint.movable else 0)
        depths[tree_joint.joint.name] = depth[tree_joint.child]
    colliding = {name for name, link in model.links.items() if link.collisions}
    child = {tree_joint.joint.name: tree_joint.child for tree_joint in tree}
    by_structure = set()
    for name in sorted(passive, key=lambda n: (n in springs, depths[n], child[n] not in colliding, joints[n].index)):
        if len(passive) <= m:
            break
        trial = [kinematics.index[p] for p in passive if p != name]
        if kinematics.generic_rank(lambda at: kinematics.stacked(at)[:, trial]) == m:
            passive.remove(name)
            by_structure.add(name)
    parts = ["every joint on no loop"]
    if by_effort:
        parts.append(f"the loop joints with an SDF effort limit > 0 ({len(by_effort)})")
    if by_structure:
        parts.append(f"per loop its remaining degrees of freedom nearest the root ({len(by_structure)})")
    return tuple(name for name in names if name in chosen | by_structure), "default: " + ", ".join(parts)


def _choose_measured(model, passive, kinematics):
    """Passive joints whose absolute readings, with the loops, determine every loop joint (calibration, eqs. 41–42):
    those with SDF position limits first, each kept only if it adds rank."""
    joints = {joint.name: joint for joint in model.joints}
    columns = kinematics.loop_columns
    measured, rows = [], np.zeros((0, kinematics.model.nv))

    def rank(extra):
        return kinematics.generic_rank(lambda at: np.vstack([kinematics.stacked(at), extra])[:, columns])

    current = rank(rows)
    for name in sorted(passive, key=lambda n: (not joints[n].has_limits, kinematics.index[n])):
        if current == len(columns):
            break
        row = np.zeros((1, kinematics.model.nv))
        row[0, kinematics.index[name]] = 1.0
        if rank(np.vstack([rows, row])) > current:
            rows, measured, current = np.vstack([rows, row]), measured + [name], current + 1
    return tuple(name for name in passive if name in measured), current == len(columns)


def _limit_violation(q, robot, limits, names=None):
    """Σ distance outside the SDF position limits over ``names`` (default: every joint that has limits) [rad, m]."""
    total = 0.0
    for name in limits if names is None else names:
        if name in limits:
            lower, upper = limits[name]
            value = q[robot.joint_q_index(name)]
            total += max(lower - value, 0.0) + max(value - upper, 0.0)
    return total


def _reference(robot, chain, model, rng, changes, problems, tries=20):
    """A closed configuration for the YAML ``reference``: the assembly pose with the actuated joints its limits
    exclude moved to mid-range, reached by continuation. A loop whose passive joints then leave their limits (it
    went through a change point, as a parallelogram does when flat) is closed again from mid-range and random
    starts of its passive joints, keeping the closure that violates the limits least: another assembly branch."""
    joints = {joint.name: joint for joint in model.joints}
    limits = {name: (joints[name].lower, joints[name].upper) for name in robot.joint_names if joints[name].has_limits}
    q = robot.reference_q.copy()
    moves = {name: 0.5 * sum(limits[name]) for name in robot.actuated_names
             if name in limits and not limits[name][0] <= 0.0 <= limits[name][1]}
    note = "the SDF assembly pose (every joint 0), every loop closed (rad, m)"
    if moves:
        target = q[robot.actuated_q].copy()
        for name, value in moves.items():
            target[robot.actuated_names.index(name)] = value
        try:
            for s in np.linspace(0.0, 1.0, 41)[1:]:
                q[robot.actuated_q] = (1.0 - s) * robot.reference_q[robot.actuated_q] + s * target
                q = chain.solve_passive(q).q
        except (ClosureError, SingularConfigurationError) as error:
            problems.append(f"reference: {sorted(moves)} cannot be moved into their limits with the loops closed "
                            f"({error}); the reference is the assembly pose")
            q = robot.reference_q.copy()
        else:
            note = "the SDF assembly pose with the actuated joints its limits exclude at mid-range, every loop closed"
            changes.append("reference: actuated joints outside their limits at the assembly pose moved to mid-range ("
                           + ", ".join(f"{name} {value:+.4g}" for name, value in moves.items()) + ")")
    passive_index = {v: i for i, v in enumerate(robot.passive_v)}
    lower, upper = robot.position_limits(robot.passive_names)
    for row, loop in enumerate(robot.spec.loops):
        moving = np.flatnonzero(chain.relative_support[row])
        columns = [passive_index[v] for v in moving if v in passive_index]
        names = [robot.passive_names[i] for i in columns]
        if len(columns) == len(moving) or not _limit_violation(q, robot, limits, names) > 1e-9:
            continue  # (a loop without actuated joint cannot move: its other branches are other assemblies)
        starts = []
        for attempt in range(tries + 1):
            start = q.copy()
            for i, name in zip(columns, names):
                mid = 0.5 * (lower[i] + upper[i]) if name not in limits else 0.5 * sum(limits[name])
                start[robot.passive_q[i]] = mid if attempt == 0 else rng.uniform(lower[i], upper[i])
            starts.append(start)
        best, best_violation = q, _limit_violation(q, robot, limits)
        for start in starts:
            try:
                candidate = chain.solve_passive(start).q
            except (ClosureError, SingularConfigurationError):
                continue
            candidate_violation = _limit_violation(candidate, robot, limits)
            if candidate_violation < best_violation - 1e-9:
                best, best_violation = candidate, candidate_violation
        if best is not q:
            changes.append(f"reference: loop '{loop.name}' closed on another assembly branch than the continuation "
                           f"from the assembly pose gave, which left {names} outside their limits")
            note += "; branches that keep the joints within their limits"
            q = best
    for name, (low, high) in limits.items():
        value = q[robot.joint_q_index(name)]
        if not low - 1e-9 <= value <= high + 1e-9 and not (value == 0.0 and name not in moves):
            problems.append(f"joint '{name}' is at {value:.4g} in the reference, outside its limits "
                            f"[{low:g}, {high:g}]")
    return q, note


def _load(path, urdf, loops, floating_base=False):
    try:
        return load_robot(urdf, loops, floating_base=floating_base)
    except ModelFileError as error:
        raise _error(path, None, f"the imported files do not load: {error.detail}") from None


def import_sdf(sdf_path, output_dir, actuated=None, outputs=None, measured=None, loop_axes=None, package_dirs=(),
               keep_springs=False, samples=20, seed=0):
    """Write ``output_dir/<model>.urdf`` and ``output_dir/<model>.loops.yaml`` from an SDF model.

    Args:
        actuated: motor-driven joints in command order. SDF has no actuators, so by default: every joint on no
            loop; the loop joints with an SDF effort limit > 0 that are not spring joints; then, while the loops
            leave passive joints undetermined, loop joints nearest the root first (between equals, the one moving
            a link with collision geometry), each taken only if the loops still determine the passive joints.
        outputs: serial-equivalent output joints, one per actuated joint, same order; default: the actuated joints.
        measured: passive joints with absolute encoders; default: enough passive loop joints for the initial
            calibration (eqs. 41–42) to determine every loop joint, those with SDF position limits first.
        loop_axes: {loop (cut joint) name: axes} to constrain instead of the ones the importer finds.
        package_dirs: folders where ``model://`` and ``package://`` mesh URIs are looked up.
        keep_springs: keep spring joints as joints (they must then be listed as actuated); default: lock them.
        samples: random actuator values (within limits) at which the written robot's loops are closed as a check.

    Returns:
        :class:`SdfImport`.

    Raises:
        SdfImportError: one line naming the file and what is wrong.
    """
    sdf_path = Path(sdf_path)
    path = str(sdf_path)
    model = parse_sdf(sdf_path, package_dirs)
    rng = np.random.default_rng(seed)
    changes, problems = [], list(model.notes)
    tree, cuts = _spanning_tree(model)
    _describe_tree(model, tree, cuts, keep_springs, changes, problems)
    model_name = re.sub(r"[^A-Za-z0-9_.-]", "_", model.name)  # the files' names
    builder = _UrdfBuilder(model, tree, cuts, changes)
    urdf_text = builder.text(sdf_path.name, f"{model_name}.loops.yaml")
    kinds = {joint.name: ("fixed" if joint.is_spring and not keep_springs else
                          "revolute" if joint.kind == "continuous" else joint.kind) for joint in cuts}
    kinematics = _LoopKinematics(urdf_text, [builder.cut_frames[joint.name] for joint in cuts])
    names = kinematics.joint_names
    nominal, axes = _choose_axes(path, cuts, kinds, kinematics, dict(loop_axes or {}), rng, changes, problems)
    m = len(kinematics.rows)

    actuated, rule = _choose_actuated(path, model, tree, kinematics, m, actuated, keep_springs)
    passive = [name for name in names if name not in actuated]
    on_loop = {names[c] for c in kinematics.loop_columns}
    loose = [name for name in passive if name not in on_loop]
    if loose:
        raise _error(path, "actuated", f"passive joints {loose} are on no loop, so nothing determines them; list them "
                     f"with --actuated (actuated now: {list(actuated)})")
    if len(passive) != m:
        raise _error(path, "actuated", f"the loops constrain {m} axes but {len(passive)} joints are passive "
                     f"({len(names)} joints − {len(actuated)} actuated); they must be equal: "
                     f"{'remove' if len(passive) < m else 'add'} {abs(len(passive) - m)} with --actuated "
                     f"(loop joints: {sorted(on_loop)})")
    passive_columns = [kinematics.index[name] for name in passive]
    if m and kinematics.generic_rank(lambda at: kinematics.stacked(at)[:, passive_columns]) < m:
        raise _error(path, "actuated", f"with actuated {list(actuated)} the loops do not determine the passive "
                     "joints (J_l,u is singular); choose others with --actuated")

    loops = []
    for i, joint in enumerate(cuts):
        columns = np.flatnonzero(kinematics.support[i])
        loop_passive = [c for c in columns if names[c] in passive]
        full = kinematics.block(0, [i], [axes[i]], columns)
        condition = _condition(kinematics.block(0, [i], [axes[i]], loop_passive))
        loop = ImportedLoop(joint.name, joint.name, kinds[joint.name], *builder.cut_frames[joint.name], joint.parent,
                            joint.child, axes[i], tuple(a for a in nominal[i] if a not in axes[i]),
                            tuple(names[c] for c in columns), tuple(names[c] for c in loop_passive), _condition(full),
                            condition)
        loops.append(loop)
        if not max(loop.condition_at_assembly, condition) <= NEAR_SINGULAR:
            problems.append(f"loop '{loop.name}' is near a singularity at the assembly pose: its constraint Jacobian "
                            f"(axes [{', '.join(axes[i])}] × {len(columns)} joints) has rank {_rank(full)} of "
                            f"{len(axes[i])}, condition {loop.condition_at_assembly:.3g}; cond(J_l,u) with passive "
                            f"{list(loop.passive)} {condition:.3g}")
        if len(loop_passive) == len(columns):
            problems.append(f"loop '{loop.name}' cannot move: its {len(axes[i])} axes determine all its joints "
                            f"{list(loop.joints)}, so none of them can be actuated{_relaxation(kinematics, i, loop)}")
    if m and kinematics.generic_rank(lambda at: kinematics.stacked(at)[:, kinematics.loop_columns]) < m:
        problems.append(f"the loops' {m} constrained axes are not independent of each other")

    if outputs is not None:
        _check_names(path, "--outputs", outputs, names, "a joint of the spanning tree")
        if len(outputs) != len(actuated):
            raise _error(path, "--outputs", f"{len(outputs)} outputs for {len(actuated)} actuated joints; give one "
                         "serial-equivalent output per actuated joint, in the same order")
    outputs = tuple(outputs) if outputs is not None else tuple(actuated)
    if measured is not None:
        _check_names(path, "--measured", measured, passive, "a passive joint")
        measured = tuple(measured)
        rows = np.zeros((len(measured), kinematics.model.nv))
        rows[np.arange(len(measured)), [kinematics.index[name] for name in measured]] = 1.0
        complete = kinematics.generic_rank(lambda at: np.vstack([kinematics.stacked(at), rows])[
            :, kinematics.loop_columns]) == len(kinematics.loop_columns)
    else:
        measured, complete = _choose_measured(model, passive, kinematics)
    if not complete:
        problems.append(f"measured_passive {list(measured)} and the loops do not determine every loop joint: the "
                        "initial calibration (eqs. 41–42) is underdetermined")

    with tempfile.TemporaryDirectory() as scratch:
        urdf_file, loops_file = Path(scratch) / f"{model_name}.urdf", Path(scratch) / f"{model_name}.loops.yaml"
        urdf_file.write_text(urdf_text)
        loops_file.write_text(_loops_yaml(model_name, sdf_path.name, loops, actuated, outputs, measured, {}, ""))
        robot = _load(path, urdf_file, loops_file)
        q, note = _reference(robot, ClosedChain(robot), model, rng, changes, problems)
        reference = {name: float(q[robot.joint_q_index(name)]) for name in robot.joint_names}
        loops_file.write_text(_loops_yaml(model_name, sdf_path.name, loops, actuated, outputs, measured, reference,
                                          note))
        robot = _load(path, urdf_file, loops_file, floating_base=True)
        chain = ClosedChain(robot)
        residual = float(np.linalg.norm(chain.residual(robot.reference_q)))
        condition = chain.condition_number(robot.reference_q)
        if not condition <= NEAR_SINGULAR:
            problems.append(f"cond(J_l,u) = {condition:.3g} at the reference: near a closed-chain singularity")
        worst, closed = residual, 0
        lower, upper = robot.position_limits(robot.actuated_names)
        tried = samples if chain.m else 0
        for _ in range(tried):
            q = robot.reference_q.copy()
            start, target = q[robot.actuated_q].copy(), rng.uniform(lower, upper)
            try:
                for s in np.linspace(0.0, 1.0, 6)[1:]:
                    q[robot.actuated_q] = start + s * (target - start)
                    solution = chain.solve_passive(q)
                    q = solution.q
            except (ClosureError, SingularConfigurationError):
                continue
            closed, worst = closed + 1, max(worst, solution.residual_norm)
        if closed < tried:
            problems.append(f"the loops could not be closed at {tried - closed} of {tried} random actuator values "
                            "within the limits (walking from the reference in 5 steps)")
        output_dir = Path(output_dir)
        try:
            output_dir.mkdir(parents=True, exist_ok=True)
            urdf_path, loops_path = output_dir / urdf_file.name, output_dir / loops_file.name
            shutil.copyfile(urdf_file, urdf_path)
            shutil.copyfile(loops_file, loops_path)
        except OSError as error:
            raise _error(output_dir, None, f"cannot write the robot files: {error.strerror or error}") from None
    return SdfImport(path, model.name, str(urdf_path), str(loops_path), len(model.links), tuple(names), loops,
                     tuple(actuated), rule, outputs, measured, reference, changes, problems, residual, condition,
                     worst if tried else 0.0, closed, tried)
