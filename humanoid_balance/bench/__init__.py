"""``humanoid-balance bench``: the papers' headline experiments in the embedded simulation (issue 9).

Each experiment module has ``run(smoke, robot, session) -> [Result]``, the robot its paper ran it on (``ROBOT``) and a
``NOTE`` on how it is run; :func:`run_benchmarks` runs the chosen ones, prints one table (paper figure, our target,
measured) and writes BENCHMARKS.md with the machine's description. ``smoke`` runs each briefly, for CI; ``robot``
(a bundled robot's name or a directory written by ``humanoid-balance init``) runs every experiment on that robot
instead, an experiment that does not apply to it saying why in its row. Each experiment runs in a
:mod:`~humanoid_balance.bench.session`: its simulated runs advance a progress line and, with ``record``, are
recorded one rosbag2 (MCAP) directory each (RECORDED: those that simulate; dds is left out, a recorder would
change the DDS load it measures).
"""
import importlib
import sys
import time
from pathlib import Path

from humanoid_balance.bench.results import Result, benchmarks_markdown, format_table, machine_info
from humanoid_balance.bench.session import running
from humanoid_balance.progress import Progress

__all__ = ["EXPERIMENTS", "RECORDED", "run_benchmarks"]

EXPERIMENTS = {  # name → module, in the order
    "push": "push_recovery",
    "dance": "dancing_arms",
    "jump": "viip_jump",
    "estimator": "estimator",
    "wrench": "wrench_estimation",
    "inertia": "inertia_comparison",
    "dds": "dds_loop",
    "cores": "cores",
    "nodes_push": "push_through_nodes",
    "soak": "soak",
    "robustness": "robustness",
    "step": "recovery_steps",
    "feet": "feet_alone",
    "starved": "starved_chain",
}


RECORDED = ("push", "dance", "jump", "wrench", "cores", "nodes_push", "step", "feet")
"""The experiments whose simulated runs ``record`` records: the closed loop's (as the nodes' messages) and the
runs through the nodes (every topic of the graph)."""


def run_benchmarks(names, smoke=False, output=None, command="humanoid-balance bench", progress=print, robot=None,
                   record=None, live=sys.stderr):
    """Run the named experiments (on ``robot`` instead of their own when given); print the table, write ``output``
    (Markdown) if given; returns the rows. ``record``: a folder for one recording per simulated run; ``live``:
    where each experiment's simulated time and real-time factor are shown while it runs (None: nowhere).

    An experiment that raises becomes one row saying so (met: no), so one failure does not hide the others.
    """
    results, notes = [], []
    for name in names:
        module = importlib.import_module(f"humanoid_balance.bench.{EXPERIMENTS[name]}")
        start = time.perf_counter()
        progress(f"[bench] {name} …", file=sys.stderr)
        try:
            with running(name, Progress(label=f"[bench] {name}: ", stream=live, events=False, interval=5.0),
                         record) as session:
                rows = module.run(smoke=smoke, robot=robot or module.ROBOT, session=session)
        except Exception as error:  # noqa: BLE001 — reported in the table, with its type and message
            rows = [Result(name, "experiment", "—", "runs", f"error: {type(error).__name__}: {error}", False)]
        progress(f"[bench] {name}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
        if robot is not None:
            rows = [row._replace(experiment=f"{row.experiment} ({robot_label(robot)})") for row in rows]
        results += rows
        notes.append(module.NOTE if robot is None else f"{module.NOTE} Run here on {robot_label(robot)} instead.")
    table = format_table(results)
    progress(table)
    if output is not None:
        output.write_text(benchmarks_markdown(results, machine_info(), command + (" --smoke" if smoke else ""),
                                              notes))
    return results


def robot_label(robot):
    """A robot argument as the table names it: the bundled robot's name or the configuration folder's name."""
    return Path(robot).resolve().name if Path(robot).exists() else str(robot)
