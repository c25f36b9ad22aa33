"""Import an SDF model with closed chains as the suite's robot files: a URDF spanning tree and the loop-closure
YAML of docs/robot-description.md.

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

One concept per module: :mod:`.sdf` reads the SDF, :mod:`.urdf` keeps the spanning tree and writes its URDF,
:mod:`.loops` analyses the loops (the cut frames' errors and Jacobians, closed_chain's; ranks; conditioning),
:mod:`.importer` chooses the joints and the reference and writes the files.

No ROS. Units: m, rad, kg, kg·m², N, N·m, s.
"""
from humanoid_balance.authoring.sdf_import.importer import SdfImport, import_sdf
from humanoid_balance.authoring.sdf_import.loops import ImportedLoop
from humanoid_balance.authoring.sdf_import.sdf import SdfImportError, SdfJoint, SdfLink, SdfModel, is_sdf, parse_sdf

__all__ = ["SdfImportError", "SdfModel", "SdfJoint", "SdfLink", "ImportedLoop", "SdfImport", "is_sdf",
           "parse_sdf", "import_sdf"]
