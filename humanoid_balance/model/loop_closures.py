"""The user-facing loop-closure YAML (docs/robot-description.md): parsing and the checks that need no URDF.

A URDF holds only the spanning tree of a closed-chain robot; this file lists where each loop was
cut (two frames that coincide when the loop is closed, and the directions that are constrained),
which joints are motor-driven, and the serial-equivalent output joints.
"""
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from humanoid_balance.model.errors import ModelFileError

__all__ = ["AXES", "LoopClosure", "ActuatorSpec", "LoopClosureSpec", "load_loop_closures"]

FORMAT_VERSION = 1
AXES = ("x", "y", "z", "rx", "ry", "rz")
"""Constrained directions, in frame_a: relative translation (x y z) and rotation by the log map."""

ACTUATOR_KINDS = ("ballscrew", "direct")


@dataclass(frozen=True)
class LoopClosure:
    """One cut of a closed chain: frame_b must coincide with frame_a along ``axes``."""

    name: str
    frame_a: str
    frame_b: str
    axes: tuple

    @property
    def axis_indices(self):
        """Rows of the 6-vector [translation; rotation] that are constrained."""
        return tuple(AXES.index(axis) for axis in self.axes)


@dataclass(frozen=True)
class ActuatorSpec:
    """Transmission of one actuated joint.

    ``ballscrew``: the joint is a linear actuator whose axial force τ̄ [N] relates to the motor torque
    τ_m [N·m] by τ̄ = τ_m·2π·η/L (Kangaroo eq. 47), lead L [m], efficiency η [-].
    ``direct``: the joint effort is the motor effort.
    """

    kind: str = "direct"
    lead: float = 0.0
    efficiency: float = 1.0
    force_limit: float = float("inf")


@dataclass(frozen=True)
class LoopClosureSpec:
    """Everything the loop-closure YAML says, validated for form (names are checked against the URDF
    by :func:`humanoid_balance.model.robot.load_robot`)."""

    path: str
    loops: tuple = ()
    actuated: tuple = ()
    outputs: tuple = ()
    measured_passive: tuple = ()
    actuators: dict = field(default_factory=dict)
    reference: dict = field(default_factory=dict)

    @property
    def constrained_axes_count(self):
        return sum(len(loop.axes) for loop in self.loops)


def _name_list(path, document, key):
    value = document.get(key, [])
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise ModelFileError(path, key, f"must be a list of joint names, got {value!r}")
    duplicates = sorted({name for name in value if value.count(name) > 1})
    if duplicates:
        raise ModelFileError(path, key, f"lists {duplicates} more than once")
    return tuple(value)


def _parse_loop(path, index, entry):
    where = f"loops[{index}]"
    if not isinstance(entry, dict):
        raise ModelFileError(path, where, f"must be a mapping with name, frame_a, frame_b, axes; got {entry!r}")
    name = entry.get("name")
    if isinstance(name, str):
        where = f"loops[{index}] '{name}'"
    for key in ("name", "frame_a", "frame_b"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise ModelFileError(path, where, f"'{key}' is missing or not a string")
    axes = entry.get("axes")
    if not isinstance(axes, list) or not axes:
        raise ModelFileError(path, where, f"'axes' must be a non-empty list drawn from {list(AXES)}")
    for axis in axes:
        if axis not in AXES:
            raise ModelFileError(path, where, f"axis {axis!r} is not one of {list(AXES)}")
    if len(set(axes)) != len(axes):
        raise ModelFileError(path, where, f"'axes' repeats an axis: {axes}")
    unknown = sorted(set(entry) - {"name", "frame_a", "frame_b", "axes"})
    if unknown:
        raise ModelFileError(path, where, f"unknown keys {unknown}")
    return LoopClosure(entry["name"], entry["frame_a"], entry["frame_b"], tuple(axes))


def _parse_actuator(path, joint, entry):
    where = f"actuators.{joint}"
    if not isinstance(entry, dict):
        raise ModelFileError(path, where, f"must be a mapping, got {entry!r}")
    kind = entry.get("kind", "direct")
    if kind not in ACTUATOR_KINDS:
        raise ModelFileError(path, where, f"kind {kind!r} is not one of {list(ACTUATOR_KINDS)}")
    numbers = {}
    for key in ("lead", "efficiency", "force_limit"):
        if key in entry:
            value = entry[key]
            if not isinstance(value, (int, float)) or not value > 0:
                raise ModelFileError(path, where, f"'{key}' must be a positive number, got {value!r}")
            numbers[key] = float(value)
    if kind == "ballscrew" and "lead" not in numbers:
        raise ModelFileError(path, where, "a ballscrew needs its 'lead' in m")
    if numbers.get("efficiency", 1.0) > 1.0:
        raise ModelFileError(path, where, f"efficiency {numbers['efficiency']} is above 1")
    return ActuatorSpec(kind=kind, **numbers)


def load_loop_closures(path):
    """Read and validate a loop-closure YAML file (format: docs/robot-description.md, loop-closure YAML).

    Raises:
        ModelFileError: naming the file, the entry and the offending value.
    """
    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text())
    except OSError as error:
        raise ModelFileError(path, None, f"cannot read: {error.strerror}") from None
    except yaml.YAMLError as error:
        raise ModelFileError(path, None, f"is not valid YAML: {error}") from None
    if not isinstance(document, dict):
        raise ModelFileError(path, None, "must be a YAML mapping")
    version = document.get("humanoid_balance_loops")
    if version != FORMAT_VERSION:
        raise ModelFileError(path, "humanoid_balance_loops",
                             f"format version must be {FORMAT_VERSION}, got {version!r}")
    known = {"humanoid_balance_loops", "loops", "actuated", "outputs", "measured_passive", "actuators",
             "reference"}
    unknown = sorted(set(document) - known)
    if unknown:
        raise ModelFileError(path, None, f"unknown top-level keys {unknown}; expected {sorted(known)}")

    raw_loops = document.get("loops") or []
    if not isinstance(raw_loops, list):
        raise ModelFileError(path, "loops", "must be a list")
    loops = tuple(_parse_loop(path, index, entry) for index, entry in enumerate(raw_loops))
    seen = {}
    for index, loop in enumerate(loops):
        if loop.name in seen:
            raise ModelFileError(path, f"loops[{index}] '{loop.name}'",
                                 f"duplicate loop name (first used by loops[{seen[loop.name]}])")
        seen[loop.name] = index

    actuated = _name_list(path, document, "actuated")
    outputs = _name_list(path, document, "outputs")
    if len(actuated) != len(outputs):
        raise ModelFileError(path, "outputs", f"{len(outputs)} outputs for {len(actuated)} actuated joints; "
                             "each actuated joint needs exactly one serial-equivalent output")
    measured = _name_list(path, document, "measured_passive")

    raw_actuators = document.get("actuators") or {}
    if not isinstance(raw_actuators, dict):
        raise ModelFileError(path, "actuators", "must be a mapping from actuated joint to its transmission")
    for joint in raw_actuators:
        if joint not in actuated:
            raise ModelFileError(path, f"actuators.{joint}", f"'{joint}' is not listed in 'actuated'")
    actuators = {joint: _parse_actuator(path, joint, entry) for joint, entry in raw_actuators.items()}

    reference = document.get("reference") or {}
    if not isinstance(reference, dict) or not all(isinstance(v, (int, float)) for v in reference.values()):
        raise ModelFileError(path, "reference", "must map joint names to numbers (rad or m)")
    return LoopClosureSpec(str(path), loops, actuated, outputs, measured, actuators,
                           {name: float(value) for name, value in reference.items()})
