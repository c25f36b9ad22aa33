"""Balance controller benchmark (issue: centroidal_balancer).

Wrench-distribution QP solve for two feet, warm-started (OSQP's own solve time and the Python call);
target ≤ 50 µs. Full controller update per mode on Mahru I. Medians, beside one pinocchio crba on the same
model (docs/architecture.md, performance protocol).

Run: .venv/bin/python benchmarks/bench_balancer.py
"""
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from humanoid_balance.control.balancer import MODES, balance_controller, BalancerConfig, BalancerState, Foot
from humanoid_balance.control.momentum_balance import MomentumGains, contact_wrench_map, desired_com_wrench
from humanoid_balance.model import load_robot

REPO = Path(__file__).resolve().parents[1]
LEG = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")


def median(samples):
    return statistics.median(samples[len(samples) // 10:])  # drop the warm-up tenth


def main(iterations=2000):
    robot = load_robot(REPO / "urdf" / "mahru.urdf", floating_base=True)
    q = pin.neutral(robot.model)
    q[2] = 0.8
    for side in ("left", "right"):
        q[robot.joint_q_index(f"{side}_hip_pitch")] = -0.4
        q[robot.joint_q_index(f"{side}_knee")] = 0.8
        q[robot.joint_q_index(f"{side}_ankle_pitch")] = -0.4
    feet = tuple(Foot(f"{s}_foot", f"{s}_sole", tuple(f"{s}_{j}" for j in LEG)) for s in ("left", "right"))
    data = robot.model.createData()
    crba = []
    for _ in range(iterations):
        start = time.perf_counter()
        pin.crba(robot.model, data, q)
        crba.append(time.perf_counter() - start)
    rows = [("pinocchio crba on Mahru (reference)", median(crba), "—")]

    balancer = balance_controller(robot, BalancerConfig(mode="momentum", feet=feet))
    pin.framesForwardKinematics(robot.model, data, q)
    com = pin.centerOfMass(robot.model, data, q)
    G = [contact_wrench_map(data.oMf[robot.frame_id(f.sole)], com) for f in feet]
    gains = MomentumGains(np.eye(3) * 800, np.eye(3) * 4, np.eye(3) * 300, np.eye(3) * 4)
    wall, osqp_time = [], []
    for k in range(iterations):
        w_d = desired_com_wrench(robot.total_mass, com + 0.01 * np.sin(0.01 * k) * np.array([1, 0.5, 0]), com,
                                 np.eye(3), np.eye(3), np.zeros(6), gains)
        start = time.perf_counter()
        result = balancer.distribution.solve(G, w_d, (0, 1), robot.total_mass)
        wall.append(time.perf_counter() - start)
        osqp_time.append(result.solve_time)
    rows += [("wrench QP, two feet, warm-started: OSQP solve", median(osqp_time), "≤ 0.050 ms"),
             ("wrench QP: Python call incl. update", median(wall), "—")]

    com_reference = com + np.array([0.005, 0.0, 0.0])
    for mode in MODES:
        balancer = balance_controller(robot, BalancerConfig(mode=mode, feet=feet))
        state = BalancerState(q, np.zeros(robot.nv), (True, True), np.r_[com[:2], 0.0], com_reference)
        samples = []
        for _ in range(iterations // 4):
            start = time.perf_counter()
            balancer.update(state, 0.002)
            samples.append(time.perf_counter() - start)
        rows.append((f"controller update, {mode} mode (Mahru)", median(samples), "—"))

    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"pinocchio {pin.__version__}; medians\n")
    print(f"{'quantity':<48}{'median':>12}{'× crba':>9}   target")
    for name, seconds, target in rows:
        print(f"{name:<48}{seconds * 1e3:>9.4f} ms{seconds / rows[0][1]:>9.1f}   {target}")


if __name__ == "__main__":
    main()
