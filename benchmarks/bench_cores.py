"""The four nodes' cores against their per-message budgets on kangaroo_like (issue 16), as ratios to one pinocchio
crba on the same model timed alternately in the same run: state estimator ≤ 9, contact estimate ≤ 10, balancer
kinematic update ≤ 20, mapper update ≤ 9. Each core is timed on the inputs it received while the cores kept the
robot up in the embedded plant (humanoid_balance/bench/cores.py; also `humanoid-balance bench cores`).

Run: .venv/bin/python benchmarks/bench_cores.py
"""
import platform

import pinocchio as pin

from humanoid_balance.bench import cores
from humanoid_balance.bench.results import format_table

if __name__ == "__main__":
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"pinocchio {pin.__version__}\n")
    print(format_table(cores.run()))
