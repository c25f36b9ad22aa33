"""Experiment 6: Kangaroo vs TALOS inertia indices (Kangaroo Table III, eqs. 32 and 34).

χ_j = ‖λ_TALOS,j‖ / ‖λ_K,j‖ over the columns of the equivalent Cartesian inertia at the left sole, base fixed,
ε = 1e-5 (eq. 31), split into its linear and angular blocks; γ_j = the same ratio over the x, y, z rows of the
centroidal angular momentum matrix's joint columns, kangaroo_like's in its serial-equivalent output rates
(rad/s, as TALOS's joints; in ball-screw m/s its columns would weigh some twenty times more). Above 1:
kangaroo_like is lighter in that direction. Both robots stand in the same nominal configuration: legs nearly
extended (hip pitch −0.1, knee 0.2, ankle pitch −0.1 rad), every other joint at zero; kangaroo_like's closed
chains are closed for those outputs. Each robot's sole and legs come from its robot configuration
(config/robots/); the hip pitch, knee and ankle pitch are the legs' joints about the world y axis.
"""
import numpy as np

from humanoid_balance.bench.closed_loop import robot_config
from humanoid_balance.bench.results import Result
from humanoid_balance.mapping.actuator_map import ActuatorMap
from humanoid_balance.model import Centroidal, ClosedChain, load_robot
from humanoid_balance.model.legs import pitch_joints
from humanoid_balance.resources import TALOS_URDF

__all__ = ["NOTE", "ROBOT", "run", "indices"]

EXPERIMENT = "6 Kangaroo vs TALOS"
ROBOT = "kangaroo_like"  # compared with TALOS
NOMINAL = (-0.1, 0.2, -0.1)  # hip pitch, knee, ankle pitch [rad], both legs
PAPER = {"Λ linear": (3.6, 4.1, 4.6), "Λ angular": (11.4, 4.9, 3.6), "CAMM": (2.6, 2.7, 2.0)}
NOTE = ("6: kangaroo_like (53.4 kg) against example-robot-data's talos_reduced.urdf, both with legs nearly "
        "extended (hip pitch −0.1, knee 0.2, ankle pitch −0.1 rad), ε = 1e-5; χ over the columns of the linear "
        "and angular blocks of Λ at the left sole, γ over the x, y, z rows of the CAMM (joint columns, "
        "kangaroo_like's in output rates). "
        "kangaroo_like is a generated model of the real robot's layout, not its CAD masses.")


def _nominal_outputs(robot, config):
    """Output joint → value: NOMINAL on each leg's pitch joints (hip, knee, ankle), every other output at zero."""
    values = dict.fromkeys(robot.output_names, 0.0)
    for leg in config.leg_joints.values():
        pitching = pitch_joints(robot, robot.reference_q, leg)
        if len(pitching) != len(NOMINAL):
            raise ValueError(f"{config.urdf_file}: leg {leg} turns about y at {pitching}, not at hip, knee and ankle")
        values.update(zip(pitching, NOMINAL))
    return values


def _nominal(robot, config):
    """The nominal configuration, the loops closed for its outputs."""
    mapper = ActuatorMap(robot)
    mapper.positions(list(_nominal_outputs(robot, config).values()))
    return mapper.q


def _norms(robot, q, sole):
    centroidal = Centroidal(ClosedChain(robot))
    Lambda = centroidal.cartesian_inertia(q, sole, epsilon=1e-5)
    return {"Λ linear": np.linalg.norm(Lambda[:3, :3], axis=0), "Λ angular": np.linalg.norm(Lambda[3:, 3:], axis=0),
            "CAMM": centroidal.camm_axis_norms(q, outputs=True)}


def indices(robot=ROBOT):
    """χ (linear, angular) and γ of ``robot`` against TALOS: name → (x, y, z)."""
    norms = []
    for name in (robot, "talos"):
        config = robot_config(name)
        robot = load_robot(config.urdf_file, config.loops, floating_base=True)
        norms.append(_norms(robot, _nominal(robot, config), config.soles[0]))
    ours, theirs = norms
    return {name: theirs[name] / ours[name] for name in PAPER}


def run(smoke=False, robot=ROBOT, session=None):
    if TALOS_URDF is None:
        return [Result(EXPERIMENT, "χ, γ", "Table III", "> 1", "TALOS missing: pip install example-robot-data",
                       False)]
    rows = []
    for name, ratios in indices(robot).items():
        symbol = "γ" if name == "CAMM" else "χ"
        rows.append(Result(EXPERIMENT, f"{symbol} x / y / z, {name}",
                           "Kangaroo: " + " / ".join(f"{value:.1f}" for value in PAPER[name]), "> 1 each",
                           " / ".join(f"{value:.1f}" for value in ratios), bool(np.all(ratios > 1.0))))
    return rows
