#!/usr/bin/env python3
"""Generate the ``kangaroo_like`` humanoid (an original design in the spirit of PAL Kangaroo).

Writes ``urdf/kangaroo_like.urdf`` (spanning tree of the closed-chain legs) and
``config/kangaroo_like.loops.yaml`` (one cut per loop, actuators, outputs); ``--check``
then verifies both with pinocchio.  Per leg (right = left mirrored in y, same joint axes):

* Hip yaw, crank-slider in the pelvis plane: a horizontal ballscrew on ``base_link``
  pushes a crank pin 0.05 m inboard of the yaw axis.  Cut at the rod-end pin [x, y, rz].
* Hip pitch/roll differential: two vertical UPS struts (universal joint on
  ``hip_yaw_link``, ballscrew, spherical joint) push a thigh bracket 0.045 m ahead of the
  hip centre, 0.066 m in/outboard.  Equal strokes pitch, opposite strokes roll.  6-D cuts.
* Knee, slider-rocker-coupler: a ballscrew behind the thigh swings a rocker pivoted just
  above the knee; a coupler drives a pin below the knee on the shin.  Retraction flexes
  the knee at 38 rad/m (straight) down to about 12 rad/m (bent).  Two planar cuts [x, z].
* Ankle pitch/roll differential driven from the thigh: two ballscrews in front of the
  thigh turn bellcranks coaxial with the knee; each pulls a tie rod (universal on top,
  spherical below) hooked on a heel lever 0.03 m off the foot centre line.  Cuts: planar
  [x, z] at the bellcrank, 6-D at the heel.  As the tie rods cross the knee, ankle pitch
  follows about -0.4..-0.5 x the knee angle (foot roughly flat in a crouch).

Above the pelvis, a rigid torso carries two directly driven 3-DOF arms (shoulder pitch, shoulder roll,
elbow) ending at ``<side>_hand`` frames: serial joints that are their own outputs.  The YAML ``reference``
is a crouched stance (hip pitch -0.3, knee 0.6, ankle pitch -0.3 rad) with every passive joint closed, away
from the straight-knee singularity of the support-leg Jacobian.

Conventions: x forward, y left, z up; SI units (m, kg, rad, N); positive stroke =
extension.  Every link frame is parallel to ``base_link`` at q = 0, so joint origins
have zero rpy and every loop closes exactly there (design points are micrometre-exact).
"""
import argparse
import itertools
from collections import namedtuple
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
URDF_PATH = ROOT / "urdf" / "kangaroo_like.urdf"
LOOPS_PATH = ROOT / "config" / "kangaroo_like.loops.yaml"
SIDES = {"left": 1.0, "right": -1.0}  # sign applied to y when mirroring
X, Y, Z = np.eye(3)
SIX_D = ("x", "y", "z", "rx", "ry", "rz")


def lever(length, angle):
    """Sagittal (x, z) point at `length` (m), `angle` (rad) above the backward horizontal."""
    return (-length * np.cos(angle), length * np.sin(angle))


# Left-leg geometry at the zero configuration (base_link frame, m).
HIP_YAW_ORIGIN = (0.0, 0.09, -0.02)
HIP_CENTER = (0.0, 0.09, -0.08)  # hip roll and pitch axes intersect here
THIGH_LENGTH, SHIN_LENGTH, ANKLE_HEIGHT = 0.40, 0.40, 0.06
KNEE_CENTER = np.add(HIP_CENTER, (0.0, 0.0, -THIGH_LENGTH))
ANKLE_CENTER = KNEE_CENTER + (0.0, 0.0, -SHIN_LENGTH)
FOOT_BOX = (0.22, 0.11, 0.03)  # collision box size
FOOT_BOX_FORWARD = 0.03  # box centre ahead of the ankle axis

YAW_CRANK_PIN = (0.0, -0.05, 0.0)  # w.r.t. HIP_YAW_ORIGIN, perpendicular to the actuator
YAW_ACTUATOR_LENGTH = 0.12  # pivot to rod end at zero stroke, along +x

HIP_STRUT_LATERAL = {"inner": -0.066, "outer": 0.066}  # thigh pins w.r.t. the hip centre
HIP_STRUT_FORWARD = 0.045
HIP_STRUT_LENGTH = 0.25  # vertical U-to-S distance at zero stroke

# Knee linkage: (x, z) in the thigh's sagittal plane relative to the knee axis.
KNEE_CYLINDER_PIVOT = (0.010, 0.245)
KNEE_ROCKER_PIVOT = (-0.018, 0.044)
KNEE_ROCKER_ROD_PIN = (-0.085, 0.000)
KNEE_ROCKER_COUPLER_PIN = (-0.050, -0.010)
KNEE_SHIN_PIN = (0.020, -0.055)

# Ankle drive: (x, z) relative to the knee axis, heel pin relative to the ankle axis.
ANKLE_BRANCH_LATERAL = {"inner": -0.03, "outer": 0.03}
ANKLE_CYLINDER_PIVOT = (0.058, 0.250)
ANKLE_CRANK_ROD_PIN = (0.058, 0.000)
ANKLE_CRANK_TIE_PIN = lever(0.035, 1.00)
ANKLE_HEEL_PIN = lever(0.065, 0.50)


Actuator = namedtuple("Actuator", "stroke force_limit lead")  # (lower, upper) m, N, m/rev
ACTUATORS = {
    "hip_yaw": Actuator((-0.024, 0.024), 2500.0, 0.05),
    "hip_inner": Actuator((-0.029, 0.030), 2500.0, 0.05),
    "hip_outer": Actuator((-0.029, 0.030), 2500.0, 0.05),
    "knee": Actuator((-0.128, 0.0), 5000.0, 0.10),
    "ankle_inner": Actuator((-0.020, 0.020), 2500.0, 0.05),
    "ankle_outer": Actuator((-0.020, 0.020), 2500.0, 0.05),
}
ACTUATOR_VELOCITY, SCREW_EFFICIENCY = 0.5, 0.95  # m/s, ballscrew efficiency

OUTPUTS = {  # serial-equivalent joints: axis, (lower, upper) rad
    "hip_yaw": (Z, (-0.52, 0.52)),
    "hip_roll": (X, (-0.47, 0.47)),
    "hip_pitch": (Y, (-0.70, 0.73)),
    "knee": (Y, (0.0, 2.09)),
    "ankle_pitch": (Y, (-1.05, 0.59)),  # the knee coupling carries it to -1.0 rad in a deep crouch
    "ankle_roll": (X, (-0.47, 0.47)),
}
OUTPUT_EFFORT, OUTPUT_VELOCITY = 300.0, 10.0  # N m, rad/s
STANCE = {"hip_pitch": -0.3, "knee": 0.6, "ankle_pitch": -0.3}  # crouched reference of both legs (rad)

# Torso and arms (left side, base_link frame at q = 0, m): directly driven revolute joints.
TORSO_SIZE, TORSO_CENTER, TORSO_MASS = (0.14, 0.30, 0.30), (-0.02, 0.0, 0.25), 8.0
SHOULDER_CENTER = (-0.02, 0.19, 0.36)
UPPER_ARM_LENGTH, FOREARM_LENGTH = 0.22, 0.22
ARM_JOINTS = {  # axis, (lower, upper) rad, effort N m, velocity rad/s, for the left arm
    "shoulder_pitch": (Y, (-2.0, 2.0), 80.0, 6.0),
    "shoulder_roll": (X, (-0.3, 1.5), 80.0, 6.0),
    "elbow": (Y, (-2.0, 0.0), 50.0, 6.0),
}
# Internal passive revolutes: (lower, upper) rad, effort 0 (unactuated), velocity 20 rad/s.
PASSIVE_LIMIT = (-1.5, 1.5, 0.0, 20.0)
WIDE_PASSIVE_LIMIT = (-3.0, 3.0, 0.0, 20.0)  # joints that swing with the knee
SMALL_INERTIA = 1e-5  # kg m^2, floor for any principal moment (pins, spiders, thin rods)
MARKER_MASS, SPIDER_MASS = 0.02, 0.03  # kg: frame-only links (cuts, sole); U/S intermediate links


def unit(v):
    return v / np.linalg.norm(v)


def fmt(values, decimals=6):
    """Fixed-point text; 6 decimals keep micrometre design points exact."""
    return " ".join(np.format_float_positional(v, precision=decimals, unique=False, trim="-")
                    for v in np.round(np.atleast_1d(values), decimals) + 0.0)


def rpy_aligning_z(direction):
    """URDF rpy (rad) that turns the local z axis onto `direction`."""
    d = unit(direction)
    return (0.0, np.arctan2(np.hypot(d[0], d[1]), d[2]), np.arctan2(d[1], d[0]))


# mass (kg), centre of mass at q = 0 (base_link frame, m), 3x3 inertia about it (base_link axes, kg m^2)
Inertial = namedtuple("Inertial", "mass com inertia")


def solid_box(mass, size, center):
    sx, sy, sz = size
    diagonal = mass / 12.0 * np.array([sy**2 + sz**2, sx**2 + sz**2, sx**2 + sy**2])
    return Inertial(mass, np.asarray(center, float), np.diag(diagonal))


def solid_rod(mass, start, end, radius):
    axis, length = unit(end - start), np.linalg.norm(end - start)
    across, along = (max(m, SMALL_INERTIA) for m in (mass * (3 * radius**2 + length**2) / 12.0, mass * radius**2 / 2))
    inertia = across * (np.eye(3) - np.outer(axis, axis)) + along * np.outer(axis, axis)
    return Inertial(mass, (start + end) / 2.0, inertia)


def small_part(mass, center):
    return Inertial(mass, np.asarray(center, float), SMALL_INERTIA * np.eye(3))


def box_xml(size, center, origin):
    return f'<origin xyz="{fmt(center - origin)}" rpy="0 0 0"/><geometry><box size="{fmt(size)}"/></geometry>'


def cylinder_xml(start, end, radius, origin):
    return (f'<origin xyz="{fmt((start + end) / 2 - origin)}" rpy="{fmt(rpy_aligning_z(end - start))}"/>'
            f'<geometry><cylinder radius="{radius:g}" length="{np.linalg.norm(end - start):.6g}"/></geometry>')


Loop = namedtuple("Loop", "name frame_a frame_b axes")  # axes constrained in frame_a


class Robot:
    """URDF tree whose link frames are all parallel to base_link at q = 0, plus loop bookkeeping."""

    def __init__(self, name):
        self.name, self.origins, self.xml = name, {}, []  # origins: link -> frame origin at q = 0 (m)
        self.loops, self.actuated, self.outputs, self.arm_joints = [], [], [], []

    def attach(self, parent, joint, kind, child, origin, inertial, axis=None, limit=None, visuals=(),
               collision=None):
        """Add link `child` with frame at `origin` (m), joined to `parent` (None for the root)."""
        self.origins[child], i = origin, inertial.inertia
        lines = [f'  <link name="{child}">',
                 f'    <inertial><origin xyz="{fmt(inertial.com - origin, 9)}" rpy="0 0 0"/>'
                 f'<mass value="{inertial.mass:g}"/><inertia ixx="{i[0, 0]:.9g}" ixy="{i[0, 1]:.9g}" '
                 f'ixz="{i[0, 2]:.9g}" iyy="{i[1, 1]:.9g}" iyz="{i[1, 2]:.9g}" izz="{i[2, 2]:.9g}"/></inertial>']
        lines += [f"    <visual>{v}</visual>" for v in visuals]
        lines += [f"    <collision>{collision}</collision>"] if collision else []
        lines.append("  </link>")
        if parent is not None:
            lines += [f'  <joint name="{joint}" type="{kind}">',
                      f'    <parent link="{parent}"/><child link="{child}"/>',
                      f'    <origin xyz="{fmt(origin - self.origins[parent])}" rpy="0 0 0"/>']
            lines += [f'    <axis xyz="{fmt(unit(axis), 9)}"/>'] if axis is not None else []
            lines += [f'    <limit lower="{limit[0]:g}" upper="{limit[1]:g}" effort="{limit[2]:g}" '
                      f'velocity="{limit[3]:g}"/>'] if limit is not None else []
            lines.append("  </joint>")
        self.xml.append("\n".join(lines))

    def add_marker(self, parent, name, origin):
        """Frame-only link (loop cut or sole) fixed to `parent`."""
        self.attach(parent, f"{name}_fixed", "fixed", name, origin, small_part(MARKER_MASS, origin))

    def urdf(self):
        return f'<?xml version="1.0"?>\n<robot name="{self.name}">\n' + "\n".join(self.xml) + "\n</robot>\n"


def add_coincident_revolutes(robot, parent, center, joints, axes, last_child, last_inertial,
                             limit=PASSIVE_LIMIT, last_visuals=()):
    """Universal/spherical joint as revolutes through `center`; returns the last child link."""
    for joint, axis in zip(joints[:-1], axes[:-1]):
        robot.attach(parent, joint, "revolute", f"{joint}_link", center, small_part(SPIDER_MASS, center), axis, limit)
        parent = f"{joint}_link"
    robot.attach(parent, joints[-1], "revolute", last_child, center, last_inertial, axes[-1], limit, last_visuals)
    return last_child


def mirrored(side, left_xyz):
    """Point given in left-leg coordinates (m), mirrored onto `side` and rounded to micrometres."""
    x, y, z = left_xyz
    return np.round(np.array([x, SIDES[side] * y, z]), 6)


def sagittal(side, center, xz, lateral=0.0):
    """Point at sagittal offset `xz` and lateral offset `lateral` (left-leg sense) from `center` (m)."""
    return mirrored(side, np.add(center, (xz[0], lateral, xz[1])))


def add_ballscrew(robot, parent, side, kind, pivot_joints, pivot_axes, pivot, rod_end, masses):
    """Cylinder (frame at `pivot`) and prismatic rod (frame at `rod_end`); returns the rod link."""
    prefix, spec = f"{side}_{kind}", ACTUATORS[kind]
    direction, length = unit(rod_end - pivot), np.linalg.norm(rod_end - pivot)
    cylinder_mass, rod_mass = masses  # kg: motor side, moving rod
    body_end, rod_start = pivot + 0.6 * length * direction, rod_end - 0.5 * length * direction
    add_coincident_revolutes(robot, parent, pivot, [f"{prefix}_{j}" for j in pivot_joints], pivot_axes,
                             f"{prefix}_cylinder", solid_rod(cylinder_mass, pivot, body_end, 0.03),
                             last_visuals=[cylinder_xml(pivot, body_end, 0.03, pivot)])
    robot.attach(f"{prefix}_cylinder", f"{prefix}_actuator", "prismatic", f"{prefix}_rod", rod_end,
                 solid_rod(rod_mass, rod_start, rod_end, 0.012), direction,
                 (*spec.stroke, spec.force_limit, ACTUATOR_VELOCITY),
                 [cylinder_xml(rod_start, rod_end, 0.012, rod_end)])
    robot.actuated.append(f"{prefix}_actuator")
    return f"{prefix}_rod"


def add_output(robot, parent, side, joint, child, origin, inertial, visuals=(), collision=None):
    axis, (lower, upper) = OUTPUTS[joint]
    robot.attach(parent, f"{side}_{joint}", "revolute", f"{side}_{child}", origin, inertial, axis,
                 (lower, upper, OUTPUT_EFFORT, OUTPUT_VELOCITY), visuals, collision)
    robot.outputs.append(f"{side}_{joint}")


def build_serial_chain(robot, s):
    """Serial-equivalent output joints of leg `s` from the pelvis down to the sole frame."""
    yaw, hip, knee, ankle = (mirrored(s, p) for p in (HIP_YAW_ORIGIN, HIP_CENTER, KNEE_CENTER, ANKLE_CENTER))
    bracket_size, bracket = (0.10, 0.16, 0.25), mirrored(s, (0.02, 0.09, 0.065))  # carries the hip struts
    add_output(robot, "base_link", s, "hip_yaw", "hip_yaw_link", yaw, solid_box(1.5, bracket_size, bracket),
               [box_xml(bracket_size, bracket, yaw)])
    cube = (0.08, 0.08, 0.08)
    add_output(robot, f"{s}_hip_yaw_link", s, "hip_roll", "hip_roll_link", hip, solid_box(0.6, cube, hip),
               [box_xml(cube, hip, hip)])
    thigh_top = hip + (0.0, 0.0, -0.02)
    add_output(robot, f"{s}_hip_roll_link", s, "hip_pitch", "thigh", hip, solid_rod(4.5, thigh_top, knee, 0.05),
               [cylinder_xml(thigh_top, knee, 0.045, hip)])
    add_output(robot, f"{s}_thigh", s, "knee", "shin", knee, solid_rod(1.2, knee, ankle, 0.03),
               [cylinder_xml(knee, ankle, 0.025, knee)])
    add_output(robot, f"{s}_shin", s, "ankle_pitch", "ankle_link", ankle, small_part(0.1, ankle))
    foot_center = ankle + (FOOT_BOX_FORWARD, 0.0, FOOT_BOX[2] / 2 - ANKLE_HEIGHT)
    foot_shape = box_xml(FOOT_BOX, foot_center, ankle)
    add_output(robot, f"{s}_ankle_link", s, "ankle_roll", "foot", ankle, solid_box(0.8, FOOT_BOX, foot_center),
               [foot_shape], foot_shape)
    robot.add_marker(f"{s}_foot", f"{s}_sole", ankle + (0.0, 0.0, -ANKLE_HEIGHT))


def build_arm(robot, s):
    """Shoulder pitch, shoulder roll and elbow of arm `s` on the torso; the hand frame at the forearm's end."""
    shoulder = mirrored(s, SHOULDER_CENTER)
    elbow, hand = shoulder + (0.0, 0.0, -UPPER_ARM_LENGTH), shoulder + (0.0, 0.0, -UPPER_ARM_LENGTH - FOREARM_LENGTH)
    links = [("shoulder_pitch", "shoulder_link", shoulder, small_part(0.3, shoulder), []),
             ("shoulder_roll", "upper_arm", shoulder, solid_rod(1.4, shoulder, elbow, 0.035),
              [cylinder_xml(shoulder, elbow, 0.035, shoulder)]),
             ("elbow", "forearm", elbow, solid_rod(1.0, elbow, hand, 0.03), [cylinder_xml(elbow, hand, 0.03, elbow)])]
    parent = "torso"
    for joint, child, origin, inertial, visuals in links:
        axis, (lower, upper), effort, velocity = ARM_JOINTS[joint]
        if s == "right" and joint == "shoulder_roll":  # mirrored: the roll axis keeps x, so its range flips
            lower, upper = -upper, -lower
        robot.attach(parent, f"{s}_{joint}", "revolute", f"{s}_{child}", origin, inertial, axis,
                     (lower, upper, effort, velocity), visuals)
        robot.arm_joints.append(f"{s}_{joint}")
        parent = f"{s}_{child}"
    robot.add_marker(f"{s}_forearm", f"{s}_hand", hand)


def build_hip_yaw_drive(robot, s):
    """Crank-slider: pelvis ballscrew -> rod-end pin -> crank pin on hip_yaw_link."""
    pin = mirrored(s, np.add(HIP_YAW_ORIGIN, YAW_CRANK_PIN))
    pivot = pin - (YAW_ACTUATOR_LENGTH, 0.0, 0.0)
    rod = add_ballscrew(robot, "base_link", s, "hip_yaw", ["pivot"], [Z], pivot, pin, (0.5, 0.12))
    robot.attach(rod, f"{s}_hip_yaw_rod_pin", "revolute", f"{s}_hip_yaw_rod_end", pin, small_part(SPIDER_MASS, pin),
                 Z, PASSIVE_LIMIT)
    robot.add_marker(f"{s}_hip_yaw_link", f"{s}_hip_yaw_crank_pin", pin)
    robot.loops.append(Loop(f"{s}_hip_yaw_crank", f"{s}_hip_yaw_crank_pin", f"{s}_hip_yaw_rod_end", ("x", "y", "rz")))


def build_hip_differential(robot, s):
    """Two vertical UPS struts from hip_yaw_link onto a thigh bracket ahead of the hip."""
    for branch, lateral in HIP_STRUT_LATERAL.items():
        kind = f"hip_{branch}"
        pin = mirrored(s, np.add(HIP_CENTER, (HIP_STRUT_FORWARD, lateral, 0.0)))
        top = pin + (0.0, 0.0, HIP_STRUT_LENGTH)
        rod = add_ballscrew(robot, f"{s}_hip_yaw_link", s, kind, ["u1", "u2"], [X, Y], top, pin, (0.8, 0.2))
        # Spherical joint x-z-y: the middle (z) angle stays near 0 for thigh roll + pitch.
        rod_end = add_coincident_revolutes(robot, rod, pin, [f"{s}_{kind}_s{i}" for i in (1, 2, 3)], [X, Z, Y],
                                           f"{s}_{kind}_rod_end", small_part(SPIDER_MASS, pin))
        robot.add_marker(f"{s}_thigh", f"{s}_{kind}_thigh_pin", pin)
        robot.loops.append(Loop(f"{s}_{kind}_strut", f"{s}_{kind}_thigh_pin", rod_end, SIX_D))


def build_knee_drive(robot, s):
    """Thigh ballscrew -> rocker above the knee -> coupler -> pin below the knee on the shin."""
    thigh, rocker, coupler = f"{s}_thigh", f"{s}_knee_rocker_link", f"{s}_knee_coupler_link"
    cylinder_pivot, pivot, rod_pin, coupler_pin, shin_pin = (sagittal(s, KNEE_CENTER, p) for p in (
        KNEE_CYLINDER_PIVOT, KNEE_ROCKER_PIVOT, KNEE_ROCKER_ROD_PIN, KNEE_ROCKER_COUPLER_PIN, KNEE_SHIN_PIN))
    rod = add_ballscrew(robot, thigh, s, "knee", ["pivot"], [Y], cylinder_pivot, rod_pin, (0.7, 0.2))
    robot.attach(thigh, f"{s}_knee_rocker", "revolute", rocker, pivot, solid_rod(0.15, pivot, rod_pin, 0.01), Y,
                 WIDE_PASSIVE_LIMIT, [cylinder_xml(pivot, p, 0.01, pivot) for p in (rod_pin, coupler_pin)])
    robot.add_marker(rocker, f"{s}_knee_rocker_pin", rod_pin)
    robot.attach(rocker, f"{s}_knee_coupler", "revolute", coupler, coupler_pin,
                 solid_rod(0.08, coupler_pin, shin_pin, 0.008), Y, WIDE_PASSIVE_LIMIT,
                 [cylinder_xml(coupler_pin, shin_pin, 0.008, coupler_pin)])
    robot.add_marker(coupler, f"{s}_knee_coupler_end", shin_pin)
    robot.add_marker(f"{s}_shin", f"{s}_knee_shin_pin", shin_pin)
    robot.loops.append(Loop(f"{s}_knee_drive", f"{s}_knee_rocker_pin", rod, ("x", "z")))
    robot.loops.append(Loop(f"{s}_knee_linkage", f"{s}_knee_shin_pin", f"{s}_knee_coupler_end", ("x", "z")))


def build_ankle_differential(robot, s):
    """Per branch: thigh ballscrew -> bellcrank coaxial with the knee -> tie rod (U-S) -> heel pin."""
    for branch, lateral in ANKLE_BRANCH_LATERAL.items():
        kind, thigh = f"ankle_{branch}", f"{s}_thigh"
        crank = f"{s}_{kind}_crank_link"
        cylinder_pivot, crank_center, rod_pin, tie_top = (sagittal(s, KNEE_CENTER, p, lateral) for p in (
            ANKLE_CYLINDER_PIVOT, (0.0, 0.0), ANKLE_CRANK_ROD_PIN, ANKLE_CRANK_TIE_PIN))
        heel = sagittal(s, ANKLE_CENTER, ANKLE_HEEL_PIN, lateral)
        rod = add_ballscrew(robot, thigh, s, kind, ["pivot"], [Y], cylinder_pivot, rod_pin, (0.45, 0.12))
        robot.attach(thigh, f"{s}_{kind}_crank", "revolute", crank, crank_center,
                     solid_rod(0.12, tie_top, rod_pin, 0.01), Y, PASSIVE_LIMIT,
                     [cylinder_xml(crank_center, p, 0.01, crank_center) for p in (rod_pin, tie_top)])
        robot.add_marker(crank, f"{s}_{kind}_crank_pin", rod_pin)
        # Universal joint y-x: the first axis absorbs the knee swing, so it never aligns with the rod.
        tie_rod = add_coincident_revolutes(
            robot, crank, tie_top, [f"{s}_{kind}_u{i}" for i in (1, 2)], [Y, X], f"{s}_{kind}_tie_rod",
            solid_rod(0.2, tie_top, heel, 0.006), WIDE_PASSIVE_LIMIT, [cylinder_xml(tie_top, heel, 0.006, tie_top)])
        # Spherical joint y-z-x: the middle (z) angle stays near 0 for foot pitch + roll.
        tie_end = add_coincident_revolutes(
            robot, tie_rod, heel, [f"{s}_{kind}_s{i}" for i in (1, 2, 3)], [Y, Z, X], f"{s}_{kind}_tie_rod_end",
            small_part(SPIDER_MASS, heel), WIDE_PASSIVE_LIMIT)
        robot.add_marker(f"{s}_foot", f"{s}_{kind}_heel_pin", heel)
        robot.loops.append(Loop(f"{s}_{kind}_drive", f"{s}_{kind}_crank_pin", rod, ("x", "z")))
        robot.loops.append(Loop(f"{s}_{kind}_tie_rod", f"{s}_{kind}_heel_pin", tie_end, SIX_D))


def build_robot():
    robot = Robot("kangaroo_like")
    pelvis_size, pelvis_center = (0.16, 0.30, 0.14), np.array([-0.02, 0.0, 0.03])
    pelvis_shape = box_xml(pelvis_size, pelvis_center, 0.0)
    robot.attach(None, None, None, "base_link", np.zeros(3), solid_box(10.0, pelvis_size, pelvis_center),
                 visuals=[pelvis_shape], collision=pelvis_shape)
    torso_shape = box_xml(TORSO_SIZE, TORSO_CENTER, np.zeros(3))
    robot.attach("base_link", "torso_fixed", "fixed", "torso", np.zeros(3),
                 solid_box(TORSO_MASS, TORSO_SIZE, TORSO_CENTER), visuals=[torso_shape])
    for side in SIDES:
        for build in (build_serial_chain, build_hip_yaw_drive, build_hip_differential, build_knee_drive,
                      build_ankle_differential):
            build(robot, side)
    for side in SIDES:
        build_arm(robot, side)
    return robot


def loops_yaml(robot, reference=None):
    lines = ["# Closed loops of urdf/kangaroo_like.urdf (each loop cut at one joint).",
             "# Generated by scripts/generate_kangaroo_like.py; do not edit by hand.",
             "# axes: constrained directions expressed in frame_a. Units: m, N.",
             "humanoid_balance_loops: 1", "loops:"]
    for loop in robot.loops:
        lines += [f"  - name: {loop.name}", f"    frame_a: {loop.frame_a}", f"    frame_b: {loop.frame_b}",
                  f"    axes: [{', '.join(loop.axes)}]"]
    lines += [f"actuated: [{', '.join(robot.actuated + robot.arm_joints)}]",
              f"outputs: [{', '.join(robot.outputs + robot.arm_joints)}]",
              f"measured_passive: [{', '.join(robot.outputs)}]", "actuators:"]
    for name in robot.actuated:
        spec = ACTUATORS[name.split("_", 1)[1].removesuffix("_actuator")]
        lines.append(f"  {name}: {{kind: ballscrew, lead: {spec.lead}, efficiency: {SCREW_EFFICIENCY}, "
                     f"force_limit: {spec.force_limit}}}")
    if reference:
        lines.append("reference:  # crouched stance, every loop closed (rad, m)")
        lines += [f"  {name}: {value:.9f}" for name, value in reference.items()]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------- self-test
AXIS_ROWS = {axis: row for row, axis in enumerate(SIX_D)}


class Closure:
    """Loop residuals/Jacobians of the fixed-base pinocchio model (1-DOF joints: q, v share indices)."""

    def __init__(self, pin, model, robot):
        self.pin, self.model, self.data = pin, model, model.createData()
        self.cuts = [(model.getFrameId(lp.frame_a, pin.BODY), model.getFrameId(lp.frame_b, pin.BODY),
                      [AXIS_ROWS[a] for a in lp.axes]) for lp in robot.loops]
        index = {name: model.joints[model.getJointId(name)].idx_v for name in model.names[1:]}
        self.actuated = [index[n] for n in robot.actuated]
        self.passive = [i for n, i in index.items() if n not in robot.actuated + robot.arm_joints]
        self.outputs = [index[n] for n in robot.outputs]

    def residual(self, q):
        """Per loop: Ra^T (pb - pa) and log3(Ra^T Rb), selected axes."""
        self.pin.framesForwardKinematics(self.model, self.data, q)
        rows = []
        for fa, fb, selected in self.cuts:
            a, b = self.data.oMf[fa], self.data.oMf[fb]
            error = np.concatenate([a.rotation.T @ (b.translation - a.translation),
                                    self.pin.log3(a.rotation.T @ b.rotation)])
            rows.append(error[selected])
        return np.concatenate(rows)

    def jacobian(self, q):
        """d(residual)/dq; the rotation rows reduce to Ra^T (wb - wa) when the loop is closed."""
        pin, model, data = self.pin, self.model, self.data
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        rows = []
        for fa, fb, selected in self.cuts:
            a, b = data.oMf[fa], data.oMf[fb]
            ja = pin.getFrameJacobian(model, data, fa, pin.LOCAL_WORLD_ALIGNED)
            jb = pin.getFrameJacobian(model, data, fb, pin.LOCAL_WORLD_ALIGNED)
            linear = a.rotation.T @ (jb[:3] - ja[:3] + pin.skew(b.translation - a.translation) @ ja[3:])
            angular = pin.Jlog3(a.rotation.T @ b.rotation) @ b.rotation.T @ (jb[3:] - ja[3:])
            rows.append(np.vstack([linear, angular])[selected])
        return np.vstack(rows)

    def assemble(self, q, strokes, steps=10):
        """Damped Newton on the passive joints, strokes ramped from their values in q to `strokes`."""
        start = q[self.actuated].copy()
        for k in range(1, steps + 1):
            q[self.actuated] = start + (strokes - start) * k / steps
            for _ in range(30 if k == steps else 8):
                error = self.residual(q)
                if np.abs(error).max() < 1e-13:
                    break
                step = -np.linalg.lstsq(self.jacobian(q)[:, self.passive], error, rcond=None)[0]
                q[self.passive] += step * min(1.0, 0.3 / np.abs(step).max())  # at most 0.3 rad per update
        return q

    def output_gain(self, q):
        """d(outputs)/d(strokes) with all loops kept closed (rad/m)."""
        j = self.jacobian(q)
        passive_rates = -np.linalg.solve(j[:, self.passive], j[:, self.actuated])
        return passive_rates[[self.passive.index(i) for i in self.outputs]]


def crouched_reference(pin, model, closure, robot):
    """Joint values {name: value} with both legs in STANCE and every loop closed: Newton on the strokes."""
    q = pin.neutral(model)
    target = np.array([STANCE.get(name.split("_", 1)[1], 0.0) for name in robot.outputs])
    for _ in range(20):
        error = target - q[closure.outputs]
        if np.abs(error).max() < 1e-11:
            return {name: float(q[model.joints[model.getJointId(name)].idx_q]) for name in model.names[1:]}
        q = closure.assemble(q, q[closure.actuated] + np.linalg.solve(closure.output_gain(q), error), steps=4)
    raise RuntimeError(f"the crouched stance {STANCE} is out of reach: output error {np.abs(error).max():.1e} rad")


def sample_strokes(lower, upper, rng, count):
    """Uniform random strokes plus the box corners of each mechanism (knee and ankle together)."""
    samples = [lower + (upper - lower) * rng.random(lower.size) for _ in range(count)]
    for group in ([0], [1, 2], [3, 4, 5]):  # per-leg actuator indices of each mechanism
        for corner in itertools.product((lower, upper), repeat=len(group)):
            strokes = np.zeros_like(lower)
            for j, bound in zip(group, corner):
                strokes[[j, j + 6]] = bound[[j, j + 6]]  # same corner on both legs
            samples.append(strokes)
    return samples


def loop_passive_joints(model, loop, robot):
    """Non-actuated joints on the tree path between the two cut frames."""
    a, b = (set(model.supports[model.frames[model.getFrameId(f)].parentJoint]) for f in (loop.frame_a, loop.frame_b))
    return [model.names[j] for j in sorted(a ^ b) if model.names[j] not in robot.actuated]


def run_check(robot):
    import pinocchio as pin

    model = pin.buildModelFromUrdf(str(URDF_PATH))
    closure = Closure(pin, model, robot)
    kinds = [model.joints[i].shortname() for i in range(1, model.njoints)]
    n_prismatic, n_revolute = (sum(f"JointModel{t}" in k for k in kinds) for t in ("P", "R"))
    n_rows = sum(len(lp.axes) for lp in robot.loops)
    print(f"(a) {model.njoints - 1} joints: {n_prismatic} prismatic, {n_revolute} revolute; "
          f"{len(closure.passive)} passive; {len(robot.loops)} loops with {n_rows} constrained axes")
    assert n_prismatic == 12 and n_revolute - len(robot.arm_joints) == len(closure.passive) == n_rows == 70

    q0 = pin.neutral(model)
    pin.framesForwardKinematics(model, closure.data, q0)
    placements = [(closure.data.oMf[fa], closure.data.oMf[fb]) for fa, fb, _ in closure.cuts]
    position_error = max(np.linalg.norm(b.translation - a.translation) for a, b in placements)
    rotation_error = max(np.linalg.norm(pin.log3(a.rotation.T @ b.rotation)) for a, b in placements)
    print(f"(b) closure at q = 0: position error {position_error:.1e} m, rotation error {rotation_error:.1e} rad")
    assert position_error < 1e-12 and rotation_error < 1e-12

    mass = sum(inertia.mass for inertia in model.inertias)  # index 0 carries base_link (fixed base)
    print(f"(c) total mass {mass:.2f} kg")
    assert 50.0 <= mass <= 54.0

    cond0 = np.linalg.cond(closure.jacobian(q0)[:, closure.passive])
    print(f"(d) closure Jacobian J_u ({n_rows} x {len(closure.passive)}) at q = 0: condition number {cond0:.0f}")
    assert cond0 < 1e4

    lower, upper, act = model.lowerPositionLimit, model.upperPositionLimit, closure.actuated
    samples = sample_strokes(lower[act], upper[act], np.random.default_rng(0), 200)
    residuals, conds, gain_conds, solutions = [], [], [], []
    for strokes in samples:
        q = closure.assemble(q0.copy(), strokes)
        gain = closure.output_gain(q)
        residuals.append(np.abs(closure.residual(q)).max())
        conds.append(np.linalg.cond(closure.jacobian(q)[:, closure.passive]))
        gain_conds += [np.linalg.cond(gain[:6, :6]), np.linalg.cond(gain[6:, 6:])]
        solutions.append(q)
    solutions = np.array(solutions)
    print(f"(e) {len(samples)} stroke samples: max residual {max(residuals):.1e}, max cond(J_u) {max(conds):.0f}, "
          f"max cond(d outputs / d strokes) per leg {max(gain_conds):.0f}")
    assert max(residuals) < 1e-10 and max(conds) < 1e4
    print("    output range over the samples vs URDF limits (rad):")
    for name, i in zip(robot.outputs, closure.outputs):
        low, high = solutions[:, i].min(), solutions[:, i].max()
        inside = lower[i] - 0.02 <= low and high <= upper[i] + 0.02
        print(f"      {name:18s} [{low:+.3f}, {high:+.3f}]  limits [{lower[i]:+.2f}, {upper[i]:+.2f}]"
              f"{'' if inside else '  <- outside'}")
    outside = [model.names[i + 1] for i in closure.passive if i not in closure.outputs
               and (solutions[:, i].min() < lower[i] or solutions[:, i].max() > upper[i])]
    print(f"    internal passive joints beyond their URDF limits: {outside or 'none'}")
    gain0 = closure.output_gain(q0)
    print(f"    ankle pitch / knee coupling at q = 0: {gain0[4, 3] / gain0[3, 3]:+.2f}")

    print("    left knee sweep (other strokes 0): stroke [m] -> knee [rad], d knee / d stroke [rad/m]")
    q, angles = q0.copy(), []
    for stroke in np.linspace(upper[act[3]], lower[act[3]], 9):
        strokes = np.zeros(len(act))
        strokes[3] = stroke
        q = closure.assemble(q, strokes, steps=4)
        angles.append(q[closure.outputs[3]])
        print(f"      {stroke:+.3f} -> {angles[-1]:.3f}   {closure.output_gain(q)[3, 3]:+.1f}")
    print(f"    knee monotone in stroke: {bool(np.all(np.diff(angles) > 0))}")
    assert np.all(np.diff(angles) > 0)
    in_loops = {loop.name: loop_passive_joints(model, loop, robot) for loop in robot.loops}
    assert set().union(*in_loops.values()) == {model.names[i + 1] for i in closure.passive}
    print("    every passive joint lies on a loop; left-leg loops and their passive joints:")
    for loop in robot.loops[:len(robot.loops) // 2]:
        print(f"      {loop.name} [{', '.join(loop.axes)}]: {', '.join(in_loops[loop.name])}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify the generated model with pinocchio")
    args = parser.parse_args()
    import pinocchio as pin

    robot = build_robot()
    URDF_PATH.parent.mkdir(parents=True, exist_ok=True)
    URDF_PATH.write_text(robot.urdf())
    model = pin.buildModelFromUrdf(str(URDF_PATH))
    reference = crouched_reference(pin, model, Closure(pin, model, robot), robot)
    LOOPS_PATH.write_text(loops_yaml(robot, reference))
    for path in (URDF_PATH, LOOPS_PATH):
        print(f"wrote {path.relative_to(ROOT)}")
    if args.check:
        run_check(robot)


if __name__ == "__main__":
    main()
