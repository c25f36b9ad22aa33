"""Closed-chain model benchmark (issue: closed-chain robot model).

One passive-state estimator iteration (Kangaroo eqs. 35–40: J_l, J_m, measurement and constraint
corrections, Euler step) on kangaroo_like, median time, printed beside one pinocchio ``crba`` on the same
model measured in the same run (docs/architecture.md, performance protocol). Paper: 0.38 ms in C++ for this step plus
model update and inverse dynamics. Target: ≤ 0.10 ms.

Run: .venv/bin/python benchmarks/bench_model.py
"""
import platform
from pathlib import Path

import numpy as np
import pinocchio as pin

from humanoid_balance.bench.estimator import estimator_step_seconds, median_seconds
from humanoid_balance.model import ClosedChain, load_robot

REPO = Path(__file__).resolve().parents[1]


def main(iterations=3000):
    robot = load_robot(REPO / "urdf/kangaroo_like.urdf", REPO / "config/kangaroo_like.loops.yaml")
    chain = ClosedChain(robot)
    q = robot.reference_q
    data = robot.model.createData()
    crba = median_seconds(lambda: pin.crba(robot.model, data, q), iterations)
    linearize = median_seconds(lambda: chain.linearize(q), iterations)
    step = estimator_step_seconds(robot, iterations)

    rows = [
        ("pinocchio crba (reference)", crba, "—"),
        ("J_l linearization (e_l, J_l)", linearize, "—"),
        ("passive-state estimator step, eqs. 35–40", step, "≤ 0.100 ms (paper C++: 0.38 ms incl. ID)"),
    ]
    print(f"kangaroo_like: nv = {robot.nv}, passive = {len(robot.passive_names)}, actuated = "
          f"{len(robot.actuated_names)}, constraint rows = {chain.m}")
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"pinocchio {pin.__version__}, numpy {np.__version__}; medians of {iterations} runs\n")
    print(f"{'quantity':<44}{'median':>12}{'× crba':>9}   target")
    for name, seconds, target in rows:
        print(f"{name:<44}{seconds * 1e3:>9.4f} ms{seconds / crba:>9.1f}   {target}")


if __name__ == "__main__":
    main()
