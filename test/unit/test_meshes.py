"""Meshes in the formats ROS URDFs carry, read for the plant (humanoid_balance.model.meshes): a PLY and a COLLADA
box written here by hand, an upper-case .STL from example-robot-data. References: the boxes' corners as written,
and MuJoCo's own reading of the converted files. Units: m."""
import os
import xml.etree.ElementTree as ElementTree

import mujoco
import numpy as np
import pytest

from humanoid_balance.model.meshes import MeshConversionError, description_text, readable_mesh, resolve_meshes
from humanoid_balance.resources import example_robot

MUJOCO_FORMATS = (".stl", ".obj", ".msh")
CORNERS = np.array([[x, y, z] for x in (-0.1, 0.12) for y in (-0.04, 0.05) for z in (-0.03, 0.0)])
FACES = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1), (2, 3, 7), (2, 7, 6), (0, 2, 6),
         (0, 6, 4), (1, 5, 7), (1, 7, 3)]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HUMANOID_BALANCE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def ply_box(path):
    lines = ["ply", "format ascii 1.0", f"element vertex {len(CORNERS)}", "property float x", "property float y",
             "property float z", f"element face {len(FACES)}", "property list uchar int vertex_indices", "end_header"]
    lines += [" ".join(f"{v:g}" for v in corner) for corner in CORNERS] + [f"3 {a} {b} {c}" for a, b, c in FACES]
    path.write_text("\n".join(lines) + "\n")
    return path


def dae_box(path):
    """A COLLADA file with the box, half its size, in a node scaled by 2 and moved by 100 along x, in centimetres
    (unit 0.01): the reader must apply the node's transform and the unit."""
    positions = " ".join(f"{v:g}" for v in (CORNERS * 100.0 / 2.0).ravel())
    indices = " ".join(str(i) for face in FACES for i in face)
    path.write_text(f"""<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit meter="0.01" name="centimeter"/><up_axis>Z_UP</up_axis></asset>
  <library_geometries><geometry id="box"><mesh>
    <source id="p"><float_array id="pa" count="{CORNERS.size}">{positions}</float_array>
      <technique_common><accessor source="#pa" count="{len(CORNERS)}" stride="3">
        <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
      </accessor></technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
    <triangles count="{len(FACES)}"><input semantic="VERTEX" source="#v" offset="0"/><p>{indices}</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node id="n">
    <matrix>2 0 0 100 0 2 0 0 0 0 2 0 0 0 0 1</matrix><instance_geometry url="#box"/>
  </node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>""")
    return path


def mujoco_vertices(path):
    """The vertices of a mesh file as MuJoCo reads it, in the file's frame (MuJoCo re-centres a mesh at its centre of
    mass and turns it onto its inertia axes: undone with mesh_pos and mesh_quat)."""
    spec = mujoco.MjSpec()
    spec.add_mesh(name="m", file=str(path))
    body = spec.worldbody.add_body(name="b")
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname="m")
    body.add_freejoint()
    model = spec.compile()
    rotation = np.zeros(9)
    mujoco.mju_quat2Mat(rotation, model.mesh_quat[0])
    return model.mesh_vert.reshape(-1, 3) @ rotation.reshape(3, 3).T + model.mesh_pos[0]


def test_a_ply_box_reaches_mujoco_with_its_corners(tmp_path):
    converted = readable_mesh(ply_box(tmp_path / "box.ply"), MUJOCO_FORMATS)
    assert converted.suffix == ".stl" and converted.parent == tmp_path / "cache"
    vertices = mujoco_vertices(converted)
    np.testing.assert_allclose(vertices.min(axis=0), CORNERS.min(axis=0), atol=1e-6)
    np.testing.assert_allclose(vertices.max(axis=0), CORNERS.max(axis=0), atol=1e-6)


def test_a_collada_box_keeps_its_node_transform_and_is_converted_once(tmp_path):
    source = dae_box(tmp_path / "box.dae")
    converted = readable_mesh(source, MUJOCO_FORMATS)
    vertices = mujoco_vertices(converted)
    expected = CORNERS + [1.0, 0.0, 0.0]  # centimetres: the half-size box scaled by 2, moved by 100 cm
    np.testing.assert_allclose(vertices.min(axis=0), expected.min(axis=0), atol=1e-6)
    np.testing.assert_allclose(vertices.max(axis=0), expected.max(axis=0), atol=1e-6)
    before = os.stat(converted).st_mtime_ns
    assert readable_mesh(source, MUJOCO_FORMATS) == converted and os.stat(converted).st_mtime_ns == before
    source.write_text(source.read_text().replace("2 0 0 100", "3 0 0 100"))
    assert readable_mesh(source, MUJOCO_FORMATS) != converted  # a changed file is converted again


def test_an_upper_case_stl_is_read_as_it_is():
    foot = example_robot("human_description/meshes/foot_mesh.STL")
    if foot is None:
        pytest.skip("example-robot-data has no human_description")
    assert readable_mesh(foot, MUJOCO_FORMATS) == foot
    assert len(mujoco_vertices(foot)) > 100


def test_a_mesh_that_cannot_be_read_is_dropped_naming_its_link(tmp_path):
    (tmp_path / "broken.dae").write_text("<COLLADA>not a mesh</COLLADA>")
    with pytest.raises(MeshConversionError):
        readable_mesh(tmp_path / "broken.dae", MUJOCO_FORMATS)
    urdf = tmp_path / "robot.urdf"
    urdf.write_text('<robot name="r"><link name="shin"><collision><geometry><mesh filename="broken.dae"/></geometry>'
                    '</collision><collision><geometry><mesh filename="nowhere.stl"/></geometry></collision></link>'
                    '</robot>')
    root = ElementTree.parse(urdf).getroot()
    report = resolve_meshes(root, urdf, formats=MUJOCO_FORMATS)
    assert [(link, name) for link, _, name, _ in report.dropped] == [("shin", "broken.dae"), ("shin", "nowhere.stl")]
    assert "trimesh cannot read it" in report.dropped[0][3] and "not found" in report.dropped[1][3]
    assert root.find("link/collision") is None


def test_robot_description_names_every_mesh_by_an_absolute_uri(tmp_path):
    """RViz resolves neither a path relative to the URDF nor a package the ament index does not know."""
    ply_box(tmp_path / "box.ply")
    urdf = tmp_path / "robot.urdf"
    urdf.write_text('<robot name="r"><link name="foot"><visual><geometry><mesh filename="box.ply"/></geometry>'
                    '</visual></link></robot>')
    [mesh] = ElementTree.fromstring(description_text(urdf)).iter("mesh")
    assert mesh.get("filename") == (tmp_path / "box.ply").as_uri()
