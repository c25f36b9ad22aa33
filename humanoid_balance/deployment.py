"""How the suite is deployed, written once for the launch files, the demo and the bench: the suite's nodes
(humanoid_balance.nodes.BALANCE_NODES and PLANT), what each balance mode asks of the mapper and the plant, and the
parameters a node starts with.

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
from humanoid_balance.nodes import BALANCE_NODES, PLANT
from humanoid_balance.resources import config_file

__all__ = ["BALANCE_NODES", "PLANT", "mode_parameters", "node_parameters", "suite_parameters",
           "write_parameter_file"]



def mode_parameters(mode):
    """node → {parameter: value} that balance ``mode`` needs (control.balancer.BALANCE_MODES): the balancer's
    mode, the mapper's command interface and compliance compensation, the plant's command interface. ValueError for
    no mode."""
    profile = balance_mode(mode, "balance_mode")
    return {"centroidal_balancer": {"mode": mode},
            "loop_closure_mapper": {"command_interface": profile.command_interface,
                                    "compliance_compensation": profile.compliance_compensation},
            PLANT: {"command_interface": profile.command_interface}}


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
