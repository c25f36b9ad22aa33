"""Robots shared by the model tests, helpers to draw closed configurations, and the short demo's check on a robot
that init configured."""
import json
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.cli import main
from humanoid_balance.model import ClosedChain, load_robot
from humanoid_balance.model.robot_config import load_robot_config
from humanoid_balance.resources import TALOS_URDF, robot_config_file

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parents[1] / "data"
ROBOT_FILES = {
    "crank_slider": (DATA / "crank_slider.urdf", DATA / "crank_slider.loops.yaml"),
    "kangaroo_like": (REPO / "urdf" / "kangaroo_like.urdf", REPO / "config" / "kangaroo_like.loops.yaml"),
    "mahru": (REPO / "urdf" / "mahru.urdf", None),
}

ROBOT_CONFIGS = {name: load_robot_config(robot_config_file(name)) for name in ("kangaroo_like", "mahru")}


def talos_urdf():
    """TALOS (reduced) from example-robot-data, a test dependency (``pip install example-robot-data``)."""
    if TALOS_URDF is None:
        pytest.fail("example-robot-data's TALOS is not installed: pip install example-robot-data")
    return TALOS_URDF


def load(name, floating_base=False):
    urdf, loops = ROBOT_FILES[name]
    robot = load_robot(urdf, loops, floating_base=floating_base)
    return robot, ClosedChain(robot)


def random_actuated(robot, rng, fraction=1.0):
    """Actuated positions drawn uniformly inside ``fraction`` of each stroke, around its centre."""
    lower, upper = robot.position_limits(robot.actuated_names)
    centre, half = (lower + upper) / 2, (upper - lower) / 2 * fraction
    return rng.uniform(centre - half, centre + half)


def closed_configuration(robot, chain, rng, fraction=0.8):
    """A closed configuration reached by walking from the reference to random actuator values."""
    target = random_actuated(robot, rng, fraction)
    q = robot.reference_q.copy()
    start = q[robot.actuated_q].copy()
    for s in np.linspace(0.0, 1.0, 6)[1:]:
        q[robot.actuated_q] = start + s * (target - start)
        q = chain.solve_passive(q).q
    if robot.floating_base:
        q[:3] = rng.normal(size=3) * 0.1
        q[3:7] = rng.normal(size=4)
        q[3:7] /= np.linalg.norm(q[3:7])
    return q


def consistent_velocity(robot, chain, q, rng):
    """A velocity satisfying J_l v = 0: random base twist and actuator rates through G."""
    G = chain.velocity_map(q)
    return G @ rng.normal(size=G.shape[1])


def static_stance(robot, chain, soles, left_share=0.6):
    """A floating-base robot standing still on its soles at the reference configuration: (q, sole wrenches
    (2, 6) in the sole frames, actuator efforts holding them, weight [N]).

    The wrenches are the least-norm solution of the base equilibrium g_b = J_c,bᵀ F with ``left_share`` of
    the weight on the first sole; the efforts solve the full statics g = Sτ + J_cᵀF + J_lᵀλ of the spanning
    tree, with g from pinocchio's inverse dynamics at rest."""
    import pinocchio as pin

    q = robot.reference_q.copy()
    data = robot.model.createData()
    pin.computeJointJacobians(robot.model, data, q)
    pin.updateFramePlacements(robot.model, data)
    J_c = np.vstack([pin.getFrameJacobian(robot.model, data, robot.frame_id(s), pin.LOCAL) for s in soles])
    g = pin.rnea(robot.model, data, q, np.zeros(robot.nv), np.zeros(robot.nv))
    split = np.zeros((1, 12))
    split[0, 2], split[0, 8] = 1.0 - left_share, -left_share
    F = np.linalg.lstsq(np.vstack([J_c[:, :6].T, split]), np.concatenate([g[:6], [0.0]]), rcond=None)[0]
    S = np.zeros((robot.nv, len(robot.actuated_v)))
    S[robot.actuated_v, np.arange(len(robot.actuated_v))] = 1.0
    solution = np.linalg.lstsq(np.hstack([S, chain.constraint_jacobian(q).T]), g - J_c.T @ F, rcond=None)[0]
    return q, F.reshape(2, 6), solution[:len(robot.actuated_v)], robot.total_mass * 9.81


def assert_short_demo_stands(robot_folder, output, mode, smallest_impulse):
    """`humanoid-balance demo --scenario short` on a robot folder, in ``mode`` ("both": kinematic, then momentum):
    no fall (MuJoCo's ground truth), every node OK, each push larger than ``smallest_impulse`` [N·s] and recovered
    (CoM within 50 mm, back within 5 mm in less than 2 s)."""
    assert main(["demo", "--scenario", "short", "--mode", mode, "--robot", str(robot_folder), "--no-record",
                 "--output", str(output)]) == 0
    for name in ("kinematic", "momentum") if mode == "both" else (mode,):
        figures = json.loads((output / name if mode == "both" else output).joinpath("metrics.json").read_text())
        assert not figures["fell"] and figures["all nodes OK"], (name, figures["nodes"])
        for push in figures["pushes"]:
            assert push["impulse [N·s]"] > smallest_impulse, (name, push)
            assert push["CoM peak excursion [m]"] < 0.05 and push["settling time to 5 mm [s]"] < 2.0, (name, push)


def constrained_accelerations(robot, chain, q, v, generalized_force):
    """ν̇ of the spanning tree under ``generalized_force`` (nv,) with its loops closed: M ν̇ + h = f + J_lᵀλ and
    J_l ν̇ = −J̇_l ν solved as one KKT system (pinocchio's M and h)."""
    data = robot.model.createData()
    M, h = pin.crba(robot.model, data, q), pin.nonLinearEffects(robot.model, data, q, v)
    J_l = chain.constraint_jacobian(q)
    m = J_l.shape[0]
    kkt = np.block([[M, -J_l.T], [J_l, np.zeros((m, m))]])
    return np.linalg.solve(kkt, np.concatenate([generalized_force - h, -chain.bias(q, v)]))[:robot.nv]
