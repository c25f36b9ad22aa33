"""What the launch tests check of a launch file's arguments, listed from the launch description itself: every
argument it declares has a check in the test, and some case of the test sets it to a value other than its default,
so that an argument declared and then ignored, or a new one without a check, fails."""
import logging
import os
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchContext
from launch.launch_description_sources import get_launch_description_from_python_launch_file
from launch.utilities import perform_substitutions

from humanoid_balance.nodes import BALANCE_NODES


def launch_file(name):
    """The installed launch file ``name`` of humanoid_balance."""
    return Path(get_package_share_directory("humanoid_balance")) / "launch" / name


def declared_arguments(name):
    """argument → its default (None: none) of every argument the launch file ``name`` declares."""
    description = get_launch_description_from_python_launch_file(str(launch_file(name)))
    return {argument.name: None if argument.default_value is None else
            perform_substitutions(LaunchContext(), argument.default_value)
            for argument in description.get_launch_arguments()}


def coverage_problems(name, cases, checks):
    """What is wrong with a test of launch file ``name`` whose ``cases`` (case → {argument: value}) launch it and
    ``checks`` (argument → its check) read the arguments back: one line per argument declared without a check,
    never set to another value than its default, or set without being declared."""
    declared = declared_arguments(name)
    problems = [f"{argument}: declared by {name}, no check in the test" for argument in declared
                if argument not in checks]
    problems += [f"{argument}: no case sets it to another value than its default {default!r}"
                 for argument, default in declared.items()
                 if all(values.get(argument, default) == default for values in cases.values())]
    problems += [f"{argument}: set by case {case}, not declared by {name}" for case, values in cases.items()
                 for argument in values if argument not in declared]
    problems += [f"{argument}: checked, not declared by {name}" for argument in checks if argument not in declared]
    return problems


def case_values(name, values):
    """Every declared argument of launch file ``name`` → its value in a case that sets ``values``."""
    return {**declared_arguments(name), **values}


def check_each_argument(test, name, arguments, checks, proc_info):
    """Run, as a subtest of ``test``, each declared argument's check of launch file ``name`` launched with
    ``arguments`` (argument → value the case sets): ``checks`` (argument → check(test, values, proc_info)) read each
    value back where it lands."""
    values = case_values(name, arguments)
    for argument, value in values.items():
        with test.subTest(argument=argument, value=value):
            test.assertTrue(argument in checks, "no check (test_every_argument_is_set_and_checked)")
            checks[argument](test, values, proc_info)


def endpoint_nodes(graph, topic, kind):
    """The names of the nodes with a ``kind`` (subscription | publisher) on ``topic``, as the ROS graph shows them."""
    infos = (graph.get_subscriptions_info_by_topic(topic) if kind == "subscription"
             else graph.get_publishers_info_by_topic(topic))
    return {info.node_name for info in infos}


class LaunchLog(logging.Handler):
    """The lines the launch logs itself (launch.user: LogInfo), kept: launch_testing runs the launch in the test's
    process."""

    def __init__(self):
        super().__init__()
        self.lines = []
        logging.getLogger("launch.user").addHandler(self)

    def emit(self, record):
        self.lines.append(record.getMessage())


SCHEDULED = (*BALANCE_NODES, "balance_stack")
"""The executables whose processes the scheduling arguments reach (the plant is the robot's, not the suite's)."""


def _threads(pid):
    """(tid, policy, priority, CPUs) of each thread of process ``pid`` still running, as the operating system says."""
    rows = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            rows.append((int(task), os.sched_getscheduler(int(task)), os.sched_getparam(int(task)).sched_priority,
                         sorted(os.sched_getaffinity(int(task)))))
        except ProcessLookupError:
            continue
    return rows


def check_scheduling(argument):
    """The check of one of the arguments realtime_priority, cpu_affinity and lock_memory: each process of the suite's
    nodes has, as the operating system says, what it asks for — the SCHED_FIFO priority on every thread, the CPUs,
    locked memory — or the nodes' /diagnostics (``scheduling``) say that the operating system refused it, and then
    the process has none of it."""
    def check(test, values, processes):
        pids = {action.process_details["name"]: action.process_details["pid"] for action in processes.processes()
                if action.process_details["name"].rsplit("-", 1)[0] in SCHEDULED}
        test.assertTrue(pids, f"no process of {SCHEDULED} among {processes.process_names()}")
        reports = {name.split(":")[0]: {pair.key: pair.value for pair in status.values}.get("scheduling")
                   for name, status in test.probe.diagnostics.items() if name.split(":")[0] in BALANCE_NODES}
        test.assertEqual(set(reports), set(BALANCE_NODES), "every node reports its scheduling")
        refused = {node: report for node, report in reports.items()
                   if argument in report.partition("; refused: ")[2]}  # (nodes.realtime.Scheduling.describe)
        for name, pid in pids.items():
            threads = _threads(pid)
            if argument == "realtime_priority":
                priority = int(values[argument])
                expected = {(os.SCHED_OTHER, 0)} if priority == 0 or refused else {(os.SCHED_FIFO, priority)}
                test.assertEqual({(policy, level) for _, policy, level, _ in threads}, expected, f"{name}: {reports}")
            elif argument == "cpu_affinity":
                cpus = [int(cpu) for cpu in values[argument].split(",")] if values[argument] else None
                affinities = {tuple(cpu_set) for *_, cpu_set in threads}
                if cpus is None or refused:
                    test.assertEqual(affinities, {tuple(sorted(os.sched_getaffinity(0)))}, name)
                else:
                    test.assertEqual(affinities, {tuple(sorted(cpus))}, name)
            else:
                locked = int(Path(f"/proc/{pid}/status").read_text().split("VmLck:")[1].split()[0])
                test.assertEqual(locked > 0, values[argument] == "true" and not refused, f"{name}: VmLck {locked} kB")
    return check
