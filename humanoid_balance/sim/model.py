"""MuJoCo model of a robot built from the same URDF + loop-closure YAML the controllers use.

- the URDF spanning tree through MuJoCo's importer (fixed links kept as bodies);
- collision geometry as in the URDF: primitives, and meshes (collided as their convex hulls) in any format
  (:mod:`humanoid_balance.model.meshes`: COLLADA, PLY and others converted once to STL by trimesh, cached) with
  ``package://`` resolved through ``package_dirs`` and ``ROS_PACKAGE_PATH``; a foot without collision geometry
  collides where it is drawn (its visual geometry; ``MujocoRobot.notices``); a collision mesh that cannot be
  found or read is dropped with a warning naming it (``MujocoRobot.warnings``), and a sole left without geometry
  gets the box of its sole rectangle; primitive visuals become contact-free geoms so that renderings show the
  robot's shape (visual meshes are left out);
- the robot touches the floor only (no self-collision: the suite balances, it does not plan around its own
  links); a free joint on the root link, a floor plane, friction on every contact;
- each loop closure as an equality constraint between frame_a and frame_b: ``weld`` when the loop constrains a
  rotation, else ``connect`` (the loops are closed at the URDF zero configuration, MuJoCo's qpos0); a ``connect``
  loop that leaves translations of frame_a free (axes [x, y]: a point on a line) gets a light slide joint along
  each free axis under frame_a when frame_a is a massless frame on its link (import-sdf's cut frames), so that the
  plant constrains exactly what the loop file says (a loop on a link of the mechanism, as kangaroo_like's planar
  linkages, stays connected in full, the out-of-plane direction redundant);
- one actuator per actuated joint, force-limited to the URDF effort limit; its gain and bias make it a
  position, velocity or effort drive (set by :class:`~humanoid_balance.sim.simulation.Simulation`), so
  MuJoCo integrates the drive's stiffness and damping implicitly;
- an IMU at the root link (orientation, gyro, accelerometer) and optional force/torque sensors between
  each foot and its ankle (at the foot link's origin, the link carrying the sole).
Units: SI.
"""
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import NamedTuple

import mujoco

from humanoid_balance.model.meshes import UNITLESS_FORMATS, resolve_meshes, rigid_body_links
from humanoid_balance.model.robot import SPECK_MASS

__all__ = ["build_mujoco_model", "MujocoRobot", "IMU_SITE"]

IMU_SITE = "imu"
VISUAL_PREFIX = "visual_"
MESH_FORMATS = (*UNITLESS_FORMATS, ".msh")  # what MuJoCo reads
SOLE_BOX_THICKNESS = 0.01  # [m]
UNLIMITED_EFFORT = 1e4  # a drive's force limit where the URDF gives none [N, N·m]
ROBOT_CONTYPE, FLOOR_CONTYPE = 2, 1  # the robot collides with the floor, never with itself


class MujocoRobot(NamedTuple):
    model: mujoco.MjModel
    spec: mujoco.MjSpec
    warnings: list           # geometry dropped or added, one line each
    notices: list            # geometry read otherwise than the URDF's collision elements say, one line each


def _urdf_for_mujoco(robot, soles, package_dirs):
    """URDF text for MuJoCo's importer, the warnings and the notices (:mod:`humanoid_balance.model.meshes`):
    collision meshes resolved and, in a format MuJoCo does not read, converted (cached); the feet of ``soles``
    without collision geometry collide where they are drawn; meshes that cannot be used dropped (each named);
    each primitive visual turned into a collision element ``visual_<k>`` (made contact-free below), visual meshes
    left out."""
    tree = ElementTree.parse(robot.urdf_path)
    root = tree.getroot()
    feet = [rigid_body_links(robot.model, sole) for sole in soles if robot.model.existFrame(sole)]
    report = resolve_meshes(root, robot.urdf_path, package_dirs, MESH_FORMATS, feet, kinds=("collision",))
    warnings = [f"link '{link}': {kind} mesh {filename} dropped: {reason}"
                for link, kind, filename, reason in report.dropped]
    notices = [f"link '{link}': no collision geometry; its foot collides where it is drawn (its visual geometry)"
               for link in report.from_visual]
    suffixes = sorted({Path(original).suffix for _, original, _ in report.converted})
    if report.converted:
        notices.append(f"{len(report.converted)} collision meshes in {', '.join(suffixes)} read as STL converted by "
                       f"trimesh, cached in {Path(report.converted[0][2]).parent}")
    counter = iter(range(1 << 30))
    for link in root.iter("link"):
        for element in link.findall("visual"):
            link.remove(element)
            if element.find("geometry/mesh") is None:
                element.tag = "collision"
                element.set("name", f"{VISUAL_PREFIX}{next(counter)}")
                link.append(element)
    compiler = ElementTree.fromstring(  # a link without <inertial> (a finger's) moves as a speck, not as nothing
        f'<mujoco><compiler fusestatic="false" discardvisual="false" balanceinertia="true" boundmass="{SPECK_MASS}" '
        f'boundinertia="{SPECK_MASS * 1e-4}"/></mujoco>')
    root.insert(0, compiler)
    return ElementTree.tostring(root, encoding="unicode"), warnings, notices


SLIDER_MASS = 1e-3  # the body that lets a loop's unconstrained translation slide [kg]


def _free_unconstrained_axes(spec, loop):
    """Slide joints along the translations of frame_a that ``loop`` leaves free, on frame_a's (massless) body."""
    free = [axis for axis in ("x", "y", "z") if axis not in loop.axes]
    body = spec.body(loop.frame_a)
    if not free or body.mass > 0.0 or body.first_body() is not None:
        return  # a link of the mechanism, not a cut frame on it: its planar loops stay connected in full
    body.mass, body.inertia, body.explicitinertial = SLIDER_MASS, [SLIDER_MASS * 1e-4] * 3, True
    for axis in free:
        body.add_joint(name=f"{loop.name}_free_{axis}", type=mujoco.mjtJoint.mjJNT_SLIDE,
                       axis=[float(axis == "x"), float(axis == "y"), float(axis == "z")], armature=0.01)


def build_mujoco_model(robot, soles=(), friction=1.0, force_torque_sensors=False,
                       timestep=0.0005, equality_solimp=(0.999, 0.9999, 0.001, 0.5, 2.0), sole_rectangles=None,
                       package_dirs=()):
    """Compile the MjModel of ``robot`` (a RobotModel: its URDF, loops and actuated joints); returns a
    :class:`MujocoRobot` (model, spec, warnings, notices).

    Args:
        soles: sole frames (URDF links) whose collision geometry touches the floor; F/T sensors go there.
        sole_rectangles: SoleRectangle per sole: a sole whose rigid body has no collision geometry left gets
            this box (its top face on the sole plane).
        package_dirs: where ``package://`` meshes are looked up before ROS_PACKAGE_PATH.
        friction: sliding friction coefficient of the soles and the floor.
        timestep: integration step [s].
        equality_solimp: MuJoCo impedance of the loop constraints; near 1 so that the light linkage bodies do
            not make them soft (MuJoCo's default lets a loaded knee linkage open by millimetres). Their time
            constant is 2·timestep, the stiffest MuJoCo allows; stiff loops need timestep ≤ 0.5 ms to stay stable
            (at 1 ms a pushed robot in free fall shakes its tie rods loose).
    """
    urdf_path = robot.urdf_path
    text, warnings, notices = _urdf_for_mujoco(robot, soles, package_dirs)
    spec = mujoco.MjSpec.from_string(text)
    bodies = {body.name for body in spec.bodies}
    for sole in soles:
        if sole not in bodies:
            raise ValueError(f"{urdf_path}: sole '{sole}' is not a link of the URDF (a sole frame for the plant must "
                             "be a link; humanoid-balance init adds one)")
    spec.option.timestep = timestep
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    root = spec.worldbody.first_body()
    root.add_freejoint(name="root")
    root.add_site(name=IMU_SITE, pos=[0, 0, 0])
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[20, 20, 0.1],
                            friction=[friction, 0.005, 0.0001])
    spec.worldbody.add_light(pos=[0, 0, 3], dir=[0, 0, -1])
    for geom in spec.geoms:
        if geom.name.startswith(VISUAL_PREFIX):
            geom.contype, geom.conaffinity, geom.group = 0, 0, 1
            geom.rgba = [0.55, 0.62, 0.72, 1.0]
        elif geom.name == "floor":
            geom.contype, geom.conaffinity = FLOOR_CONTYPE, ROBOT_CONTYPE
        else:
            geom.friction = [friction, 0.005, 0.0001]
            geom.condim = 4
            geom.contype, geom.conaffinity = ROBOT_CONTYPE, FLOOR_CONTYPE
    warnings += _add_missing_sole_boxes(spec, soles, sole_rectangles, friction)

    if robot.spec.loops:
        # anchor at frame_a's origin, frame_b at the identity pose in frame_a (closed loops), torque scale 1
        data = [0.0] * mujoco.mjNEQDATA
        data[6], data[10] = 1.0, 1.0
        for loop in robot.spec.loops:
            weld = any(axis.startswith("r") for axis in loop.axes)
            if not weld:
                _free_unconstrained_axes(spec, loop)
            spec.add_equality(name=loop.name, objtype=mujoco.mjtObj.mjOBJ_BODY, name1=loop.frame_a, name2=loop.frame_b,
                              type=mujoco.mjtEq.mjEQ_WELD if weld else mujoco.mjtEq.mjEQ_CONNECT,
                              solref=[2.0 * timestep, 1.0], solimp=list(equality_solimp), data=data)
    unlimited = []
    for name in robot.actuated_names:  # the order of the suite's actuator_commands (MuJoCo's joint order may differ)
        joint = spec.joint(name)
        limit = joint.actfrcrange[1] if joint.actfrclimited else UNLIMITED_EFFORT
        if limit <= 0.0:  # effort="0": no limit given
            unlimited.append(name)
            limit, joint.actfrclimited = UNLIMITED_EFFORT, False
        spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT, biastype=mujoco.mjtBias.mjBIAS_AFFINE,
                          forcelimited=True,
                          forcerange=[-limit, limit], ctrllimited=False)
    if unlimited:
        notices.append(f"joints {', '.join(unlimited)}: effort limit 0 in the URDF, driven without a limit")
    spec.add_sensor(name="imu_orientation", type=mujoco.mjtSensor.mjSENS_FRAMEQUAT, objtype=mujoco.mjtObj.mjOBJ_SITE,
                    objname=IMU_SITE)
    spec.add_sensor(name="imu_gyro", type=mujoco.mjtSensor.mjSENS_GYRO, objtype=mujoco.mjtObj.mjOBJ_SITE,
                    objname=IMU_SITE)
    spec.add_sensor(name="imu_accelerometer", type=mujoco.mjtSensor.mjSENS_ACCELEROMETER,
                    objtype=mujoco.mjtObj.mjOBJ_SITE, objname=IMU_SITE)
    if force_torque_sensors:  # between the ankle and the foot, at the foot link's origin, as on a real robot
        for sole in soles:
            spec.body(sole).parent.add_site(name=f"{sole}_ft")
            for kind, sensor in (("force", mujoco.mjtSensor.mjSENS_FORCE), ("torque", mujoco.mjtSensor.mjSENS_TORQUE)):
                spec.add_sensor(name=f"{sole}_{kind}", type=sensor, objtype=mujoco.mjtObj.mjOBJ_SITE,
                                objname=f"{sole}_ft")
    return MujocoRobot(spec.compile(), spec, warnings, notices)


def _add_missing_sole_boxes(spec, soles, rectangles, friction):
    """A box under every sole whose rigid body (the sole link and the links welded to it) has no collision
    geometry, from its sole rectangle; returns the warnings naming each box added or missing."""
    if not soles:
        return []
    model = spec.compile()
    colliding = {int(model.body_weldid[model.geom_bodyid[g]]) for g in range(model.ngeom)
                 if model.geom_contype[g] == ROBOT_CONTYPE}
    warnings = []
    for k, sole in enumerate(soles):
        if int(model.body_weldid[model.body(sole).id]) in colliding:
            continue
        if not rectangles:
            warnings.append(f"sole '{sole}': its foot has no collision geometry the plant can use and no sole "
                            "rectangle is given: it will go through the floor (set sole_rectangles)")
            continue
        r = rectangles[k]
        spec.body(sole).add_geom(
            name=f"{sole}_box", type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[(r.x_max - r.x_min) / 2, (r.y_max - r.y_min) / 2, SOLE_BOX_THICKNESS / 2],
            pos=[(r.x_max + r.x_min) / 2, (r.y_max + r.y_min) / 2, -SOLE_BOX_THICKNESS / 2],
            friction=[friction, 0.005, 0.0001], condim=4, contype=ROBOT_CONTYPE, conaffinity=FLOOR_CONTYPE)
        warnings.append(f"sole '{sole}': its foot has no collision geometry the plant can use: added the box of its "
                        "sole rectangle")
    return warnings
