"""What ``humanoid-balance init`` finds in a robot's URDF from its two foot links alone (no ROS here).

- the sole of each foot: the lowest face of the foot's collision geometry (boxes, spheres, cylinders, capsules,
  meshes, ``package://`` resolved), at the reference configuration with the root upright; a sole frame is
  added there (origin below the foot link, axes world-aligned) with the rectangle of the geometry's points on it;
- the leg of each foot: its serial-equivalent output joints from the root to the foot, hip to ankle;
- limb candidates: the other chains that end in a leaf, from the last branching of the tree;
- a standing stance with bent knees (serial robots): both soles raised by a fraction of the leg length against
  the fixed root, flat and centred under the CoM, by damped least squares on pinocchio's frame Jacobians from a
  slightly flexed knee (a straight leg is a singular start: no vertical motion to first order);
- drive gains scaled to the robot's mass and leg length.
Units: SI.
"""
import difflib
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from humanoid_balance.model.errors import ModelFileError
from humanoid_balance.model.soles import SoleRectangle

__all__ = ["Sole", "find_feet", "find_sole", "leg_chains", "leg_joints", "limb_candidates", "pitch_joints", "standing_stance", "drive_gains"]

SOLE_TOLERANCE = 0.003   # collision points this close to the lowest one lie on the sole [m]
LEVEL_TOLERANCE = 0.05   # the two soles at the model's reference configuration are this level, or not both feet [m]
CROUCH = 0.06            # standing stance: the soles raised by this fraction of the leg length
GRAVITY = 9.81


class Sole(NamedTuple):
    foot_link: str
    placement: pin.SE3        # sole frame in the foot link's frame
    rectangle: SoleRectangle  # in the sole frame [m]
    points: int               # collision points found on the sole
    height: float             # of the sole above the root, at the configuration it was found in [m]


def _geometry_points(geometry, scale):
    """Points of a coal collision shape whose convex hull is the shape (enough to find its lowest face) [m]."""
    kind = type(geometry).__name__
    if kind == "Box":
        signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
        return signs * np.asarray(geometry.halfSide)
    if kind == "Sphere":
        r = geometry.radius
        return np.array([[0, 0, -r], [0, 0, r], [r, 0, 0], [-r, 0, 0], [0, r, 0], [0, -r, 0]], dtype=float)
    if kind in ("Cylinder", "Capsule"):
        angles = np.linspace(0.0, 2 * np.pi, 32, endpoint=False)
        ring = np.column_stack([geometry.radius * np.cos(angles), geometry.radius * np.sin(angles)])
        ends = [geometry.halfLength, -geometry.halfLength]
        points = np.vstack([np.column_stack([ring, np.full(len(ring), z)]) for z in ends])
        if kind == "Capsule":
            points = np.vstack([points, [[0, 0, geometry.halfLength + geometry.radius],
                                         [0, 0, -geometry.halfLength - geometry.radius]]])
        return points
    if hasattr(geometry, "num_vertices"):  # meshes (BVH models) and convex hulls
        vertices = geometry.vertices()
        return np.asarray(vertices, dtype=float).reshape(-1, 3) * np.asarray(scale)
    return None


def find_sole(urdf_path, model, q, foot_link, package_dirs=()):
    """The sole of ``foot_link``: the lowest face of the collision geometry of its rigid body at configuration q
    (fixed-base model, root upright), as a :class:`Sole`.

    Raises:
        ModelFileError: the link is unknown, has no usable collision geometry, or touches the ground at a point.
    """
    if not model.existFrame(foot_link):
        links = [f.name for f in model.frames if f.type == pin.FrameType.BODY]
        close = difflib.get_close_matches(foot_link, links, n=3)
        hint = (f"did you mean {', '.join(close)}?" if close
                else "links that end a chain: " + ", ".join(_leaf_links(model, links)))
        raise ModelFileError(urdf_path, f"--feet {foot_link}", f"not a link of the URDF; {hint}")
    frame = model.frames[model.getFrameId(foot_link)]
    try:
        geometry = pin.buildGeomFromUrdf(model, str(urdf_path), pin.GeometryType.COLLISION,
                                         package_dirs=[str(d) for d in package_dirs])
    except ValueError as error:
        raise ModelFileError(urdf_path, "collision", f"{error} (give --package-dirs or set ROS_PACKAGE_PATH)") from None
    data, geometry_data = model.createData(), geometry.createData()
    pin.framesForwardKinematics(model, data, q)
    pin.updateGeometryPlacements(model, data, geometry, geometry_data, q)
    points = []
    for index, item in enumerate(geometry.geometryObjects):
        if item.parentJoint != frame.parentJoint:
            continue
        local = _geometry_points(item.geometry, item.meshScale)
        if local is not None:
            points.append(np.array([geometry_data.oMg[index].act(p) for p in local]))
    if not points:
        raise ModelFileError(urdf_path, f"link '{foot_link}'", "its rigid body has no collision geometry; add a "
                             "collision box for the sole, or set sole_rectangles in the robot configuration")
    points = np.vstack(points)
    lowest = points[:, 2].min()
    on_sole = points[points[:, 2] < lowest + SOLE_TOLERANCE]
    foot = data.oMf[model.getFrameId(foot_link)]
    origin = np.array([foot.translation[0], foot.translation[1], lowest])
    x_min, y_min = on_sole[:, :2].min(axis=0) - origin[:2]
    x_max, y_max = on_sole[:, :2].max(axis=0) - origin[:2]
    if x_max - x_min < 0.01 or y_max - y_min < 0.01:
        raise ModelFileError(urdf_path, f"link '{foot_link}'", f"its lowest collision geometry is a point or a line "
                             f"({x_max - x_min:.3f} × {y_max - y_min:.3f} m): a point foot cannot balance by its ZMP; "
                             "set sole_rectangles if the real foot is flat")
    placement = foot.inverse() * pin.SE3(np.eye(3), origin)
    return Sole(foot_link, placement, SoleRectangle(float(x_min), float(x_max), float(y_min), float(y_max)),
                len(on_sole), float(lowest))


def _leaf_links(model, links):
    children = {model.frames[i].parentFrame for i in range(len(model.frames))}
    return [name for name in links if model.getFrameId(name) not in children][:12]


def _support_joint_names(model, frame_name):
    joint = model.frames[model.getFrameId(frame_name)].parentJoint
    return [model.names[j] for j in model.supports[joint] if j > 0]


def leg_joints(robot, sole_frame):
    """The serial-equivalent output joints from the root to ``sole_frame``, hip to ankle."""
    outputs = set(robot.output_names)
    return tuple(name for name in _support_joint_names(robot.model, sole_frame) if name in outputs)


def find_feet(urdf_path, robot, foot_links, package_dirs=()):
    """Each foot link's :class:`Sole` (at the reference configuration) and leg (:func:`leg_chains`), checked: the
    soles are level there, as feet are.

    Raises:
        ModelFileError: naming the URDF and the link that is not a foot.
    """
    soles = [find_sole(urdf_path, robot.model, robot.reference_q, link, package_dirs) for link in foot_links]
    heights = [sole.height for sole in soles]
    if max(heights) - min(heights) > LEVEL_TOLERANCE:
        low, high = (soles[int(np.argmin(heights))], soles[int(np.argmax(heights))])
        raise ModelFileError(urdf_path, f"--feet {high.foot_link}", f"its sole is {high.height - low.height:.3f} m "
                             f"above {low.foot_link}'s in the reference configuration: not a foot (feet stand level)")
    return soles, leg_chains(robot, foot_links, urdf_path)


def leg_chains(robot, foot_links, source):
    """The leg of each foot link (:func:`leg_joints`), checked: every foot hangs on output joints and the legs share
    none.

    Raises:
        ModelFileError: naming ``source`` (the URDF) and the foot whose leg is wrong.
    """
    legs = [leg_joints(robot, link) for link in foot_links]
    for foot, leg in zip(foot_links, legs):
        if not leg:
            raise ModelFileError(source, f"--feet {foot}", "no output joint between the root and this link: not a leg")
    shared = set(legs[0]).intersection(*legs[1:])
    if shared:
        raise ModelFileError(source, "--feet", f"the legs of {' and '.join(foot_links)} share joints {sorted(shared)}: "
                             "give links below the hips")
    return legs


def limb_candidates(robot, legs):
    """Chains of output joints that end in a leaf of the tree, from its last branching (arms, head, grippers), as
    {name: (joints, end frame)}; the name is the end link's."""
    model = robot.model
    outputs = set(robot.output_names)
    taken = {joint for leg in legs for joint in leg}
    children = {j: [] for j in range(model.njoints)}
    for j in range(1, model.njoints):
        children[model.parents[j]].append(j)
    limbs = {}
    for leaf in (j for j in range(1, model.njoints) if not children[j]):
        chain, joint = [], leaf
        while joint > 0 and model.names[joint] not in taken:
            chain.append(joint)
            parent = model.parents[joint]
            if parent == 0 or len(children[parent]) > 1:
                break
            joint = parent
        names = [model.names[j] for j in reversed(chain) if model.names[j] in outputs]
        if len(names) < 2:
            continue
        end = _end_link(model, leaf)
        limbs[end] = (tuple(names), end)
    return limbs


def _end_link(model, joint):
    """The body frame attached after ``joint`` that is furthest down its fixed links."""
    frames = [i for i, f in enumerate(model.frames) if f.parentJoint == joint and f.type == pin.FrameType.BODY]
    return model.frames[frames[-1]].name


def standing_stance(robot, soles, legs, crouch=CROUCH, iterations=300):
    """A standing configuration with bent knees of a serial fixed-base ``robot``: both soles raised by ``crouch``
    × leg length relative to the root at the reference, kept flat and centred under the CoM, found by damped least
    squares from slightly flexed knees; returns (q, leg length [m], lowering [m]).

    Raises:
        ModelFileError: no such configuration within the joint limits.
    """
    model, data = robot.model, robot.model.createData()
    q = robot.reference_q.copy()
    lower, upper = model.lowerPositionLimit, model.upperPositionLimit
    sole_ids = [model.getFrameId(sole) for sole in soles]
    pin.framesForwardKinematics(model, data, q)
    start = [data.oMf[i].copy() for i in sole_ids]
    hips = [data.oMi[model.getJointId(leg[0])].translation for leg in legs]
    length = float(np.mean([hip[2] - sole.translation[2] for hip, sole in zip(hips, start)]))
    lowering = crouch * length
    columns = [[model.joints[model.getJointId(name)].idx_v for name in leg] for leg in legs]
    for leg, sole_id in zip(legs, sole_ids):
        _flex_knee(robot, q, leg, sole_id)
    for _ in range(iterations):
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        com = pin.centerOfMass(model, data, q)
        middle = np.mean([m.translation for m in start], axis=0)
        errors, jacobians = [], []
        for sole_id, origin in zip(sole_ids, start):
            target = origin.translation + np.array([com[0] - middle[0], 0.0, lowering])
            current = data.oMf[sole_id]
            errors.append(np.r_[target - current.translation, pin.log3(origin.rotation @ current.rotation.T)])
            jacobians.append(pin.getFrameJacobian(model, data, sole_id, pin.LOCAL_WORLD_ALIGNED))
        error, J = np.concatenate(errors), np.vstack(jacobians)
        if np.linalg.norm(error) < 1e-7:
            break
        used = sorted(c for leg in columns for c in leg)
        J = J[:, used]
        step = J.T @ np.linalg.solve(J @ J.T + 1e-6 * np.eye(len(error)), error)
        q[used] = np.clip(q[used] + np.clip(step, -0.1, 0.1), lower[used], upper[used])
    else:
        raise ModelFileError(robot.urdf_path, "stance", f"no standing stance {lowering:.3f} m below the reference "
                             f"within the joint limits (‖error‖ = {np.linalg.norm(error):.2e}); set stance_joints "
                             "and stance_positions")
    return q, length, lowering


def pitch_joints(robot, q, joints):
    """Those of ``joints`` that turn about the world y axis at configuration q, in the order given: for a leg from
    hip to ankle, its hip pitch, knee and ankle pitch (REP-103: x forward, y left)."""
    model, data = robot.model, robot.model.createData()
    pin.computeJointJacobians(model, data, q)
    pitching = []
    for name in joints:
        joint = model.getJointId(name)
        axis = pin.getJointJacobian(model, data, joint, pin.LOCAL_WORLD_ALIGNED)[3:, model.joints[joint].idx_v]
        if abs(axis[1]) > 0.9 * np.linalg.norm(axis) > 0.0:
            pitching.append(name)
    return tuple(pitching)


def _flex_knee(robot, q, leg, sole_id, angle=0.3):
    """Bend the leg's knee (its middle pitch joint) by ``angle`` [rad] the way that moves the sole backwards."""
    pitching = pitch_joints(robot, q, leg)
    if not pitching:
        return
    model, data = robot.model, robot.model.createData()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    knee = model.joints[model.getJointId(pitching[len(pitching) // 2])].idx_v
    backwards = -np.sign(pin.getFrameJacobian(model, data, sole_id, pin.LOCAL_WORLD_ALIGNED)[0, knee])
    q[knee] = np.clip(backwards * angle, model.lowerPositionLimit[knee], model.upperPositionLimit[knee])


def drive_gains(mass, leg_length):
    """Plant drive gains for a robot of ``mass`` [kg] and ``leg_length`` [m]: position drives that give 0.05 rad
    (revolute) or 2.5 mm (prismatic) under the whole weight at the leg's length, damping with a 10 ms time constant,
    and a joint impedance ten (prismatic) to two hundred (revolute) times softer; as
    {parameter: (prismatic, revolute)}."""
    weight = mass * GRAVITY
    stiffness = (weight / 0.0025, weight * leg_length / 0.05)
    return {"drive_stiffness": stiffness, "drive_damping": tuple(0.01 * k for k in stiffness),
            "impedance_stiffness": (stiffness[0] / 10.0, stiffness[1] / 200.0),
            "impedance_damping": (0.01 * stiffness[0] / 10.0, 0.03 * stiffness[1] / 100.0)}
