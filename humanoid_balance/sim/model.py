"""MuJoCo model of a robot built from the same URDF + loop-closure YAML the controllers use.

- the URDF spanning tree through MuJoCo's importer (fixed links kept as bodies, visuals dropped;
  ``package://`` meshes are not needed: collision is the URDF's primitive shapes);
- a free joint on the root link, a floor plane, friction on the sole boxes;
- each loop closure as an equality constraint between frame_a and frame_b: ``weld`` when the loop constrains a
  rotation, else ``connect`` (the loops are closed at the URDF zero configuration, MuJoCo's qpos0);
- one actuator per actuated joint, force-limited to the URDF effort limit; its gain and bias make it a
  position, velocity or effort drive (set by :class:`~humanoid_balance.sim.simulation.Simulation`), so
  MuJoCo integrates the drive's stiffness and damping implicitly;
- an IMU at the root link (orientation, gyro, accelerometer) and optional force/torque sensors between
  each foot and its ankle (at the foot link's origin, the link carrying the sole).
Units: SI.
"""
import re
from pathlib import Path

import mujoco

from humanoid_balance.model.loop_closures import load_loop_closures

__all__ = ["build_mujoco_model", "IMU_SITE"]

IMU_SITE = "imu"
VISUAL_PREFIX = "visual_"
COMPILER = '<mujoco><compiler fusestatic="false" discardvisual="false" balanceinertia="true"/></mujoco>'


def _urdf_without_meshes(urdf_path):
    """URDF text with the MuJoCo compiler options, mesh geometry replaced by nothing (primitives remain), and
    each primitive visual turned into a collision element named ``visual_<k>`` (made contact-free below), so
    that renderings show the robot's shape."""
    text = Path(urdf_path).read_text()
    for element in ("visual", "collision"):
        text = re.sub(rf"<{element}>(?:(?!</{element}>).)*<mesh[^>]*/>.*?</{element}>", "", text, flags=re.S)
    counter = iter(range(1 << 30))
    text = re.sub(r"<visual>(.*?)</visual>", lambda m: f'<collision name="{VISUAL_PREFIX}{next(counter)}">'
                  f"{m.group(1)}</collision>", text, flags=re.S)
    return re.sub(r"(<robot[^>]*>)", r"\1" + COMPILER, text, count=1)


def build_mujoco_model(urdf_path, loops_path=None, soles=("left_sole", "right_sole"), friction=1.0,
                       force_torque_sensors=False, timestep=0.0005, equality_solimp=(0.999, 0.9999, 0.001, 0.5, 2.0)):
    """Compile the MjModel; returns (model, spec).

    Args:
        soles: sole frames (URDF links) whose collision geometry touches the floor; F/T sensors go there.
        friction: sliding friction coefficient of the soles and the floor.
        timestep: integration step [s].
        equality_solimp: MuJoCo impedance of the loop constraints; near 1 so that the light linkage bodies do
            not make them soft (MuJoCo's default lets a loaded knee linkage open by millimetres). Their time
            constant is 2·timestep, the stiffest MuJoCo allows; stiff loops need timestep ≤ 0.5 ms to stay stable
            (at 1 ms a pushed robot in free fall shakes its tie rods loose).
    """
    spec = mujoco.MjSpec.from_string(_urdf_without_meshes(urdf_path))
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
        elif geom.name != "floor":
            geom.friction = [friction, 0.005, 0.0001]
            geom.condim = 4

    if loops_path is not None:
        loop_spec = load_loop_closures(loops_path)
        # anchor at frame_a's origin, frame_b at the identity pose in frame_a (closed loops), torque scale 1
        data = [0.0] * mujoco.mjNEQDATA
        data[6], data[10] = 1.0, 1.0
        for loop in loop_spec.loops:
            weld = any(axis.startswith("r") for axis in loop.axes)
            spec.add_equality(name=loop.name, objtype=mujoco.mjtObj.mjOBJ_BODY, name1=loop.frame_a, name2=loop.frame_b,
                              type=mujoco.mjtEq.mjEQ_WELD if weld else mujoco.mjtEq.mjEQ_CONNECT,
                              solref=[2.0 * timestep, 1.0], solimp=list(equality_solimp), data=data)
        actuated = loop_spec.actuated
    else:
        actuated = [joint.name for joint in spec.joints if joint.name != "root"]
    for name in actuated:
        joint = spec.joint(name)
        limit = joint.actfrcrange[1] if joint.actfrclimited else 1e4
        spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT, biastype=mujoco.mjtBias.mjBIAS_AFFINE,
                          forcelimited=True,
                          forcerange=[-limit, limit], ctrllimited=False)
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
    return spec.compile(), spec
