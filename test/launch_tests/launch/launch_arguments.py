"""What the launch tests check of a launch file's arguments, listed from the launch description itself: every
argument it declares has a check in the test, and some case of the test sets it to a value other than its default,
so that an argument declared and then ignored, or a new one without a check, fails."""
import logging
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchContext
from launch.launch_description_sources import get_launch_description_from_python_launch_file
from launch.utilities import perform_substitutions


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
