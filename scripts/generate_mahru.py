#!/usr/bin/env python3
"""Generate ``urdf/mahru.urdf``: the KIST humanoid Mahru I of Table 1 of Choi & Kim, "Humanoid Robot Balancing".

Source: Y. Choi and D. Kim, "Humanoid Robot Balancing" (book chapter; experiments on KIST's 'Mahru I'),
Table 1 "The DH parameters, centroid and mass data of KIST humanoid 'Mahru I'", copied verbatim below
(``LEFT_LEG`` ... ``WAIST``).  ``--check`` verifies the written URDF with pinocchio and MuJoCo.

From the table (exact):
* every joint position and axis: legs 6 DOF, arms 6 DOF, neck 2 DOF, from the DH rows;
* every link mass (total 67.685 kg) and every centre of mass (the "centroid" column);
* the zero configuration (DH joint variables 0, the table's theta are the offsets): standing straight,
  legs and arms hanging vertically, feet flat; pelvis frame 0.869 m above the soles.

DH convention of the table: standard (distal) Denavit-Hartenberg, one row per frame,
    ^{k-1}T_k = Rot_z(theta_k + q_k) Trans_z(d_k) Trans_x(a_k) Rot_x(alpha_k),
with row 0 a constant limb-base transform (no joint) and q_k the k-th joint of the limb (k = 1..6), which
turns about z_{k-1}; the last row (masses "x") is the end frame (sole, hand, head).  Evidence: row LL0
(a = +0.09, theta = pi/2) puts the left hip at y = +0.09 (RL0: -0.09) and 0.146 m below the pelvis frame
(a modified-DH reading would put the hips 0.09 m ahead of and behind the pelvis), and with this reading every
chain hangs straight down at q = 0 with hip yaw/roll/pitch, knee and ankle pitch/roll axes along z/x/y and
right rows mirroring left rows.  The centroid and mass of row k belong to the body turned by joint k+1 (the
pelvis-side body of a limb is row 0) and the centroid is expressed in DH frame k: e.g. the 3.36 kg thigh
(row 2) sits 0.225 m along x_2 = down the thigh from the hip, the 2.22 kg shin (row 3) 0.145 m below the knee,
and the right-side centroids mirror the left ones in y under this reading (to 0.25 mm: rows LA1/RA1 print the
same y = 0.000125).

Mapping onto the URDF (the check compares URDF and DH kinematics and CoM at random configurations):
* every link frame is parallel to ``base_link`` at q = 0 (joint origins have zero rpy, x forward, y left,
  z up, REP-103); the link turned by joint k+1 has its frame at the origin of DH frame k, on the axis, so a
  joint origin is the difference of two DH frame origins at q = 0;
* joint k+1 axis = z_k at q = 0, flipped if needed to be +x, +y or +z, and q_urdf = sign * q_dh (``sign`` is
  printed by --check).  So pitch joints turn about +y (hip pitch, shoulder pitch: negative = limb forward;
  knee: positive = flexion; elbow: negative = flexion; ankle pitch and neck pitch: positive = toes / face
  down), roll joints about +x (left hip/shoulder roll: positive = abduction), yaw joints about +z;
* that link's mass = row k's and its inertial origin = R_k * centroid_k (R_k: DH frame k at q = 0, so the
  table centroid rotated into the base-parallel link frame).  Pelvis -> ``base_link``, Waist -> ``torso``.

The arms' last joint turns about x at q = 0 (hand swings sideways), so it is ``*_wrist_roll`` rather than
``*_wrist_pitch``.  Names: ``{side}_{hip_yaw, hip_roll, hip_pitch, knee, ankle_pitch, ankle_roll}``,
``{side}_{shoulder_pitch, shoulder_roll, shoulder_yaw, elbow, wrist_yaw, wrist_roll}``, ``waist_yaw``,
``neck_yaw``, ``neck_pitch``.

Approximated (not in the table):
* the arm base frames.  Rows LA0/RA0 are identity transforms from a shoulder frame that Table 1 does not
  place; here each sits on the shoulder-pitch axis at (0, +-0.14, 0.37) m from the pelvis frame, rotated
  Rot_x(pi/2) (z_0 = -y, x_0 = x), the only orientation with a lateral shoulder-pitch axis, the roll joint
  (d = -+0.061) outboard and the arms hanging down;
* ``waist_yaw``.  Table 1 has no waist joint (Pelvis and Waist rows carry only centroid and mass: the
  paper's model has a rigid trunk); a vertical yaw axis through the pelvis frame origin, 0.04 m up, is added,
  so ``waist_yaw`` = 0 is exactly the table's rigid model;
* inertia tensors: solid boxes or cylinders of the table's mass, axis-aligned at q = 0, centred on the
  table centroid, sized from the DH link lengths (thigh and shin cylinders 0.31 m, upper arm 0.224 m,
  forearm 0.225 m, foot 0.22 x 0.13 m), mean densities 500..2250 kg/m^3;
* the foot: collision box 0.22 x 0.13 x 0.02 m centred in x/y under the ankle (the sole frame, at DH frame 6,
  0.103 m below the ankle axis) with its bottom face on the sole plane (the paper gives no foot size; its
  foot centroid is 8 mm ahead of and 8 mm above that point);
* visuals (boxes and cylinders between the joint centres), head shape, joint limits (human-like ranges),
  efforts and velocities.
``left_sole``/``right_sole``, ``left_hand``/``right_hand`` are massless frame links on fixed joints.
"""
import argparse
from collections import namedtuple
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
URDF_PATH = ROOT / "urdf" / "mahru.urdf"
HALF_PI = np.pi / 2
X, Y, Z = np.eye(3)

# ------------------------------------------------------------------------------ Table 1, verbatim
# Row: (alpha [rad], a [m], d [m], theta [rad], centroid (x, y, z) [m] in DH frame k, mass [kg]);
# the last row of each limb has no centroid/mass ("x" in the table).
Row = namedtuple("Row", "alpha a d theta centroid mass")
LEFT_LEG = [
    Row(0.0, 0.09, -0.146, HALF_PI, (0.0, 0.031, -0.0338), 2.067),  # LL0
    Row(HALF_PI, 0.0, 0.0, 0.0, (0.0295, 0.0, -0.0015), 1.8206),
    Row(HALF_PI, 0.0, 0.0, -HALF_PI, (0.2249, 0.0187, -0.0156), 3.3586),
    Row(0.0, 0.31, 0.0, 0.0, (0.1451, 0.0285, -0.0026), 2.2238),
    Row(0.0, 0.31, 0.0, 0.0, (0.0, -0.0257, -0.0143), 2.6922),
    Row(-HALF_PI, 0.0, 0.0, 0.0, (0.0951, 0.0047, 0.0083), 1.9091),
    Row(0.0, 0.103, 0.0, 0.0, None, None),
]
RIGHT_LEG = [
    Row(0.0, -0.09, -0.146, HALF_PI, (0.0, 0.031, -0.0338), 2.067),  # RL0
    Row(HALF_PI, 0.0, 0.0, 0.0, (-0.0295, 0.0, -0.0015), 1.8206),
    Row(HALF_PI, 0.0, 0.0, -HALF_PI, (0.2249, 0.0187, 0.0156), 3.3586),
    Row(0.0, 0.31, 0.0, 0.0, (0.1451, 0.0285, 0.0026), 2.2238),
    Row(0.0, 0.31, 0.0, 0.0, (0.0, -0.0257, 0.0143), 2.6922),
    Row(-HALF_PI, 0.0, 0.0, 0.0, (0.0951, -0.0047, 0.0083), 1.9091),
    Row(0.0, 0.103, 0.0, 0.0, None, None),
]
LEFT_ARM = [
    Row(0.0, 0.0, 0.0, 0.0, (0.0278, 0.0, -0.051), 0.823),  # LA0
    Row(-HALF_PI, 0.0, -0.061, -HALF_PI, (0.062, 0.000125, -0.0085), 1.437),
    Row(HALF_PI, 0.0, -0.0055, HALF_PI, (0.00798, -0.00146, 0.2), 0.9),
    Row(-HALF_PI, 0.0, 0.224, HALF_PI, (0.0, -0.0228, 0.00739), 0.11),
    Row(HALF_PI, 0.0, 0.0, 0.0, (-0.0025, 0.000035, 0.153), 0.781),
    Row(-HALF_PI, 0.0, 0.225, -HALF_PI, (0.0, -0.0208, 0.017), 0.053),
    Row(0.0, 0.041, 0.0, -HALF_PI, None, None),
]
RIGHT_ARM = [
    Row(0.0, 0.0, 0.0, 0.0, (0.0278, 0.0, 0.051), 0.823),  # RA0
    Row(-HALF_PI, 0.0, 0.061, -HALF_PI, (0.062, 0.000125, -0.0085), 1.437),
    Row(HALF_PI, 0.0, -0.0055, HALF_PI, (-0.00798, -0.00146, 0.2), 0.9),
    Row(-HALF_PI, 0.0, 0.224, HALF_PI, (0.0, -0.0228, -0.00739), 0.11),
    Row(HALF_PI, 0.0, 0.0, 0.0, (-0.0025, 0.000035, 0.153), 0.781),
    Row(-HALF_PI, 0.0, 0.225, -HALF_PI, (0.0, -0.0208, 0.017), 0.053),
    Row(0.0, 0.041, 0.0, -HALF_PI, None, None),
]
HEAD = [
    Row(0.0, 0.04, 0.47, 0.0, (0.0, 0.0, 0.0), 0.5),  # H0
    Row(-HALF_PI, 0.0, 0.0, 0.0, (0.0, 0.0, 0.0), 0.5),
    Row(0.0, 0.0, 0.0, 0.0, None, None),
]
PELVIS = ((-0.056, 0.0, -0.0173), 4.6341)  # centroid in the pelvis (base_link) frame [m], mass [kg]
WAIST = ((0.0, 0.0, 0.17), 25.7)  # trunk above the pelvis, same frame
TABLE_MASS = (sum(r.mass for limb in (LEFT_LEG, RIGHT_LEG, LEFT_ARM, RIGHT_ARM, HEAD) for r in limb if r.mass)
              + PELVIS[1] + WAIST[1])

# ------------------------------------------------------------------------------ approximations
SHOULDER_BASE = {"left": (0.0, 0.14, 0.37), "right": (0.0, -0.14, 0.37)}  # arm DH frame 0 in base_link [m]
WAIST_YAW_HEIGHT = 0.04  # waist_yaw origin on the pelvis z axis [m]
FOOT_BOX = (0.22, 0.13, 0.02)  # collision box, centred under the ankle, bottom face on the sole plane [m]
SOLE_PLATE = 0.004  # visual rubber sole on the sole link [m]
SMALL_INERTIA = 1e-5  # kg m^2, floor asserted for every principal moment

# Inertia solids at q = 0 (base_link axes), centred on the table centroid:
# ("box", (sx, sy, sz)) or ("cylinder", radius, length, axis) [m].
LEG_SOLIDS = [("box", (0.12, 0.10, 0.10)), ("box", (0.10, 0.10, 0.10)), ("cylinder", 0.055, 0.31, Z),
              ("cylinder", 0.045, 0.31, Z), ("box", (0.12, 0.10, 0.10)), ("box", (0.22, 0.13, 0.04))]
ARM_SOLIDS = [("cylinder", 0.045, 0.10, Y), ("box", (0.09, 0.09, 0.12)), ("cylinder", 0.035, 0.224, Z),
              ("box", (0.06, 0.06, 0.06)), ("cylinder", 0.032, 0.225, Z), ("box", (0.05, 0.04, 0.05))]
HEAD_SOLIDS = [("cylinder", 0.04, 0.08, Z), ("box", (0.10, 0.10, 0.10))]
PELVIS_SOLID = ("box", (0.16, 0.26, 0.10))
TORSO_SOLID = ("box", (0.22, 0.30, 0.40))

# Joint limits, URDF sign convention, left side: (lower, upper) [rad], effort [N m], velocity [rad/s].
# Right-side roll and yaw limits are the left ones mirrored (lower, upper) -> (-upper, -lower).
Limit = namedtuple("Limit", "lower upper effort velocity")
LEG_JOINTS = {
    "hip_yaw": Limit(-0.7, 0.8, 150, 8),  # + = toes outward
    "hip_roll": Limit(-0.45, 0.8, 250, 8),  # + = abduction
    "hip_pitch": Limit(-1.8, 0.6, 300, 8),  # - = leg forward
    "knee": Limit(0.0, 2.3, 300, 8),  # + = flexion
    "ankle_pitch": Limit(-1.0, 0.8, 250, 8),  # + = toes down
    "ankle_roll": Limit(-0.6, 0.4, 150, 8),  # - = inversion (sole inward)
}
ARM_JOINTS = {
    "shoulder_pitch": Limit(-3.0, 1.0, 100, 6),  # - = arm forward
    "shoulder_roll": Limit(-0.3, 2.8, 100, 6),  # + = abduction
    "shoulder_yaw": Limit(-1.6, 1.6, 80, 6),
    "elbow": Limit(-2.5, 0.0, 80, 6),  # - = flexion
    "wrist_yaw": Limit(-1.6, 1.6, 50, 8),
    "wrist_roll": Limit(-1.0, 1.0, 50, 8),
}
NECK_JOINTS = {"neck_yaw": Limit(-1.4, 1.4, 50, 6), "neck_pitch": Limit(-0.8, 0.9, 50, 6)}  # + = face down
WAIST_JOINT = Limit(-1.0, 1.0, 150, 5)
MIRRORED = ("hip_yaw", "hip_roll", "ankle_roll", "shoulder_roll", "shoulder_yaw", "wrist_yaw", "wrist_roll")

MATERIALS = {"shell": "0.88 0.89 0.92 1", "joint": "0.16 0.36 0.78 1", "dark": "0.15 0.15 0.17 1"}

# Limb: Table 1 label (LL, RL, LA, RA, H), DH rows, base transform (DH frame "-1" in base_link), URDF parent
# link, joint and link names (one per joint), inertia solids, limits, end-frame link.
Limb = namedtuple("Limb", "label rows base parent joints links solids limits end")


# ------------------------------------------------------------------------------ DH kinematics
def dh(row, q=0.0):
    """Standard DH transform Rot_z(theta + q) Trans_z(d) Trans_x(a) Rot_x(alpha)."""
    ct, st = np.cos(row.theta + q), np.sin(row.theta + q)
    ca, sa = np.cos(row.alpha), np.sin(row.alpha)
    return np.array([[ct, -st * ca, st * sa, row.a * ct],
                     [st, ct * ca, -ct * sa, row.a * st],
                     [0.0, sa, ca, row.d],
                     [0.0, 0.0, 0.0, 1.0]])


def rot_z(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def transform(rotation=np.eye(3), translation=(0.0, 0.0, 0.0)):
    t = np.eye(4)
    t[:3, :3], t[:3, 3] = rotation, translation
    return t


def dh_chain(limb, q_dh):
    """DH frames F_0..F_n in base_link and, per mass row k, the frame of the body turned by q_{k+1}."""
    frames, bodies, t = [], [], limb.base
    for k, row in enumerate(limb.rows):
        t = t @ dh(row, q_dh[k - 1] if k else 0.0)
        frames.append(t)
        if row.mass is not None:
            bodies.append(t @ rot_z(q_dh[k]))
    return frames, bodies


def axis_sign(z_axis):
    """The URDF axis (+x, +y or +z) along DH axis `z_axis` at q = 0, and the sign q_urdf = sign * q_dh."""
    index = int(np.argmax(np.abs(z_axis)))
    assert abs(abs(z_axis[index]) - 1.0) < 1e-12, f"DH axis {z_axis} is not along a base axis at q = 0"
    return np.eye(3)[index], float(np.sign(z_axis[index]))


# ------------------------------------------------------------------------------ inertia and URDF text
Inertial = namedtuple("Inertial", "mass com inertia volume")  # com in base_link at q = 0


def solid(mass, com, shape):
    """Inertia about the centroid of a uniform solid box or cylinder (base_link axes at q = 0)."""
    if shape[0] == "box":
        sx, sy, sz = shape[1]
        inertia = mass / 12.0 * np.diag([sy**2 + sz**2, sx**2 + sz**2, sx**2 + sy**2])
        volume = sx * sy * sz
    else:
        _, radius, length, axis = shape
        across, along = mass * (3 * radius**2 + length**2) / 12.0, mass * radius**2 / 2.0
        inertia = across * (np.eye(3) - np.outer(axis, axis)) + along * np.outer(axis, axis)
        volume = np.pi * radius**2 * length
    return Inertial(mass, np.asarray(com, float), inertia, volume)


def fmt(values, decimals=6):
    return " ".join(np.format_float_positional(v, precision=decimals, unique=False, trim="-")
                    for v in np.round(np.atleast_1d(values), decimals) + 0.0)


# Geometry: `center` in base_link at q = 0 [m]; rpy turns the cylinder's z onto its axis; material None for
# collision geometry.
Shape = namedtuple("Shape", "geometry center rpy material")


def box(size, center, material="shell"):
    return Shape(f'<box size="{fmt(size)}"/>', np.asarray(center, float), (0.0, 0.0, 0.0), material)


def cylinder(start, end, radius, material="shell"):
    """Cylinder between two points on a line parallel to a base axis."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    along = int(np.argmax(np.abs(end - start)))
    rpy = [(0.0, HALF_PI, 0.0), (HALF_PI, 0.0, 0.0), (0.0, 0.0, 0.0)][along]
    return Shape(f'<cylinder radius="{radius:g}" length="{np.linalg.norm(end - start):.6g}"/>',
                 (start + end) / 2, rpy, material)


def motor(center, axis, radius, length):
    """Joint actuator drawn as a cylinder of `length` along `axis` through `center`."""
    center, half = np.asarray(center, float), 0.5 * length * np.asarray(axis, float)
    return cylinder(center - half, center + half, radius, "joint")


def shape_xml(shape, origin):
    """<visual>/<collision> body for a link whose frame sits at `origin` (base_link, q = 0)."""
    text = (f'<origin xyz="{fmt(shape.center - origin)}" rpy="{fmt(shape.rpy)}"/>'
            f'<geometry>{shape.geometry}</geometry>')
    return text + (f'<material name="{shape.material}"/>' if shape.material else "")


class Robot:
    """URDF tree whose link frames are all parallel to base_link at q = 0."""

    def __init__(self, name):
        self.name, self.origins, self.xml, self.inertials = name, {}, [], {}
        self.signs, self.sources = {}, {}  # per joint: q_urdf / q_dh, Table 1 row of the body it turns

    def attach(self, parent, joint, kind, child, origin, inertial=None, axis=None, limit=None, visuals=(),
               collision=None):
        """Add link `child` with frame at `origin`; everything in base_link coordinates at q = 0 [m]."""
        origin = np.asarray(origin, float)
        self.origins[child] = origin
        lines = [f'  <link name="{child}">']
        if inertial is not None:
            self.inertials[child] = inertial
            i = inertial.inertia
            lines.append(f'    <inertial><origin xyz="{fmt(inertial.com - origin, 9)}" rpy="0 0 0"/>'
                         f'<mass value="{inertial.mass:g}"/><inertia ixx="{i[0, 0]:.9g}" ixy="0" ixz="0" '
                         f'iyy="{i[1, 1]:.9g}" iyz="0" izz="{i[2, 2]:.9g}"/></inertial>')
        lines += [f"    <visual>{shape_xml(v, origin)}</visual>" for v in visuals]
        lines += [f"    <collision>{shape_xml(collision, origin)}</collision>"] if collision else []
        lines.append("  </link>")
        if parent is not None:
            lines += [f'  <joint name="{joint}" type="{kind}">',
                      f'    <parent link="{parent}"/><child link="{child}"/>',
                      f'    <origin xyz="{fmt(origin - self.origins[parent])}" rpy="0 0 0"/>']
            if axis is not None:
                lines.append(f'    <axis xyz="{fmt(axis, 0)}"/>')
                lines.append(f'    <limit lower="{limit.lower:g}" upper="{limit.upper:g}" '
                             f'effort="{limit.effort:g}" velocity="{limit.velocity:g}"/>')
            lines.append("  </joint>")
        self.xml.append("\n".join(lines))

    def urdf(self):
        materials = [f'  <material name="{n}"><color rgba="{c}"/></material>' for n, c in MATERIALS.items()]
        header = ['<?xml version="1.0"?>',
                  "<!-- KIST Mahru I from Table 1 of Choi & Kim, \"Humanoid Robot Balancing\".",
                  "     Generated by scripts/generate_mahru.py; do not edit by hand. -->",
                  f'<robot name="{self.name}">']
        return "\n".join(header + materials + self.xml) + "\n</robot>\n"


# ------------------------------------------------------------------------------ robot
def limit(side, joint, lim):
    """Joint limits of `side`: the left ones, mirrored for right roll/yaw joints."""
    if side == "right" and joint in MIRRORED:
        return lim._replace(lower=-lim.upper, upper=-lim.lower)
    return lim


def limbs():
    """The five DH limbs (legs, arms, head) with their URDF names, in URDF order."""
    arm_base_rotation = np.array([X, Z, -Y]).T  # Rot_x(pi/2): x_0 = x, y_0 = z, z_0 = -y
    result = {}
    for side, leg in (("left", LEFT_LEG), ("right", RIGHT_LEG)):
        result[f"{side}_leg"] = Limb(
            f"{side[0].upper()}L", leg, np.eye(4), "base_link", [f"{side}_{j}" for j in LEG_JOINTS],
            [f"{side}_{n}" for n in ("hip_yaw_link", "hip_roll_link", "thigh", "shin", "ankle_link", "foot")],
            LEG_SOLIDS, [limit(side, j, lim) for j, lim in LEG_JOINTS.items()], f"{side}_sole")
    for side, arm in (("left", LEFT_ARM), ("right", RIGHT_ARM)):
        result[f"{side}_arm"] = Limb(
            f"{side[0].upper()}A", arm, transform(arm_base_rotation, SHOULDER_BASE[side]), "torso",
            [f"{side}_{j}" for j in ARM_JOINTS],
            [f"{side}_{n}" for n in ("shoulder_pitch_link", "shoulder_roll_link", "upper_arm", "elbow_link",
                                     "forearm", "wrist_link")],
            ARM_SOLIDS, [limit(side, j, lim) for j, lim in ARM_JOINTS.items()], f"{side}_hand")
    result["head"] = Limb("H", HEAD, np.eye(4), "torso", list(NECK_JOINTS), ["neck_link", "head"], HEAD_SOLIDS,
                          list(NECK_JOINTS.values()), None)
    return result


def limb_visuals(kind, p):
    """Per body of a limb, its visuals; `p` = origins of the DH frames F_0..F_n at q = 0."""
    if kind == "leg":
        hip, knee, ankle, sole = p[0], p[3], p[4], p[6]
        foot_plate = (FOOT_BOX[0], FOOT_BOX[1], FOOT_BOX[2] - SOLE_PLATE)
        return [[cylinder(hip, hip + (0, 0, 0.056), 0.04, "joint")],
                [motor(hip, X, 0.045, 0.12)],
                [motor(hip, Y, 0.05, 0.10), cylinder(hip, knee, 0.05)],
                [motor(knee, Y, 0.05, 0.10), cylinder(knee, ankle, 0.04)],
                [motor(ankle, Y, 0.04, 0.09)],
                [motor(ankle, X, 0.035, 0.10), box((0.08, 0.08, 0.083), sole + (0, 0, 0.0615)),
                 box(foot_plate, sole + (0, 0, (FOOT_BOX[2] + SOLE_PLATE) / 2))]]
    if kind == "arm":
        shoulder, roll, upper, elbow, wrist = p[0], p[1], p[2], p[3], p[5]
        return [[cylinder(shoulder, roll, 0.04, "joint")],
                [motor(roll, X, 0.045, 0.10)],
                [cylinder(upper, elbow, 0.035)],
                [motor(elbow, Y, 0.035, 0.08)],
                [cylinder(elbow, wrist, 0.03)],
                [motor(wrist, X, 0.025, 0.05)]]
    neck = p[0]
    return [[cylinder(neck - (0, 0, 0.03), neck + (0, 0, 0.02), 0.035, "joint")],
            [motor(neck, Y, 0.03, 0.08), box((0.14, 0.14, 0.16), neck + (0.01, 0, 0.09))]]


def build_robot():
    robot = Robot("mahru")
    pelvis_com, pelvis_mass = PELVIS
    robot.attach(None, None, None, "base_link", np.zeros(3), solid(pelvis_mass, pelvis_com, PELVIS_SOLID),
                 visuals=[box((0.18, 0.26, 0.12), (-0.03, 0.0, -0.04))])
    torso_com, torso_mass = WAIST
    robot.attach("base_link", "waist_yaw", "revolute", "torso", (0.0, 0.0, WAIST_YAW_HEIGHT),
                 solid(torso_mass, torso_com, TORSO_SOLID), Z, WAIST_JOINT,
                 [cylinder((0, 0, 0.02), (0, 0, 0.06), 0.06, "joint"), box((0.20, 0.26, 0.38), (0.0, 0.0, 0.25))])
    robot.signs["waist_yaw"], robot.sources["waist_yaw"] = 1.0, "Waist"
    for name, limb in limbs().items():
        frames, _ = dh_chain(limb, np.zeros(len(limb.joints)))
        points = [f[:3, 3] for f in frames]
        visuals = limb_visuals(name.split("_")[-1], points)
        parent = limb.parent
        for k, (joint, link, shape, lim) in enumerate(zip(limb.joints, limb.links, limb.solids, limb.limits)):
            frame, row = frames[k], limb.rows[k]  # joint k+1 turns about z of DH frame k
            axis, sign = axis_sign(frame[:3, 2])
            robot.signs[joint], robot.sources[joint] = sign, f"{limb.label}{k}"
            com = frame[:3, 3] + frame[:3, :3] @ row.centroid
            collision = box(FOOT_BOX, points[-1] + (0, 0, FOOT_BOX[2] / 2), None) if link.endswith("foot") else None
            robot.attach(parent, joint, "revolute", link, frame[:3, 3], solid(row.mass, com, shape), axis, lim,
                         visuals[k], collision)
            parent = link
        if limb.end is not None:  # sole or hand frame at the last DH frame, massless
            end = points[-1]
            if limb.end.endswith("sole"):
                end_visual = box((FOOT_BOX[0], FOOT_BOX[1], SOLE_PLATE), end + (0, 0, SOLE_PLATE / 2), "dark")
            else:
                end_visual = box((0.07, 0.03, 0.10), end + (0, 0, -0.02), "joint")
            robot.attach(parent, f"{limb.end}_fixed", "fixed", limb.end, end, visuals=[end_visual])
    return robot


# ------------------------------------------------------------------------------ self-test
def run_check(robot, urdf_text):
    import mujoco
    import pinocchio as pin

    model = pin.buildModelFromUrdf(str(URDF_PATH))
    data = model.createData()
    q0 = pin.neutral(model)
    names = list(model.names[1:])
    mass = sum(inertia.mass for inertia in model.inertias)
    print(f"pinocchio {pin.__version__}: buildModelFromUrdf OK, fixed base: nq = {model.nq}, nv = {model.nv}, "
          f"{model.njoints - 1} revolute joints, {model.nframes} frames")
    floating = pin.buildModelFromUrdf(str(URDF_PATH), pin.JointModelFreeFlyer())
    print(f"  with JointModelFreeFlyer(): nq = {floating.nq}, nv = {floating.nv}, root joint "
          f"'{floating.names[1]}' ({floating.joints[1].shortname()})")
    assert floating.nq == model.nq + 7 and floating.nv == model.nv + 6
    print(f"total mass {mass:.4f} kg (Table 1 sum {TABLE_MASS:.4f} kg)")
    assert abs(mass - TABLE_MASS) < 1e-9
    floating_data = floating.createData()

    def center_of_mass(q):
        """CoM in base_link (the floating model: the fixed-base one leaves out base_link's own mass)."""
        return pin.centerOfMass(floating, floating_data, np.concatenate([[0, 0, 0, 0, 0, 0, 1.0], q])).copy()

    pin.framesForwardKinematics(model, data, q0)
    com = center_of_mass(q0)
    soles = {s: data.oMf[model.getFrameId(f"{s}_sole")] for s in ("left", "right")}
    ground = soles["left"].translation[2]
    print(f"CoM at q = 0: [{fmt(com, 4)}] m in base_link; {com[2] - ground:.4f} m above the soles")
    for side, placement in soles.items():
        flat = np.allclose(placement.rotation, np.eye(3), atol=1e-12)
        print(f"  {side}_sole at [{fmt(placement.translation, 4)}] m in base_link, axes = base axes: {flat}")
        assert flat
    for frame in ("left_hand", "right_hand", "head"):
        print(f"  {frame} at [{fmt(data.oMf[model.getFrameId(frame)].translation, 4)}] m")

    fixed = [f.name for f in model.frames if f.type == pin.FrameType.FIXED_JOINT and f.name != "universe"]
    print(f"{len(names)} revolute joints + {len(fixed)} fixed ({', '.join(fixed)}); per joint: axis, limits "
          "[rad], effort [N m], velocity [rad/s], q_urdf / q_dh, child link <- Table 1 row (mass)")
    for j, name in enumerate(names, start=1):
        axis = {"JointModelRX": "x", "JointModelRY": "y", "JointModelRZ": "z"}[model.joints[j].shortname()]
        lo, hi = model.lowerPositionLimit[j - 1], model.upperPositionLimit[j - 1]
        child = model.frames[[f.parentJoint == j and f.type == pin.FrameType.BODY for f in model.frames].index(True)]
        print(f"  {name:20s} +{axis} [{lo:+.2f}, {hi:+.2f}] {model.effortLimit[j - 1]:4.0f} "
              f"{model.velocityLimit[j - 1]:3.0f}  {robot.signs[name]:+.0f}  {child.name} <- "
              f"{robot.sources[name]} ({model.inertias[j].mass:g} kg)")

    # Every inertia: symmetric positive definite, triangle inequality, principal moments >= SMALL_INERTIA.
    worst = min(np.linalg.eigvalsh(i.inertia).min() for i in robot.inertials.values())
    densities = {link: i.mass / i.volume for link, i in robot.inertials.items()}
    for i in robot.inertials.values():
        moments = np.linalg.eigvalsh(i.inertia)
        assert moments.min() >= SMALL_INERTIA and 2 * moments.max() <= moments.sum() + 1e-15
    print(f"inertias: {len(robot.inertials)} bodies, smallest principal moment {worst:.2e} kg m^2, "
          f"solid densities {min(densities.values()):.0f}..{max(densities.values()):.0f} kg/m^3 "
          f"({min(densities, key=densities.get)} .. {max(densities, key=densities.get)})")

    # URDF kinematics and CoM == Table 1 DH kinematics and centroids, at random configurations.
    rng, position_error, rotation_error, com_error = np.random.default_rng(0), 0.0, 0.0, 0.0
    all_limbs = limbs()
    for _ in range(200):
        q = rng.uniform(model.lowerPositionLimit, model.upperPositionLimit)
        pin.framesForwardKinematics(model, data, q)
        waist = rot_z(q[model.joints[model.getJointId("waist_yaw")].idx_q])
        moment = PELVIS[1] * np.array(PELVIS[0]) + WAIST[1] * (waist[:3, :3] @ WAIST[0])
        for name, limb in all_limbs.items():
            q_urdf = np.array([q[model.joints[model.getJointId(j)].idx_q] for j in limb.joints])
            q_dh = q_urdf * np.array([robot.signs[j] for j in limb.joints])
            moved = limb._replace(base=limb.base if limb.parent == "base_link" else waist @ limb.base)
            frames, bodies = dh_chain(moved, q_dh)
            for body, row in zip(bodies, limb.rows):
                moment = moment + row.mass * (body[:3, :3] @ row.centroid + body[:3, 3])
            end = limb.end or limb.links[-1]
            rest, _ = dh_chain(limb, np.zeros(len(limb.joints)))
            expected = frames[-1][:3, :3] @ rest[-1][:3, :3].T
            placement = data.oMf[model.getFrameId(end)]
            position_error = max(position_error, np.linalg.norm(placement.translation - frames[-1][:3, 3]))
            rotation_error = max(rotation_error, np.linalg.norm(pin.log3(placement.rotation.T @ expected)))
        com_error = max(com_error, np.linalg.norm(center_of_mass(q) - moment / TABLE_MASS))
    print(f"URDF vs Table 1 DH chains at 200 random configurations: end frames (soles, hands, head) "
          f"{position_error:.1e} m, {rotation_error:.1e} rad; CoM {com_error:.1e} m")
    assert position_error < 1e-9 and rotation_error < 1e-9 and com_error < 1e-9

    # Right rows of the table = left rows mirrored in y (at q = 0).
    mirror = np.diag([1.0, -1.0, 1.0])
    for left, right in (("left_leg", "right_leg"), ("left_arm", "right_arm")):
        a, b = all_limbs[left], all_limbs[right]
        _, body_a = dh_chain(a, np.zeros(6))
        _, body_b = dh_chain(b, np.zeros(6))
        com_a = [f[:3, :3] @ r.centroid + f[:3, 3] for f, r in zip(body_a, a.rows)]
        com_b = [f[:3, :3] @ r.centroid + f[:3, 3] for f, r in zip(body_b, b.rows)]
        gap = max(np.linalg.norm(mirror @ ca - cb) for ca, cb in zip(com_a, com_b))
        print(f"  {right} centroids vs mirrored {left}: largest difference {gap * 1000:.3f} mm")

    # Sole frame on the bottom face of the foot collision box, centred in x/y.
    geometry = pin.buildGeomFromUrdf(model, str(URDF_PATH), pin.GeometryType.COLLISION)
    for side in ("left", "right"):
        frame = model.frames[model.getFrameId(f"{side}_sole")]
        boxes = [g for g in geometry.geometryObjects if g.parentJoint == frame.parentJoint]
        assert len(boxes) == 1
        in_sole = frame.placement.inverse() * boxes[0].placement
        half = np.asarray(boxes[0].geometry.halfSide)
        bottom = in_sole.translation[2] - half[2]
        print(f"  {side} foot collision box {fmt(2 * half, 3)} m: centre in {side}_sole "
              f"[{fmt(in_sole.translation, 4)}], bottom face at z = {bottom:+.1e} m")
        assert abs(bottom) < 1e-12 and np.allclose(in_sole.translation[:2], 0.0, atol=1e-12)
    print(f"  collision geometry: {len(geometry.geometryObjects)} boxes (feet only)")

    # Paper: initial CoM (0.034, 0.0, 0.687) m; reproduce its height by bending the knees, trunk upright.
    q = q0.copy()
    for bend in np.linspace(0.0, 1.2, 12001):
        for side in ("left", "right"):
            for joint, value in (("hip_pitch", -bend), ("knee", 2 * bend), ("ankle_pitch", -bend)):
                q[model.joints[model.getJointId(f"{side}_{joint}")].idx_q] = value
        pin.framesForwardKinematics(model, data, q)
        c = center_of_mass(q)
        sole = data.oMf[model.getFrameId("left_sole")].translation
        if c[2] - sole[2] <= 0.687:
            break
    print(f"  knees bent to {2 * bend:.3f} rad (hip, ankle {-bend:.3f}): CoM {c[2] - sole[2]:.3f} m above the "
          f"soles, {c[0] - sole[0]:+.4f} m ahead of the sole centres (paper's initial CoM: z 0.687, x 0.034 m "
          f"in an unstated frame and arm posture)")

    # MuJoCo: the plain URDF text, fixed base (MuJoCo welds the jointless root link base_link to the world).
    mj = mujoco.MjModel.from_xml_string(urdf_text)
    mj_data = mujoco.MjData(mj)
    mujoco.mj_forward(mj, mj_data)
    moving = model.inertias[0].mass
    print(f"MuJoCo {mujoco.__version__}: MjModel.from_xml_string(plain URDF text) OK: {mj.nbody} bodies, {mj.njnt} "
          f"hinge joints, nq = {mj.nq}, {mj.ngeom} geoms (URDF import drops visuals and fuses fixed links; "
          f"base_link is fused into the world), moving mass {mj.body_subtreemass[0]:.4f} kg "
          f"(= total - pelvis {moving:.4f} kg)")
    assert mj.njnt == model.njoints - 1 and mj.ngeom == 2
    assert abs(mj.body_subtreemass[0] - (mass - moving)) < 1e-9
    assert np.allclose(mj_data.subtree_com[0], pin.centerOfMass(model, data, q0), atol=1e-9)
    ranges = {mj.joint(i).name: mj.jnt_range[i] for i in range(mj.njnt)}
    assert all(np.allclose(ranges[n], [model.lowerPositionLimit[j], model.upperPositionLimit[j]])
               for j, n in enumerate(names))
    # ... and with a free joint on base_link (as the balance code does), through MjSpec.
    spec = mujoco.MjSpec.from_string(urdf_text)
    spec.body("base_link").add_freejoint()
    mj = spec.compile()
    mj_data = mujoco.MjData(mj)
    mujoco.mj_forward(mj, mj_data)
    base = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "base_link")
    print(f"  MjSpec.from_string + free joint on base_link: nq = {mj.nq}, nv = {mj.nv}, mass "
          f"{mujoco.mj_getTotalmass(mj):.4f} kg, CoM [{fmt(mj_data.subtree_com[base], 4)}] m (= pinocchio)")
    assert abs(mujoco.mj_getTotalmass(mj) - mass) < 1e-9 and np.allclose(mj_data.subtree_com[base], com, atol=1e-9)
    print("all checks passed")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify the generated URDF with pinocchio and MuJoCo")
    args = parser.parse_args()
    robot = build_robot()
    text = robot.urdf()
    URDF_PATH.parent.mkdir(parents=True, exist_ok=True)
    URDF_PATH.write_text(text)
    print(f"wrote {URDF_PATH.relative_to(ROOT)}")
    if args.check:
        run_check(robot, text)


if __name__ == "__main__":
    main()
