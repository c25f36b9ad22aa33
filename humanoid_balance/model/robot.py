"""A robot = a pinocchio model of the URDF spanning tree + the loop closures of its YAML file.

Joint classes (Kangaroo paper, eq. 1): θ = [θ_u; θ_a], with θ_a the actuated joints listed in the YAML
(in actuator-command order) and θ_u every other non-root joint (the passive ones). The outputs q are
the serial-equivalent joints a controller commands; a passive output is selected from θ_u by P
(eq. 21), a directly driven output is its own actuated joint.
"""
import difflib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from humanoid_balance.model.closed_chain import ClosedChain
from humanoid_balance.model.errors import ClosureError, ModelFileError, SingularConfigurationError
from humanoid_balance.model.loop_closures import LoopClosureSpec, load_loop_closures

__all__ = ["RobotModel", "load_robot"]


@dataclass
class RobotModel:
    """A pinocchio model with the index sets of the closed-chain formulation.

    Index arrays point into the velocity vector ``v`` (``*_v``) or configuration ``q`` (``*_q``);
    every non-root joint has one degree of freedom, so ``q[x_q]`` and ``v[x_v]`` line up.
    """

    model: pin.Model
    urdf_path: str
    spec: LoopClosureSpec
    floating_base: bool
    joint_names: tuple      # every non-root 1-DOF joint, in pinocchio (tree) order
    actuated_names: tuple   # θ_a, in actuator-command order
    passive_names: tuple    # θ_u, in tree order
    output_names: tuple     # q, in the order of the YAML ``outputs``
    measured_names: tuple   # passive joints with absolute encoders
    actuated_q: np.ndarray
    actuated_v: np.ndarray
    passive_q: np.ndarray
    passive_v: np.ndarray
    output_q: np.ndarray
    output_v: np.ndarray
    reference_q: np.ndarray  # an assembled configuration: every loop closed (m, rad)

    @property
    def root_link(self):
        """The URDF's root link (REP-105 base_link)."""
        return next(frame.name for frame in self.model.frames if frame.type == pin.FrameType.BODY)

    @property
    def nq(self):
        return self.model.nq

    @property
    def nv(self):
        return self.model.nv

    @property
    def base_nv(self):
        """Velocity dimension of the floating base (6) or 0 for a fixed base."""
        return 6 if self.floating_base else 0

    @property
    def total_mass(self):
        """Total mass [kg]."""
        return float(sum(inertia.mass for inertia in self.model.inertias))

    def joint_q_index(self, name):
        return self.model.joints[self.model.getJointId(name)].idx_q

    def joint_v_index(self, name):
        return self.model.joints[self.model.getJointId(name)].idx_v

    def frame_id(self, name):
        return self.model.getFrameId(name)

    def mounting_rotation(self, frame):
        """Rotation of ``frame`` in the root link's frame, for a frame rigidly mounted on the root link (an IMU)."""
        data = self.model.createData()
        pin.framesForwardKinematics(self.model, data, self.reference_q)
        return data.oMf[self.frame_id(self.root_link)].rotation.T @ data.oMf[self.frame_id(frame)].rotation

    def position_limits(self, names):
        """Lower and upper position limits [rad or m] of the named joints, from the URDF."""
        index = [self.joint_q_index(name) for name in names]
        return self.model.lowerPositionLimit[index].copy(), self.model.upperPositionLimit[index].copy()

    def velocity_limits(self, names):
        return self.model.velocityLimit[[self.joint_v_index(name) for name in names]].copy()

    def effort_limits(self, names):
        return self.model.effortLimit[[self.joint_v_index(name) for name in names]].copy()

    def prismatic(self, names):
        """Whether each named joint is prismatic (else revolute), as a bool array: which of a [prismatic, revolute]
        pair of gains or units applies to it."""
        return np.array(["JointModelP" in self.model.joints[self.model.getJointId(name)].shortname()
                         for name in names], dtype=bool)

    def per_kind(self, names, values):
        """``values`` for the named joints: a [prismatic, revolute] pair picked by each joint's kind, a scalar for
        all, or already one value per joint (float array)."""
        values = np.asarray(values, dtype=float)
        if values.ndim == 0:
            return np.full(len(names), float(values))
        if values.shape == (2,) and len(names) != 2:
            return np.where(self.prismatic(names), values[0], values[1])
        if values.shape != (len(names),):
            raise ValueError(f"give a [prismatic, revolute] pair or {len(names)} values, got {values.shape[0]}")
        return values.astype(float, copy=True)


def _suggest(name, candidates):
    close = difflib.get_close_matches(name, candidates, n=3)
    return f"; did you mean {close}?" if close else ""


def _build_pinocchio_model(urdf_path, floating_base):
    urdf_path = Path(urdf_path)
    if not urdf_path.is_file():
        raise ModelFileError(urdf_path, None, "no such file")
    try:
        if floating_base:
            model = pin.buildModelFromUrdf(str(urdf_path), pin.JointModelFreeFlyer())
        else:
            model = pin.buildModelFromUrdf(str(urdf_path))
    except (RuntimeError, ValueError) as error:
        raise ModelFileError(urdf_path, None, f"pinocchio cannot parse this URDF: {error}") from None
    first = 2 if floating_base else 1
    for joint_id in range(first, model.njoints):
        joint = model.joints[joint_id]
        if joint.nq != 1 or joint.nv != 1:
            raise ModelFileError(urdf_path, f"joint '{model.names[joint_id]}'",
                                 f"has {joint.nq} configuration variables ({joint.shortname()}); only 1-DOF "
                                 "revolute and prismatic joints are supported (write continuous joints as "
                                 "revolute with limits)")
    _give_massless_chains_a_speck(model)
    return model, [model.names[j] for j in range(first, model.njoints)]


SPECK_MASS = 1e-5  # of a moving link the URDF gives no <inertial> (a finger's), here and in the plant [kg]


def _give_massless_chains_a_speck(model):
    """A joint that moves no mass at all (a chain of links without <inertial>) carries a speck (SPECK_MASS, inertia
    SPECK_MASS × 1e-4 kg·m²) so that the joint-space inertia matrix stays invertible, as MuJoCo bounds the plant's."""
    carried = np.array([inertia.mass for inertia in model.inertias])
    for joint in range(model.njoints - 1, 0, -1):
        carried[model.parents[joint]] += carried[joint]
    for joint in range(1, model.njoints):
        if carried[joint] <= 0.0:
            model.inertias[joint] = pin.Inertia(SPECK_MASS, np.zeros(3), SPECK_MASS * 1e-4 * np.eye(3))


def _check_names(spec, model, joint_names):
    frames = [frame.name for frame in model.frames]
    for index, loop in enumerate(spec.loops):
        for key in ("frame_a", "frame_b"):
            name = getattr(loop, key)
            if not model.existFrame(name):
                raise ModelFileError(spec.path, f"loops[{index}] '{loop.name}'",
                                     f"{key} '{name}' is not a frame of the URDF{_suggest(name, frames)}")
    for key in ("actuated", "outputs", "measured_passive"):
        for name in getattr(spec, key):
            if name not in joint_names:
                what = "an output" if key == "outputs" else "a name"
                raise ModelFileError(spec.path, key, f"{what} '{name}' is not a joint of the URDF"
                                     f"{_suggest(name, joint_names)}")
    for name in spec.reference:
        if name not in joint_names:
            raise ModelFileError(spec.path, f"reference.{name}",
                                 f"'{name}' is not a joint of the URDF{_suggest(name, joint_names)}")
    for name in spec.measured_passive:
        if name in spec.actuated:
            raise ModelFileError(spec.path, "measured_passive", f"'{name}' is actuated, not passive")


def load_robot(urdf_path, loops_path=None, floating_base=False, closure_tolerance=1e-9):
    """Load a URDF (+ optional loop-closure YAML) and close every loop from the reference configuration.

    Without a loop file, the robot is serial: every joint is actuated and is its own output.

    Raises:
        ModelFileError: naming the file, entry and offending name or count (see docs/robot-description.md).
    """
    model, joint_names = _build_pinocchio_model(urdf_path, floating_base)
    if loops_path is None:
        spec = LoopClosureSpec(path="<serial>", actuated=tuple(joint_names), outputs=tuple(joint_names))
    else:
        spec = load_loop_closures(loops_path)
    _check_names(spec, model, joint_names)

    passive_names = tuple(name for name in joint_names if name not in spec.actuated)
    if spec.constrained_axes_count != len(passive_names):
        raise ModelFileError(spec.path, "loops",
                             f"the loops constrain {spec.constrained_axes_count} axes but the robot has "
                             f"{len(passive_names)} passive joints (every non-root joint not in 'actuated'); "
                             "these must be equal (Kangaroo paper, Assumption 2)")

    def q_index(names):
        return np.array([model.joints[model.getJointId(n)].idx_q for n in names], dtype=int)

    def v_index(names):
        return np.array([model.joints[model.getJointId(n)].idx_v for n in names], dtype=int)

    reference = pin.neutral(model)
    for name, value in spec.reference.items():
        reference[model.joints[model.getJointId(name)].idx_q] = value
    robot = RobotModel(
        model=model, urdf_path=str(urdf_path), spec=spec, floating_base=floating_base,
        joint_names=tuple(joint_names), actuated_names=spec.actuated, passive_names=passive_names,
        output_names=spec.outputs, measured_names=spec.measured_passive,
        actuated_q=q_index(spec.actuated), actuated_v=v_index(spec.actuated),
        passive_q=q_index(passive_names), passive_v=v_index(passive_names),
        output_q=q_index(spec.outputs), output_v=v_index(spec.outputs), reference_q=reference,
    )
    if spec.loops:
        robot.reference_q = _close_reference(robot, ClosedChain(robot), closure_tolerance)
    return robot


def _close_reference(robot, chain, tolerance):
    loose = [name for name, column in zip(robot.passive_names, robot.passive_v)
             if not chain.relative_support[:, column].any()]
    if loose:
        raise ModelFileError(robot.spec.path, "loops", f"passive joints {loose} belong to no loop, so nothing "
                             "determines them; list them in 'actuated' or add the loop that closes them")
    try:
        return chain.solve_passive(robot.reference_q, tolerance=tolerance).q
    except (ClosureError, SingularConfigurationError) as error:
        residual = chain.residual(robot.reference_q)
        worst = chain.loop_residual_norms(residual)
        worst_loop = max(worst, key=worst.get)
        raise ModelFileError(robot.spec.path, "reference",
                             f"the loops cannot be closed from the reference configuration ({error}); "
                             f"initial residual ‖e_l‖ = {np.linalg.norm(residual):.3e}, worst loop "
                             f"'{worst_loop}' at {worst[worst_loop]:.3e}") from None
