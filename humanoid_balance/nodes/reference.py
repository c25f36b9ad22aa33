"""The nodes' parameter and topic reference (docs/parameters.md), generated from what the nodes themselves declare: each
node of :data:`~humanoid_balance.nodes.BALANCE_NODES` and the plant is built in this process, on the bundled robot and
its own defaults (a lifecycle node configured, as ``autostart`` does), under a private rclpy context and DDS domain, and
its declared parameters (name, type, default, read-only, description and range of their ParameterDescriptor), its
subscriptions, publishers and services are read back and written as Markdown. One source: a description is written once,
where the parameter is declared.

Names of the robot's feet and limbs are written ``<foot>`` and ``<limb>``; what rclpy declares and creates on every node
(``use_sim_time``, the parameter services, ``/parameter_events``, ``/rosout``, the lifecycle services) is left out,
found by building a bare rclpy node beside each.
"""
import os
import textwrap
from pathlib import Path
from typing import NamedTuple

from humanoid_balance.nodes import BALANCE_NODES, PLANT

__all__ = ["VARIANTS", "ParameterRow", "TopicRow", "NodeReference", "node_reference", "references", "markdown",
           "write_reference"]

NAMESPACE = "/reference"
"""The namespace the nodes are built in, so that relative names (every topic of the suite but /diagnostics and
/clock) can be told from absolute ones and written relative."""
VARIANTS = {"contact_estimator": ({"mode": "actuator_forces"},),
            "centroidal_balancer": ({"contact_phases": "normal_force"},),
            "loop_closure_mapper": ({"per_interface_topics": True},),
            "mujoco_sim": ({"force_torque_sensors": True}, {"publish_clock": True})}
"""Parameter values that change a node's topics: the node is built once more with each, and a topic that only some
builds have is marked with the values that create it."""


class ParameterRow(NamedTuple):
    name: str          # with <foot> / <limb> for the robot's feet and limbs
    type: str          # ROS 2 parameter type: bool, integer, double, string, double_array, ...
    default: str       # as written in a parameter file; per foot or limb "<name>: value" lines
    read_only: bool
    description: str   # with its range, where it has one


class TopicRow(NamedTuple):
    name: str          # relative to the node's namespace unless it starts with /; <foot> / <limb> for their names
    type: str          # package/Type
    kind: str          # "subscribes", "publishes" or "service"
    qos: str           # reliability and depth ("" for a service)
    when: str          # "" when the node always has it, else the parameter value that creates it


class NodeReference(NamedTuple):
    name: str
    lifecycle: bool
    parameters: tuple  # ParameterRow
    topics: tuple      # TopicRow


def _type_name(python_type):
    """sensor_msgs.msg._joint_state.JointState → sensor_msgs/JointState."""
    return f"{python_type.__module__.split('.')[0]}/{python_type.__name__}"


def _value_text(value, roots):
    """A parameter value as a parameter file would hold it; the package's and the user's folders as placeholders."""
    if isinstance(value, str):
        for root, placeholder in roots:
            value = value.replace(root, placeholder)
        return f'"{value}"' if value == "" else value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        return "[" + ", ".join(_value_text(item, roots) for item in list(value)) + "]"
    return repr(value)


def _templates(config):
    """(instance name, placeholder) of the robot's feet and limbs, longest names first."""
    pairs = [(foot, "<foot>") for foot in config.feet] + [(limb, "<limb>") for limb in
                                                          (*config.busy_limbs, *config.cartesian_limbs)]
    return sorted(pairs, key=lambda pair: -len(pair[0]))


def _template(name, templates, separator):
    """``name`` with a foot's or limb's name replaced by its placeholder: in a topic (``separator`` "/") wherever it
    is a level of the name, in a parameter (``separator`` "_") where it begins the name; (templated name, instance or
    None)."""
    for instance, placeholder in templates:
        if separator == "/" and instance in name.split("/"):
            return "/".join(placeholder if part == instance else part for part in name.split("/")), instance
        if separator == "_" and name.startswith(instance + "_"):
            return placeholder + name[len(instance):], instance
    return name, None


def _parameters(node, bare, templates, roots):
    from rclpy.exceptions import ParameterUninitializedException
    from rclpy.parameter import Parameter

    names = [name for name in node.list_parameters([], 0).names if name not in bare]
    rows = {}
    for name, descriptor in zip(names, node.describe_parameters(names)):
        try:
            value = _value_text(node.get_parameter(name).value, roots)
        except ParameterUninitializedException:
            value = "(not set)"
        description = descriptor.description
        for bound in (*descriptor.floating_point_range, *descriptor.integer_range):
            description += f" (range {bound.from_value:g} … {bound.to_value:g})"
        templated, instance = _template(name, templates, "_")
        kind = Parameter.Type(descriptor.type).name.lower()
        if instance is not None:
            value = f"{instance}: {value}"
            if templated in rows:
                value = f"{rows[templated].default}<br>{value}"
        rows[templated] = ParameterRow(templated, kind, value, bool(descriptor.read_only), description)
    return tuple(rows.values())  # in declaration order


def _endpoints(node):
    """{(name, type, kind): qos} of the node's subscriptions, publishers and services, names resolved."""
    def qos(profile):
        reliability = profile.reliability.name.lower().replace("_", " ")
        return f"{reliability}, depth {profile.depth}"
    endpoints = {}
    for subscription in node.subscriptions:
        endpoints[(subscription.topic_name, _type_name(subscription.msg_type), "subscribes")] = qos(
            subscription.qos_profile)
    for publisher in node.publishers:
        endpoints[(publisher.topic_name, _type_name(publisher.msg_type), "publishes")] = qos(publisher.qos_profile)
    for service in node.services:
        endpoints[(node.resolve_service_name(service.srv_name), _type_name(service.srv_type), "service")] = ""
    return endpoints


def _topic_rows(default, variants, templates):
    """TopicRows of a node's ``default`` build ({endpoint: qos}) and of its ``variants`` ([(the values it was built
    with, the default build's values of the same parameters, its endpoints)]): a topic that only some builds have names
    the values that create it — the variants' it appears in, or the defaults of those whose variants lack it."""
    rows = {}
    for endpoint, qos in {**{key: qos for *_, endpoints in variants for key, qos in endpoints.items()},
                          **default}.items():
        if endpoint in default:
            when = " and ".join(defaults for _, defaults, endpoints in variants if endpoint not in endpoints)
        else:
            when = " or ".join(values for values, _, endpoints in variants if endpoint in endpoints)
        name, type_name, kind = endpoint
        relative = name[len(NAMESPACE) + 1:] if name.startswith(NAMESPACE + "/") else name
        templated, _ = _template(relative, templates, "/")
        rows[(kind != "subscribes", kind == "service", templated, type_name)] = TopicRow(
            templated, type_name, kind, qos, when)
    return tuple(rows[key] for key in sorted(rows))


def _bare(kind, name, context):
    """What rclpy itself gives a node of class ``kind`` named ``name``: (its endpoints, its parameter names)."""
    bare = kind(name, context=context, namespace=NAMESPACE)
    try:
        return set(_endpoints(bare)), set(bare.list_parameters([], 0).names)
    finally:
        bare.destroy_node()


def node_reference(name, context, templates, roots):
    """The NodeReference of node ``name``, built (and, for VARIANTS, built again) in ``context``."""
    from rclpy.lifecycle import LifecycleNode
    from rclpy.node import Node
    from rclpy.parameter import Parameter

    from humanoid_balance.nodes import node_factory
    from humanoid_balance.nodes.entry import declare_process_parameters

    def values(node, keys):
        return ", ".join(f"{key}: {_value_text(node.get_parameter(key).value, roots)}" for key in keys)

    default, default_values, variants, parameters, lifecycle = None, [], [], None, False
    for overrides in ({}, *VARIANTS.get(name, ())):
        node = node_factory(name)(context=context, namespace=NAMESPACE, parameter_overrides=[
            Parameter(key, value=value) for key, value in overrides.items()])
        try:
            declare_process_parameters(node)  # declared by the node's executable, on the first of its process
            lifecycle = isinstance(node, LifecycleNode)
            unknown = [key for key in overrides if not node.has_parameter(key)]
            if unknown:
                raise ValueError(f"reference.VARIANTS: {name} declares no parameter {unknown}")
            rclpy_endpoints, rclpy_parameters = _bare(LifecycleNode if lifecycle else Node, name, context)
            endpoints = {key: qos for key, qos in _endpoints(node).items() if key not in rclpy_endpoints}
            if overrides:
                variants.append((values(node, overrides), default_values[len(variants)], endpoints))
            else:
                default, parameters = endpoints, _parameters(node, rclpy_parameters, templates, roots)
                default_values = [values(node, variant) for variant in VARIANTS.get(name, ())]
        finally:
            node.destroy_node()
    return NodeReference(name, lifecycle, parameters, _topic_rows(default, variants, templates))


def references(domain_id=None):
    """The NodeReference of each node of BALANCE_NODES and of the PLANT, the robot configuration they were built on and
    rclpy's own parameters; in a private rclpy context on DDS domain ``domain_id`` (default: one from the process id,
    away from the usual 0)."""
    import rclpy
    from rclpy.context import Context
    from rclpy.node import Node

    from humanoid_balance.model.robot_config import load_robot_config
    from humanoid_balance.resources import robot_config_file

    config = load_robot_config(robot_config_file())
    package_root = str(robot_config_file().parents[2])
    roots = ((package_root, "package://humanoid_balance"), (str(Path.home()), "~"))
    context = Context()
    domain = domain_id if domain_id is not None else 1 + os.getpid() % 100
    rclpy.init(args=["--ros-args", "--log-level", "error"], context=context, domain_id=domain)
    try:
        built = [node_reference(name, context, _templates(config), roots) for name in (*BALANCE_NODES, PLANT)]
        return built, config, sorted(_bare(Node, "bare", context)[1])
    finally:
        rclpy.shutdown(context=context)


def _table(header, rows):
    escape = lambda text: str(text).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return lines + ["| " + " | ".join(escape(cell) for cell in row) + " |" for row in rows]


def markdown(built, config, rclpy_parameters):
    """docs/parameters.md's text."""
    from humanoid_balance.resources import DEFAULT_ROBOT

    common = {}
    for row in built[0].parameters:
        same = [next((p for p in node.parameters if p.name == row.name), None) for node in built]
        if all(p is not None and (p.type, p.default, p.description) == (row.type, row.default, row.description)
               for p in same):
            common[row.name] = [node.name for node, p in zip(built, same) if p.read_only != row.read_only]
    limbs = ", ".join((*config.busy_limbs, *config.cartesian_limbs)) or "none"
    introduction = (
        "Generated by `humanoid-balance docs` (run from the repository's root) from what each node declares (its "
        "parameters' descriptors, its subscriptions, publishers and services): do not edit by hand. Each node is built "
        f"with its own defaults on the bundled robot `{DEFAULT_ROBOT}`, whose feet ({', '.join(config.feet)}) are "
        f"written `<foot>` and whose limbs ({limbs}) `<limb>`; the robot's own values are set by its `robot.yaml` "
        "([robot-description.md](robot-description.md#robotyaml)). Topic names are relative to the node's namespace "
        "unless they start with `/`. rclpy's own parameters "
        f"({', '.join(f'`{name}`' for name in rclpy_parameters)}), services and topics are left out. What the nodes "
        "do with them: [nodes.md](nodes.md); the topic graph: [topics.md](topics.md).")
    lines = ["# Node parameters and topics", "", textwrap.fill(introduction, 116, break_on_hyphens=False), "",
             "## Every node", "", "Declared by each node (and `executor`, `realtime_priority`, `cpu_affinity` and "
             "`lock_memory` by each executable, on the first node of its process):", ""]
    lines += _table(("parameter", "type", "default", "read-only", "description"), [
        (f"`{row.name}`", row.type, row.default, ("yes" if row.read_only else "no") + (
            f" (no in {', '.join(common[row.name])})" if common[row.name] else ""), row.description)
        for row in built[0].parameters if row.name in common])
    for node in built:
        kind = "lifecycle node, configured and activated at start-up (`autostart`)" if node.lifecycle else "node"
        lines += ["", f"## {node.name}", "", f"A {kind}; its own parameters:", ""]
        lines += _table(("parameter", "type", "default", "read-only", "description"), [
            (f"`{row.name}`", row.type, row.default, "yes" if row.read_only else "no", row.description)
            for row in node.parameters if row.name not in common])
        lines += ["", "Topics and services:", ""]
        lines += _table(("name", "type", "", "QoS", "only with"), [
            (f"`{row.name}`", row.type, row.kind, row.qos, f"`{row.when}`" if row.when else "")
            for row in node.topics])
    return "\n".join(lines) + "\n"


def write_reference(output, domain_id=None):
    """Build every node and write the reference to ``output`` (a path)."""
    built, config, rclpy_parameters = references(domain_id)
    Path(output).write_text(markdown(built, config, rclpy_parameters))
