"""How the suite is deployed, written once for the launch files, the demo and the bench: the suite's nodes
(humanoid_balance.nodes.BALANCE_NODES and PLANT), what each balance mode asks of the mapper and the plant, how the
suite runs on the embedded plant, and the parameters a node starts with.

A node's parameters are layered, later layers winning: its defaults file (``config/<node>.yaml``), the robot's
configuration file (its ``/**`` section, then a section of the node's own if it has one), the robot's files as
absolute paths, then the overrides of whoever starts it. The layers are merged here, into one section per node,
rather than passed to ROS as several files: ROS 2 applies the sections of several files in the order their keys
first appear, not in the order of the files, so that the robot file's ``/**`` would win over overrides in a later
``/**/<node>`` section whose key the defaults file opened first (test_deployment reads it back from the nodes).
"""
from pathlib import Path

import yaml

from humanoid_balance.control.balancer import balance_mode
from humanoid_balance.model.errors import ModelFileError
from humanoid_balance.model.robot_config import robot_file_parameters
from humanoid_balance.nodes import BALANCE_NODES, PLANT, REAL_TIME_RATE
from humanoid_balance.resources import config_file

__all__ = ["BALANCE_NODES", "PLANT", "REAL_TIME_RATE", "mode_parameters", "simulation_parameters", "node_parameters",
           "suite_parameters", "write_parameter_file"]


def mode_parameters(mode):
    """node → {parameter: value} that balance ``mode`` needs (control.balancer.BALANCE_MODES): the balancer's
    mode, the mapper's command interface and compliance compensation, the plant's command interface. ValueError for
    no mode."""
    profile = balance_mode(mode, "balance_mode")
    return {"centroidal_balancer": {"mode": mode},
            "loop_closure_mapper": {"command_interface": profile.command_interface,
                                    "compliance_compensation": profile.compliance_compensation},
            PLANT: {"command_interface": profile.command_interface}}


def simulation_parameters(contact_mode="actuator_forces", real_time_rate=None):
    """node → {parameter: value} that running the suite on the embedded plant needs (sim.launch.py and the demo):
    the plant publishes /clock and every node, the plant too, runs on it (so that all of them report on
    /diagnostics once a simulated second); the contact estimator in ``contact_mode``, the plant's foot F/T sensors
    on for ft_sensors (on <foot>/wrench, the topics the estimator reads); the plant in lockstep (as fast as the
    loop allows, one tick of delay however loaded the machine is: reproducible) or, with ``real_time_rate`` [Hz],
    running free against the wall clock at that control rate, as a robot does, the contact estimator sampling at
    it."""
    table = {node: {"use_sim_time": True} for node in (PLANT, *BALANCE_NODES)}
    table[PLANT].update(publish_clock=True, force_torque_sensors=contact_mode == "ft_sensors")
    table["contact_estimator"]["mode"] = contact_mode
    if real_time_rate:
        table[PLANT].update(real_time=True, lockstep=False, publish_period=1.0 / real_time_rate)
        table["contact_estimator"]["sample_rate"] = float(real_time_rate)
    else:
        table[PLANT].update(real_time=False, lockstep=True)
    return table


def _parameter_document(path):
    """The ROS 2 parameter file ``path``, read."""
    try:
        return yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as error:
        raise ModelFileError(path, None, f"cannot read it as a ROS 2 parameter file: {error}") from None


def _node_section(document, node):
    """The ros__parameters a parameter file's ``document`` gives ``node``: its ``/**`` section, then the node's own."""
    values = {}
    for key in ("/**", f"/**/{node}", node, f"/{node}"):
        values.update((document.get(key) or {}).get("ros__parameters") or {})
    return values


def suite_parameters(robot_file, overrides):
    """node → the parameters it starts with, for each node of ``overrides`` (node → {parameter: value}):
    config/<node>.yaml, the robot configuration file ``robot_file``, its files made absolute, then the node's
    overrides, later ones winning; the robot file read once for them all.

    Raises:
        ModelFileError: a parameter file or the robot configuration cannot be read.
    """
    robot = _parameter_document(robot_file)
    files = robot_file_parameters(robot_file)
    return {node: {**_node_section(_parameter_document(config_file(f"{node}.yaml")), node),
                   **_node_section(robot, node), **files, **values} for node, values in overrides.items()}


def node_parameters(node, robot_file, overrides=None):
    """The parameters ``node`` starts with (:func:`suite_parameters`)."""
    return suite_parameters(robot_file, {node: overrides or {}})[node]


class _ParameterFileDumper(yaml.SafeDumper):
    """YAML without anchors and aliases, which rcl's parameter-file parser refuses ("Will not support aliasing"):
    a value several nodes share is written out in each section."""

    def ignore_aliases(self, data):
        return True


def write_parameter_file(parameters, path):
    """Write ``parameters`` (node → {parameter: value}) as a ROS 2 parameter file, one ``/**/<node>`` section per
    node: what one process running several of the nodes (balance_stack) or each of them is given."""
    document = {f"/**/{node}": {"ros__parameters": values} for node, values in parameters.items()}
    Path(path).write_text(yaml.dump(document, Dumper=_ParameterFileDumper, sort_keys=False))
    return Path(path)
