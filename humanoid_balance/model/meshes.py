"""The geometry of a URDF as the suite's consumers read it (pinocchio for ``init``, MuJoCo for the plant).

- every ``<mesh>`` resolved to a file (``package://``, ``model://``, ``file://``, relative to the URDF), in any
  format ROS URDFs carry (COLLADA ``.dae``, ``.stl``/``.STL``, ``.obj``, ``.ply``, …); a consumer that reads only
  some formats gets the others converted once with trimesh (pycollada for COLLADA, its ``<unit>`` applied as RViz
  does) and cached by content, so a restart reads the cache; init and the plant read the same converted file;
- the links a consumer needs to touch the ground (the feet) take their visual geometry as collision geometry when
  they have none, as the tools that draw a URDF would show them; reported, never silent;
- a mesh that cannot be found or read is dropped and reported with the link and the reason.
No ROS here. Units: those of the URDF (m).
"""
import copy
import hashlib
import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import NamedTuple

from humanoid_balance.errors import HumanoidBalanceError
from humanoid_balance.resources import find_file

__all__ = ["MeshReport", "resolve_meshes", "description_text", "readable_mesh",
           "mesh_cache_dir", "rigid_body_links", "MeshConversionError", "UNITLESS_FORMATS"]

CACHE_VARIABLE = "HUMANOID_BALANCE_CACHE"  # overrides the cache folder (default: $XDG_CACHE_HOME/humanoid_balance)
UNITLESS_FORMATS = (".stl", ".obj")  # read as they are (metres, as the URDF); others through trimesh, in metres


class MeshConversionError(HumanoidBalanceError, ValueError):
    """A mesh file trimesh cannot read, or that holds no triangles."""


class MeshReport(NamedTuple):
    """What :func:`resolve_meshes` did to a URDF's geometry, one entry per link or mesh."""

    from_visual: list   # links whose visual geometry now stands in for their missing collision geometry
    converted: list     # (link, original file, readable file) of meshes converted to a format the consumer reads
    dropped: list       # (link, kind, filename, reason) of meshes left out


def mesh_cache_dir():
    """Where converted meshes are kept: $HUMANOID_BALANCE_CACHE, else $XDG_CACHE_HOME/humanoid_balance/meshes."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "humanoid_balance" / "meshes"


def readable_mesh(path, formats):
    """``path`` if its format (its suffix, any case) is one of ``formats`` (lower case, with the dot), else a binary
    STL of the same triangles in metres (a scene's meshes joined with their transforms, COLLADA's unit applied),
    converted by trimesh once and kept in :func:`mesh_cache_dir` under a name from the file's content.

    Raises:
        MeshConversionError: trimesh cannot read the file, or it holds no triangles.
    """
    path = Path(path)
    if path.suffix.lower() in formats:
        return path
    content = path.read_bytes()
    key = hashlib.sha256(path.suffix.lower().encode() + content).hexdigest()[:24]
    target = mesh_cache_dir() / f"{path.stem}-{key}.stl"
    if target.is_file():
        return target
    import trimesh  # only when a mesh needs it

    try:
        mesh = trimesh.load(path, force="mesh")
    except Exception as error:  # trimesh raises many kinds (ValueError, KeyError, collada's own) for a bad file
        raise MeshConversionError(f"trimesh cannot read it: {error}") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise MeshConversionError("it holds no triangles")
    if mesh.units not in (None, "meters", "m"):  # COLLADA's <unit meter="0.01">, as RViz and Gazebo apply it
        mesh.convert_units("meters")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.part")
    mesh.export(partial, file_type="stl")
    os.replace(partial, target)  # atomic: processes starting together never read half a file
    return target


def rigid_body_links(model, link):
    """The links of the pinocchio ``model`` welded to ``link`` (fixed joints), ``link`` included."""
    joint = model.frames[model.getFrameId(link)].parentJoint
    return {frame.name for frame in model.frames if frame.parentJoint == joint and frame.type.name == "BODY"}


def resolve_meshes(robot, urdf_path, package_dirs=(), formats=None, ground_bodies=(), kinds=("collision", "visual")):
    """Resolve the meshes of the URDF element tree ``robot`` (read from ``urdf_path``) in place and return a
    :class:`MeshReport`.

    Args:
        package_dirs: folders where ``package://`` and ``model://`` meshes are looked up first.
        formats: mesh suffixes the consumer reads (lower case, with the dot); others are converted
            (:func:`readable_mesh`). None: every format is read as it is.
        ground_bodies: the rigid bodies that touch the ground (the feet), each a set of link names
            (:func:`rigid_body_links`); one whose links have no collision geometry gets a copy of their visual
            geometry as collision geometry.
        kinds: the elements whose meshes are resolved; the others' meshes are left as they are.
    """
    report = MeshReport([], [], [])
    links = {link.get("name"): link for link in robot.iter("link")}
    for body in ground_bodies:
        members = [links[name] for name in sorted(body) if name in links]
        if any(link.find("collision") is not None for link in members):
            continue
        for link in members:
            for visual in link.findall("visual"):
                collision = copy.deepcopy(visual)
                collision.tag = "collision"
                collision.attrib.pop("name", None)
                for material in collision.findall("material"):
                    collision.remove(material)
                link.append(collision)
            if link.find("visual") is not None:
                report.from_visual.append(link.get("name"))
    for link in robot.iter("link"):
        name = link.get("name")
        for element in list(link):
            mesh = element.find("geometry/mesh")
            if element.tag not in kinds or mesh is None:
                continue
            filename = mesh.get("filename", "")
            path = find_file(filename, urdf_path, package_dirs)
            if path is None:
                link.remove(element)
                report.dropped.append((name, element.tag, filename, "not found (give package_dirs or set "
                                                                     "ROS_PACKAGE_PATH)"))
                continue
            if formats is not None:
                try:
                    readable = readable_mesh(path, formats)
                except (MeshConversionError, OSError) as error:
                    link.remove(element)
                    report.dropped.append((name, element.tag, filename, str(error)))
                    continue
                if readable != path:
                    report.converted.append((name, str(path), str(readable)))
                path = readable
            mesh.set("filename", str(path))
    return report


def description_text(urdf_path, package_dirs=()):
    """The URDF's text as ``robot_description`` for RViz and Foxglove: every mesh it can find as an absolute
    ``file://`` URI (a folder written by ``init`` holds meshes relative to it, which no viewer resolves); the file
    as it is when it has no mesh."""
    tree = ElementTree.parse(urdf_path)
    if tree.getroot().find(".//mesh") is None:
        return Path(urdf_path).read_text()
    resolve_meshes(tree.getroot(), urdf_path, package_dirs)
    for mesh in tree.getroot().iter("mesh"):
        if Path(mesh.get("filename", "")).is_absolute():
            mesh.set("filename", Path(mesh.get("filename")).as_uri())
    return ElementTree.tostring(tree.getroot(), encoding="unicode")
