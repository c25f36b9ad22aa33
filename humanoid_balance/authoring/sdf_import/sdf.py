"""Reading an SDF model for the import (:mod:`humanoid_balance.authoring.sdf_import`): its links (inertials, visual and
collision shapes), joints and frames, with their poses at the assembly configuration (every joint at 0), in the
model frame. Units: m, rad, kg, kg·m², N, N·m."""
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from humanoid_balance.model.errors import ModelFileError
from humanoid_balance.resources import find_file

__all__ = ["SdfImportError", "SdfModel", "SdfJoint", "SdfLink", "Shape", "is_sdf", "parse_sdf", "import_error",
           "MOVABLE"]

MOVABLE = ("revolute", "continuous", "prismatic")
SUPPORTED = MOVABLE + ("fixed", "ball")
UNBOUNDED = 1e15          # |limit| at or above this is SDF's "no limit" (its default is ±1e16)
RESOURCE_PATH_VARIABLES = ("GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "GAZEBO_MODEL_PATH", "SDF_PATH",
                           "ROS_PACKAGE_PATH")  # where model:// and package:// meshes are looked up


class SdfImportError(ModelFileError):
    """The SDF file cannot be imported; the message names the file, the element and what is wrong."""


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


def import_error(path, entry, detail):
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
        raise import_error(path, where, f"expected {count} numbers, got {text!r}") from None
    if len(values) != count:
        raise import_error(path, where, f"expected {count} numbers, got {text!r}")
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
                    raise import_error(path, f"<{kind}>", "has no name")
                if name in self.elements:
                    raise import_error(path, f"<{kind} name='{name}'>", "the name is used twice in the model")
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
            raise import_error(self.path, f"pose relative to '{name}'", "no link, joint or frame has this name")
        if name in self.active:
            raise import_error(self.path, f"pose of '{name}'", "the poses refer to each other in a cycle")
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
        raise import_error(path, f"{where} <axis> <xyz>", "is the zero vector")
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
        raise import_error(path, where, f"type '{kind}' is not supported (supported: {', '.join(SUPPORTED)})")
    parent, child = (element.findtext("parent") or "").strip(), (element.findtext("child") or "").strip()
    if not parent or not child:
        raise import_error(path, where, "needs a <parent> and a <child>")
    pose = poses.world(name)
    joint = SdfJoint(name, kind, parent, child, pose, index=index)
    if kind in MOVABLE:
        joint.axis = _axis(element, poses, pose, version, path, where)
        limit = element.find("axis/limit")
        lower, upper = _number(limit, "lower"), _number(limit, "upper")
        if kind != "continuous" and lower is not None and upper is not None and max(abs(lower), abs(upper)) < UNBOUNDED:
            if lower > upper:
                raise import_error(path, f"{where} <limit>", f"lower {lower} is above upper {upper}")
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
        raise import_error(path, None, "no such file" if not path.exists() else "is not a file")
    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as error:
        raise import_error(path, None, f"is not an XML file ({error})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise import_error(path, None, f"cannot read: {error}") from None
    if root.tag != "sdf":
        hint = " (a URDF: check it with `humanoid-balance check-model`)" if root.tag == "robot" else ""
        raise import_error(path, None, f"is not SDF: its root element is <{root.tag}>{hint}, not <sdf>")
    version = root.get("version", "1.6")
    models = root.findall("model") + root.findall("world/model")
    if not models:
        includes = root.findall(".//include")
        detail = " (only <include>s, which the importer does not follow)" if includes else ""
        raise import_error(path, None, f"has no <model>{detail}")
    model = models[0]
    notes = []
    if len(models) > 1:
        notes.append(f"the file has {len(models)} models; imported the first, '{model.get('name')}'")
    if model.find("model") is not None or model.find("include") is not None:
        raise import_error(path, f"<model name='{model.get('name')}'>", "nested models and <include> are not supported")
    try:
        return _parse_model(path, model, version, package_dirs, notes)
    except ValueError as error:
        raise import_error(path, f"<model name='{model.get('name')}'>", str(error)) from None


def _parse_model(path, model, version, package_dirs, notes):
    name = model.get("name") or path.stem
    poses = _PoseGraph(path, model)
    links = {}
    for element in model.findall("link"):
        links[element.get("name")] = _parse_link(element, poses.world(element.get("name")), path, package_dirs, notes)
    if not links:
        raise import_error(path, f"<model name='{name}'>", "has no <link>")
    joints, dropped = [], []
    for index, element in enumerate(model.findall("joint")):
        joint = _parse_joint(element, index, poses, version, path)
        for end in (joint.parent, joint.child):
            if end != "world" and end not in links:
                raise import_error(path, f"<joint name='{joint.name}'>", f"'{end}' is not a link of the model")
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
