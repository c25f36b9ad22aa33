"""The spanning tree of an SDF model's joints, and its URDF: the joints kept from the root link (1-DOF and fixed ones in
their SDF direction first), the others cut, each cut leaving a frame on either side that coincide at the assembly
pose (:mod:`humanoid_balance.authoring.sdf_import`). Units: m, rad, kg."""
import math
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from humanoid_balance.authoring.sdf_import.sdf import MOVABLE, SdfJoint, import_error

__all__ = ["UrdfBuilder", "spanning_tree", "UNLIMITED_RANGE"]

UNLIMITED_RANGE = {"revolute": math.pi, "prismatic": 1.0}  # written for joints without limits [rad, m]
NO_LIMIT = 1e9            # effort [N, N·m] / velocity [rad/s, m/s] written when the SDF gives none


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


def spanning_tree(model):
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
        raise import_error(model.path, f"link '{unreachable[0]}'", f"is not connected to the root link '{model.root}' "
                           f"({len(unreachable)} such links)")
    cuts = [joint for joint in model.joints if joint.name not in used]
    for tree_joint in tree:
        if tree_joint.joint.kind == "ball":
            raise import_error(model.path, f"<joint name='{tree_joint.joint.name}'>", "a ball joint must stay in the "
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


class UrdfBuilder:
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
