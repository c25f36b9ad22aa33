"""Joint → actuator mapping benchmark (issue: loop_closure_mapper).

One mapping update for the whole kangaroo_like (12 ball screws, 6 arm joints): output closure (warm-started Newton), eq. 22
velocities, eq. 23 efforts and the limit checks, with outputs following a 1 kHz stream of a squat.
Median, beside one pinocchio crba on the same model. Target: ≤ 0.1 ms.

Run: .venv/bin/python benchmarks/bench_mapper.py
"""
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from humanoid_balance.mapping import ActuatorMap
from humanoid_balance.model import load_robot

REPO = Path(__file__).resolve().parents[1]


def main(iterations=3000):
    robot = load_robot(REPO / "urdf/kangaroo_like.urdf", REPO / "config/kangaroo_like.loops.yaml")
    mapping = ActuatorMap(robot)
    reference = robot.reference_q[robot.output_q]
    squat = {"hip_pitch": -0.3, "knee": 0.6, "ankle_pitch": -0.3}  # foot kept flat [rad]
    amplitude = np.array([squat.get(name.split("_", 1)[1], 0.0) / 2 for name in robot.output_names])
    data = robot.model.createData()
    crba, update = [], []
    for k in range(iterations):
        t = k * 1e-3
        outputs = reference + amplitude * (1 - np.cos(2 * np.pi * 0.5 * t))
        rates = amplitude * 2 * np.pi * 0.5 * np.sin(2 * np.pi * 0.5 * t)
        start = time.perf_counter()
        mapping.update(outputs, rates, np.full(len(outputs), 20.0))
        update.append(time.perf_counter() - start)
        start = time.perf_counter()
        pin.crba(robot.model, data, robot.reference_q)
        crba.append(time.perf_counter() - start)
    warm = slice(iterations // 10, None)
    crba_median, update_median = statistics.median(crba[warm]), statistics.median(update[warm])
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"pinocchio {pin.__version__}; medians of {iterations} updates\n")
    print(f"{'quantity':<44}{'median':>12}{'× crba':>9}   target")
    print(f"{'pinocchio crba (reference)':<44}{crba_median * 1e3:>9.4f} ms{1.0:>9.1f}   —")
    print(f"{'mapping update, kangaroo_like, 18 actuators':<44}{update_median * 1e3:>9.4f} ms"
          f"{update_median / crba_median:>9.1f}   ≤ 0.100 ms")


if __name__ == "__main__":
    main()
