"""What ``humanoid-balance init`` finds in a robot's URDF from its two foot links alone (no ROS here).

- the sole of each foot: the lowest face of the foot's collision geometry (boxes, spheres, cylinders, capsules,
  meshes, ``package://`` resolved), at the reference configuration with the root upright; a sole frame is
  added there (origin below the foot link, axes world-aligned) with the rectangle of the geometry's points on it;
- the leg of each foot: its serial-equivalent output joints from the root to the foot, hip to ankle;
- limb candidates: the other chains that end in a leaf, from the last branching of the tree;
- a standing stance with bent knees (serial robots): both soles raised by a fraction of the leg length against
  the fixed root, flat and centred under the CoM, by damped least squares on pinocchio's frame Jacobians from a
  slightly flexed knee (a straight leg is a singular start: no vertical motion to first order);
- feet the reference does not hold flat (Cassie's, drawn pointing down): the face of the collision geometry each
  rests on (a box's bottom, a cylinder's side: a line contact), laid on the ground by the same stance, every loop
  closed;
- drive gains scaled to the robot's mass and leg length.
Units: SI.
"""
import difflib
import xml.etree.ElementTree as ElementTree
from typing import NamedTuple

import numpy as np
import pinocchio as pin
from scipy.spatial import ConvexHull

from humanoid_balance.model.continuation import continue_closure
from humanoid_balance.model.errors import ClosureError, ModelFileError
from humanoid_balance.model.legs import leg_joints, pitch_joints
from humanoid_balance.model.meshes import UNITLESS_FORMATS, resolve_meshes, rigid_body_links
from humanoid_balance.model.soles import SoleRectangle

__all__ = ["Sole", "FlatFeet", "RestingFace", "find_feet", "find_flat_feet", "find_sole", "resting_face", "leg_chains",
           "limb_candidates", "SoleNotFound", "given_sole", "StanceNotFound", "standing_stance", "drive_gains"]

SOLE_TOLERANCE = 0.003   # collision points this close to the lowest one lie on the sole [m]
LEVEL_TOLERANCE = 0.05   # the two soles at the model's reference configuration are this level, or not both feet [m]
CROUCH = 0.06            # standing stance: the soles raised by this fraction of the leg length
FLAT = np.radians(1.0)   # a foot tilted less than this at the reference stands flat there [rad]
LINE_WIDTH = 0.3          # resting points narrower than this fraction of their length are a line contact
MAX_FACE_TILT_COS = 0.25  # faces tilted more than acos(0.25) ≈ 76° from the ground are not what a foot stands on
GRAVITY = 9.81
STANCE_TOLERANCE = 1e-5   # the stance's task error accepted [m, rad]: a micrometre off flat and level


class Sole(NamedTuple):
    foot_link: str
    placement: pin.SE3        # sole frame in the foot link's frame
    rectangle: SoleRectangle  # in the sole frame [m]
    points: int               # collision points found on the sole
    height: float             # of the sole above the root, at the configuration it was found in [m]
    from_visual: bool = False  # found in the visual geometry (the foot has no collision geometry)


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


def _foot_points(urdf_path, model, data, q, foot_link, package_dirs):
    """The collision points of ``foot_link``'s rigid body at configuration q (data: its frame placements), in the
    world frame [m], and whether they come from its visual geometry (:mod:`~humanoid_balance.model.meshes`: a body
    without collision geometry is touched where it is drawn).

    Raises:
        ModelFileError: the link is unknown or its rigid body has no usable geometry.
    """
    if not model.existFrame(foot_link):
        links = [f.name for f in model.frames if f.type == pin.FrameType.BODY]
        close = difflib.get_close_matches(foot_link, links, n=3)
        hint = (f"did you mean {', '.join(close)}?" if close
                else "links that end a chain: " + ", ".join(_leaf_links(model, links)))
        raise ModelFileError(urdf_path, f"--feet {foot_link}", f"not a link of the URDF; {hint}")
    frame = model.frames[model.getFrameId(foot_link)]
    body = rigid_body_links(model, foot_link)
    tree = ElementTree.parse(urdf_path)
    for link in tree.getroot().iter("link"):  # only the foot's meshes are read
        if link.get("name") not in body:
            for element in link.findall("collision") + link.findall("visual"):
                link.remove(element)
    report = resolve_meshes(tree.getroot(), urdf_path, package_dirs, UNITLESS_FORMATS, [body], ("collision",))
    try:
        geometry = pin.buildGeomFromUrdfString(model, ElementTree.tostring(tree.getroot(), encoding="unicode"),
                                               pin.GeometryType.COLLISION)
    except ValueError as error:
        raise ModelFileError(urdf_path, f"link '{foot_link}'", f"{error}") from None
    geometry_data = geometry.createData()
    pin.updateGeometryPlacements(model, data, geometry, geometry_data, q)
    points = []
    for index, item in enumerate(geometry.geometryObjects):
        if item.parentJoint != frame.parentJoint:
            continue
        local = _geometry_points(item.geometry, item.meshScale)
        if local is not None:
            points.append(np.array([geometry_data.oMg[index].act(p) for p in local]))
    if not points:
        dropped = "; ".join(f"{kind} mesh {name} of '{link}' {reason}" for link, kind, name, reason in report.dropped)
        raise SoleNotFound(urdf_path, foot_link, "its rigid body has no collision or visual geometry"
                           + (f" that can be read ({dropped})" if dropped else ""))
    return np.vstack(points), bool(report.from_visual)


class StanceNotFound(ModelFileError):
    """No standing stance within the joint limits; the message names the limits that hold the legs."""


class SoleNotFound(ModelFileError):
    """A foot whose sole cannot be found in its geometry (none, or only a point or a line touches the ground, and no
    face can be laid flat): its sole must be given. ``link``: the foot link."""

    def __init__(self, path, link, detail):
        super().__init__(path, f"link '{link}'", detail)
        self.link = link


def find_sole(urdf_path, model, q, foot_link, package_dirs=()):
    """The sole of ``foot_link``: the lowest face of the collision geometry of its rigid body at configuration q
    (fixed-base model, root upright), as a :class:`Sole`.

    Raises:
        ModelFileError: the link is unknown, has no usable collision geometry, or touches the ground at a point.
    """
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    points, from_visual = _foot_points(urdf_path, model, data, q, foot_link, package_dirs)
    lowest = points[:, 2].min()
    on_sole = points[points[:, 2] < lowest + SOLE_TOLERANCE]
    foot = data.oMf[model.getFrameId(foot_link)]
    origin = np.array([foot.translation[0], foot.translation[1], lowest])
    x_min, y_min = on_sole[:, :2].min(axis=0) - origin[:2]
    x_max, y_max = on_sole[:, :2].max(axis=0) - origin[:2]
    if x_max - x_min < 0.01 or y_max - y_min < 0.01:
        raise SoleNotFound(urdf_path, foot_link, f"its lowest geometry is a point or a line ({x_max - x_min:.3f} × "
                           f"{y_max - y_min:.3f} m): a point foot cannot balance by its ZMP")
    placement = foot.inverse() * pin.SE3(np.eye(3), origin)
    return Sole(foot_link, placement, SoleRectangle(float(x_min), float(x_max), float(y_min), float(y_max)),
                len(on_sole), float(lowest), from_visual)


class RestingFace(NamedTuple):
    placement: pin.SE3   # in the foot link, of a frame at the face's centre, world-aligned once the face lies flat
    tilt: float          # of the face from the ground at the configuration it was found in [rad]
    line: bool           # a line contact along the frame's x axis (a cylinder's side): it may roll about it


def resting_face(urdf_path, model, q, foot_link, package_dirs=()):
    """The face of ``foot_link``'s collision geometry it stands on, found from its shape when the model's reference
    does not hold the foot flat: among the faces of the convex hull of the collision points, the one with the
    largest resting area × cos(its tilt from the ground) at q (a box's bottom, a cylinder's lowest line widened by
    SOLE_TOLERANCE, a mesh's flat underside), as a :class:`RestingFace`.

    Raises:
        ModelFileError: as :func:`find_sole`, or no face of the foot faces the ground.
    """
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    points, _ = _foot_points(urdf_path, model, data, q, foot_link, package_dirs)
    best = None
    for face in np.unique(np.round(ConvexHull(points).equations, 9), axis=0):
        normal, offset = face[:3], face[3]  # outward normal; points inside have normal·p + offset ≤ 0
        cos_tilt = -normal[2]
        if cos_tilt < MAX_FACE_TILT_COS:
            continue
        resting = points[-(points @ normal + offset) < SOLE_TOLERANCE]
        u = np.cross(normal, [1.0, 0.0, 0.0] if abs(normal[0]) < 0.9 else [0.0, 1.0, 0.0])
        u /= np.linalg.norm(u)
        planar = np.column_stack([resting @ u, resting @ np.cross(normal, u)])
        area = ConvexHull(planar).volume if np.linalg.matrix_rank(planar - planar.mean(axis=0), 1e-6) == 2 else 0.0
        if best is None or area * cos_tilt > best[0]:
            best = (area * cos_tilt, normal, resting)
    if best is None or best[0] == 0.0:
        raise SoleNotFound(urdf_path, foot_link, "no face of its geometry faces the ground at the reference "
                           "configuration")
    _, normal, resting = best
    mean = resting.mean(axis=0)
    _, spread, axes = np.linalg.svd(resting - mean)
    extent = (resting - mean) @ axes[:2].T
    centre = mean + 0.5 * (extent.min(axis=0) + extent.max(axis=0)) @ axes[:2]  # of the face's extent
    line = spread[1] < LINE_WIDTH * spread[0]
    if line:  # a line contact (a cylinder's side) rests on any normal about its line: the one nearest the ground's
        down = np.array([0.0, 0.0, -1.0]) + axes[0][2] * axes[0]
        normal = down / np.linalg.norm(down)
    align = pin.Quaternion.FromTwoVectors(normal, np.array([0.0, 0.0, -1.0])).toRotationMatrix()  # face to ground
    if line:  # the sole frame's x along the line
        along = align @ axes[0]
        align = pin.rpy.rpyToMatrix(0.0, 0.0, -np.arctan2(along[1], along[0])) @ align
    foot = data.oMf[model.getFrameId(foot_link)]
    placement = foot.inverse() * pin.SE3(align.T, centre)
    return RestingFace(placement, float(np.arccos(np.clip(-normal[2], -1.0, 1.0))), bool(line))


def _leaf_links(model, links):
    children = {model.frames[i].parentFrame for i in range(len(model.frames))}
    return [name for name in links if model.getFrameId(name) not in children][:12]


def given_sole(model, q, foot_link, height, rectangle):
    """The :class:`Sole` of ``foot_link`` given by its user: the sole plane ``height`` [m] above the link's origin
    (negative: below) at configuration q, axes world-aligned there, ``rectangle`` around the point under the
    origin."""
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    foot = data.oMf[model.getFrameId(foot_link)]
    origin = foot.translation + np.array([0.0, 0.0, height])
    return Sole(foot_link, foot.inverse() * pin.SE3(np.eye(3), origin), rectangle, 0, float(origin[2]))


def find_feet(urdf_path, robot, foot_links, package_dirs=(), q=None, given=None):
    """Each foot link's :class:`Sole` (at configuration q, by default the reference; ``given``: link → (height,
    rectangle) of the soles the user gave, :func:`given_sole`) and leg (:func:`leg_chains`), checked: the soles are
    level there, as feet are.

    Raises:
        SoleNotFound: a foot's sole cannot be found in its geometry.
        ModelFileError: naming the URDF and the link that is not a foot.
    """
    where = "in the reference configuration" if q is None else "in the stance that lays the feet flat"
    q = robot.reference_q if q is None else q
    given = given or {}
    soles = [given_sole(robot.model, q, link, *given[link]) if link in given
             else find_sole(urdf_path, robot.model, q, link, package_dirs) for link in foot_links]
    heights = [sole.height for sole in soles]
    if max(heights) - min(heights) > LEVEL_TOLERANCE:
        low, high = (soles[int(np.argmin(heights))], soles[int(np.argmax(heights))])
        raise ModelFileError(urdf_path, f"--feet {high.foot_link}", f"its sole is {high.height - low.height:.3f} m "
                             f"above {low.foot_link}'s {where}: not a foot (feet stand level)")
    return soles, leg_chains(robot, foot_links, urdf_path)


class FlatFeet(NamedTuple):
    soles: list          # Sole per foot, found where the feet stand flat
    legs: list           # output joints per leg, hip to ankle
    stance: object       # the standing configuration that lays the feet flat, or None: flat at the reference
    leg_length: float    # hip to sole at the reference [m] (with ``stance``)
    lowering: float      # the soles raised under the root in ``stance`` [m]
    tilt: tuple          # each foot's tilt at the reference [rad]


def find_flat_feet(urdf_path, robot, foot_links, package_dirs=(), chain=None, given=None):
    """The soles and legs of :func:`find_feet` where the feet stand flat: at the reference configuration if they do
    there (or some soles are ``given``), else at the :func:`standing_stance` that lays each foot's
    :func:`resting_face` on the ground (a foot drawn tilted or pointing, as Cassie's in its SDF), with every loop
    of ``chain`` closed.

    Raises:
        ModelFileError: as :func:`find_feet` at the reference, when no face of a foot can be laid flat.
    """
    try:
        soles, legs = find_feet(urdf_path, robot, foot_links, package_dirs, given=given)
        return FlatFeet(soles, legs, None, 0.0, 0.0, (0.0, 0.0))
    except ModelFileError as not_flat:
        if given:
            raise
        faces = [resting_face(urdf_path, robot.model, robot.reference_q, link, package_dirs) for link in foot_links]
        if all(face.tilt < FLAT for face in faces):
            raise not_flat from None
    legs = leg_chains(robot, foot_links, urdf_path)
    q, leg_length, lowering = standing_stance(robot, list(zip(foot_links, faces)), legs, chain=chain)
    soles, legs = find_feet(urdf_path, robot, foot_links, package_dirs, q)
    return FlatFeet(soles, legs, q, leg_length, lowering, tuple(face.tilt for face in faces))


def leg_chains(robot, foot_links, source):
    """The leg of each foot link (:func:`~humanoid_balance.model.legs.leg_joints`), checked: every foot hangs on
    output joints and the legs share none.

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
        end = limb_end_link(model, leaf)
        limbs[end] = (tuple(names), end)
    return limbs


def limb_end_link(model, joint):
    """The body frame attached after ``joint`` that is furthest down its fixed links."""
    frames = [i for i, f in enumerate(model.frames) if f.parentJoint == joint and f.type == pin.FrameType.BODY]
    return model.frames[frames[-1]].name


def standing_stance(robot, soles, legs, crouch=CROUCH, iterations=300, chain=None):
    """A standing configuration with bent knees: both ``soles`` ((frame name, :class:`RestingFace` in it)) flat
    and on their heading at the reference (a line contact only level along its line, free to roll about it), raised
    by ``crouch`` × leg length relative to the fixed root at the reference, with the whole robot's CoM (the root
    link's mass too) above their middle. Damped least squares on pinocchio's frame and CoM Jacobians in the legs'
    output coordinates: per sole its height and rotation (4 rows; 2 for a line), and 2 rows for the CoM, so that a
    leg of five joints can meet them; in the null space the hips' rolls and yaws go back to the reference and the
    soles' horizontal places follow. A serial robot starts from slightly flexed knees (a straight leg is a singular
    start: no vertical motion to first order); a closed-chain robot (``chain``) keeps every loop closed, its
    Jacobians through the output velocity map (eqs. 7, 22) and each step closed by continuation. Returns (q, leg
    length [m], lowering [m]).

    Raises:
        ModelFileError: no such configuration within the joint limits.
    """
    model, data = robot.model, robot.model.createData()
    q = robot.reference_q.copy()
    closed = chain is not None and bool(chain.loops)
    sole_ids = [(model.getFrameId(frame), face.placement) for frame, face in soles]
    tilt_rows = [[1] if face.line else [0, 1, 2] for _, face in soles]  # of the sole's rotation, in its heading
    pin.framesForwardKinematics(model, data, q)
    start = np.array([(data.oMf[i] * placement).translation for i, placement in sole_ids])
    headings = [pin.rpy.rpyToMatrix(0.0, 0.0, pin.rpy.matrixToRpy((data.oMf[i] * placement).rotation)[2])
                for i, placement in sole_ids]
    hips = np.array([data.oMi[model.getJointId(leg[0])].translation for leg in legs])
    length = float(np.mean(hips[:, 2] - start[:, 2]))
    lowering = crouch * length
    height = start[:, 2].mean() + lowering
    outputs = [robot.output_names.index(name) for leg in legs for name in leg]
    columns = robot.output_v[outputs] if not closed else robot.base_nv + np.array(outputs)
    used_q = robot.output_q[outputs]
    lower, upper = model.lowerPositionLimit[used_q], model.upperPositionLimit[used_q]
    if not closed:
        for leg, (sole_id, _) in zip(legs, sole_ids):
            _flex_knee(robot, q, leg, sole_id)
    rest = q[used_q].copy()
    root = model.inertias[0]  # the fixed root link's own mass, which pinocchio's CoM leaves out
    moving = 1.0 - root.mass / (root.mass + sum(inertia.mass for inertia in model.inertias[1:]))
    sagittal = set(pitch_joints(robot, q, [name for leg in legs for name in leg]))
    held_at_rest = np.array([name not in sagittal for leg in legs for name in leg])  # rolls and yaws
    for _ in range(iterations):
        J_com = pin.jacobianCenterOfMass(model, data, q) * moving  # before the frame Jacobians: it reuses data.J
        com = moving * data.com[0] + (1.0 - moving) * root.lever
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        soles_now = [data.oMf[i] * placement for i, placement in sole_ids]
        middle = np.mean([sole.translation for sole in soles_now], axis=0)
        errors, jacobians = [com[:2] - middle[:2]], [-J_com[:2]]  # the feet's middle under the CoM
        for (sole_id, placement), current, heading, rows in zip(sole_ids, soles_now, headings, tilt_rows):
            local = placement.inverse().action @ pin.getFrameJacobian(model, data, sole_id, pin.LOCAL)
            J_sole = np.kron(np.eye(2), current.rotation) @ local  # LOCAL_WORLD_ALIGNED at the sole
            jacobians[0] = jacobians[0] + 0.5 * J_sole[:2]
            rotation_error = heading.T @ pin.log3(heading @ current.rotation.T)  # in the heading's axes
            errors.append(np.r_[height - current.translation[2], rotation_error[rows]])
            jacobians.append(np.vstack([J_sole[2], (heading.T @ J_sole[3:])[rows]]))
        error, J = np.concatenate(errors), np.vstack(jacobians)
        if np.linalg.norm(error) < 1e-7:
            break
        J = (J @ chain.output_velocity_map(q))[:, columns] if closed else J[:, columns]
        target = q[used_q] + _limited_step(J, error, q[used_q], lower, upper, np.where(held_at_rest, rest, q[used_q]))
        if closed:
            every = q[robot.output_q].copy()
            every[outputs] = target
            try:
                q = continue_closure(chain, q, every, held="outputs")[0]
            except ClosureError:
                break
        else:
            q[used_q] = target
    if not np.linalg.norm(error) < STANCE_TOLERANCE:
        names = [name for leg in legs for name in leg]
        units = ["m" if model.joints[model.getJointId(name)].shortname().startswith("JointModelP") else "rad"
                 for name in names]
        at_limit = [f"{name} fixed at {low:+.3f} {unit}" if high - low < 1e-9 else
                    f"{name} at its {'lower' if abs(x - low) < 1e-6 else 'upper'} limit "
                    f"{low if abs(x - low) < 1e-6 else high:+.3f} {unit}"
                    for name, x, low, high, unit in zip(names, q[used_q], lower, upper, units)
                    if min(abs(x - low), abs(x - high)) < 1e-6]
        raise StanceNotFound(robot.urdf_path, "stance", f"no standing stance {lowering:.3f} m below the reference "
                             f"within the joint limits (‖error‖ = {np.linalg.norm(error):.2e}); "
                             + (f"held by {', '.join(at_limit)}" if at_limit else "no joint at a limit: the "
                                "soles cannot be laid flat under the CoM"))
    return q, length, lowering


def _limited_step(J, error, x, lower, upper, rest, damping=1e-6, largest=0.1, pull=0.5):
    """Damped least-squares step J⁺ error, plus ``pull`` × (rest − x) in the null space of J (the joints the task
    leaves free go back to their rest), that keeps x within [lower, upper]: joints a step would push past a limit
    are held there and the step is solved again with the others (a simple active set); scaled so that no joint moves
    more than ``largest`` [rad or m]."""
    free = np.ones(len(x), dtype=bool)
    step = np.zeros(len(x))
    for _ in range(len(x)):
        A = J[:, free]
        A_pinv = A.T @ np.linalg.inv(A @ A.T + damping * np.eye(len(error)))
        back = pull * (rest - x)[free]
        step[:] = 0.0
        step[free] = A_pinv @ error + back - A_pinv @ (A @ back)
        step *= min(1.0, largest / max(np.abs(step).max(), 1e-12))
        past = free & ((x + step < lower) | (x + step > upper))
        if not past.any():
            break
        free &= ~past
    return np.clip(x + step, lower, upper) - x


def _flex_knee(robot, q, leg, sole_id, angle=0.3):
    """Bend the leg's knee (its middle pitch joint) by ``angle`` [rad] the way its joint range allows (a knee's range
    lies mostly on the side it bends to, whatever its sign convention), or, for a range as wide both ways, the way
    that moves the sole backwards."""
    pitching = pitch_joints(robot, q, leg)
    if not pitching:
        return
    model, data = robot.model, robot.model.createData()
    knee = model.joints[model.getJointId(pitching[len(pitching) // 2])].idx_q
    lower, upper = model.lowerPositionLimit[knee], model.upperPositionLimit[knee]
    room_down, room_up = q[knee] - lower, upper - q[knee]
    if max(room_up, room_down) > 2.0 * min(room_up, room_down):
        direction = 1.0 if room_up > room_down else -1.0
    else:
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        column = model.joints[model.getJointId(pitching[len(pitching) // 2])].idx_v
        direction = -np.sign(pin.getFrameJacobian(model, data, sole_id, pin.LOCAL_WORLD_ALIGNED)[0, column])
    q[knee] = np.clip(q[knee] + direction * angle, lower, upper)


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
