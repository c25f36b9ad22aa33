"""What the launch files share, each written once: the suite's launch arguments (:data:`ARGUMENTS`, declared by
:func:`declare`), the suite's nodes wired from them (:func:`suite_parameters_of` and :func:`suite_nodes`), a node the
suite cannot run without (:func:`required`) and the parameter file a launch writes for its nodes.

balance.launch.py declares every argument of :data:`ARGUMENTS`; sim.launch.py declares those the embedded plant
leaves open and settles the others itself (its topics are the plant's, its clock the plant's /clock), so that no
argument is declared twice or declared and then overridden. ``launch`` is imported by the functions, not the
module: it exists where ``ros2 launch`` does, and the package imports without it.
"""
import os
import tempfile
from typing import NamedTuple

from humanoid_balance.control.balancer import MODES
from humanoid_balance.deployment import BALANCE_NODES, PLANT, mode_parameters, suite_parameters, write_parameter_file
from humanoid_balance.estimation.contact_state import CONTACT_MODES
from humanoid_balance.mapping import COMMAND_FIELDS, IMPEDANCE_FIELDS
from humanoid_balance.model.robot_config import load_robot_config
from humanoid_balance.resources import robot_config_file

__all__ = ["ARGUMENTS", "declare", "suite_parameters_of", "suite_nodes", "required", "parameter_file",
           "package_installed"]

BOOLEAN = ("true", "false")
CTRL_C_GRACE = 1.0  # [s] a node's zero exit waits this long for the launch's own SIGINT (required)


class Argument(NamedTuple):
    """A launch argument: its default, what it is, the values it takes (None: any)."""

    default: str
    description: str
    choices: tuple = None


ARGUMENTS = {  # the suite's launch arguments, in the order --show-args lists them
    "robot": Argument("kangaroo_like", "a folder written by `humanoid-balance init` (or its robot.yaml), or a "
                                       "bundled robot's name"),
    "joint_states_topic": Argument("/joint_states", "joint_state_broadcaster output (actuated + measured passive "
                                                    "joints)"),
    "imu_topic": Argument("/imu_sensor_broadcaster/imu", "imu_sensor_broadcaster output"),
    "contact_mode": Argument("ft_sensors", "contact_estimator mode: ft_sensors (the feet's force-torque sensors) | "
                                           "actuator_forces", CONTACT_MODES),
    "left_wrench_topic": Argument("/left_foot_ft_broadcaster/wrench",
                                  "force_torque_sensor_broadcaster output of the left foot (the robot's first)"),
    "right_wrench_topic": Argument("/right_foot_ft_broadcaster/wrench",
                                   "force_torque_sensor_broadcaster output of the right foot (the robot's second)"),
    "balance_mode": Argument("kinematic", "centroidal_balancer mode: kinematic | momentum (on the actuators' joint "
                                          "impedance) | viip", MODES),
    "commands_topic": Argument("/forward_command_controller/commands",
                               "forward_command_controller input (Float64MultiArray, `actuated` order)"),
    "command_interface": Argument("auto", "what actuator_commands carries: auto (impedance in momentum mode, else "
                                          "position) | position | velocity | effort | impedance",
                                  ("auto", *COMMAND_FIELDS)),
    "per_interface_topics": Argument("false", "also one Float64MultiArray per command field on "
                                              "<field>_commands_topic (one forward_command_controller each)", BOOLEAN),
    **{f"{field}_commands_topic": Argument(f"/{field}_controller/commands", f"per_interface_topics: the {field} "
                                           "command's forward_command_controller input") for field in IMPEDANCE_FIELDS},
    "use_sim_time": Argument("false", "every node on /clock", BOOLEAN),
    "composed": Argument("false", "the four nodes in one process (balance_stack) instead of four", BOOLEAN),
    "realtime_priority": Argument("0", "SCHED_FIFO priority of every node's process, 1-99 (0: the default scheduler; "
                                       "needs rtprio in /etc/security/limits.conf or CAP_SYS_NICE)"),
    "cpu_affinity": Argument("", "CPUs every node's process runs on, e.g. 2,3 (empty: any)"),
    "lock_memory": Argument("false", "lock every node's process's memory (mlockall; needs memlock in "
                                     "/etc/security/limits.conf or CAP_IPC_LOCK)", BOOLEAN),
}
PARAMETERS = {  # launch argument → (node, parameter) it sets, on top of config/<node>.yaml and the robot's
    "contact_mode": ("contact_estimator", "mode"),
    "per_interface_topics": ("loop_closure_mapper", "per_interface_topics"),
}


def scheduling_parameters(values):
    """parameter → value of the scheduling arguments (nodes.realtime.PARAMETERS: each sets the parameter of its name
    on every node, which the first node of its process reads) from their ``values`` (texts and booleans); ValueError
    naming the argument whose text is none of its kind."""
    try:
        priority = int(values["realtime_priority"])
    except ValueError:
        raise ValueError(f"launch argument realtime_priority: '{values['realtime_priority']}' is not an integer") \
            from None
    text = values["cpu_affinity"].strip()
    try:
        cpus = [int(cpu) for cpu in text.split(",")] if text else [-1]
    except ValueError:
        raise ValueError(f"launch argument cpu_affinity: '{text}' is not a comma-separated list of CPU numbers") \
            from None
    return {"realtime_priority": priority, "cpu_affinity": cpus, "lock_memory": values["lock_memory"]}


def declare(names, **defaults):
    """The DeclareLaunchArgument of each argument of ``names`` (:data:`ARGUMENTS`), ``defaults`` overriding the
    launch file's own."""
    from launch.actions import DeclareLaunchArgument

    return [DeclareLaunchArgument(name, default_value=defaults.get(name, ARGUMENTS[name].default),
                                  description=ARGUMENTS[name].description,
                                  **({"choices": list(ARGUMENTS[name].choices)} if ARGUMENTS[name].choices else {}))
            for name in names]


def topics(node, feet):
    """(the node's topic, the launch argument naming the topic it is remapped to) of ``node``; ``feet``: the
    robot's feet, left then right (the contact estimator reads <foot>/wrench)."""
    return {"state_estimator": (("joint_states", "joint_states_topic"), ("imu", "imu_topic")),
            "contact_estimator": ((f"{feet[0]}/wrench", "left_wrench_topic"),
                                  (f"{feet[1]}/wrench", "right_wrench_topic"), ("imu", "imu_topic")),
            "centroidal_balancer": (),
            "loop_closure_mapper": (("actuator_commands", "commands_topic"),
                                    *((f"actuator_commands/{field}", f"{field}_commands_topic")
                                      for field in IMPEDANCE_FIELDS))}[node]


def argument_values(context, settled):
    """argument → value (booleans as bool) of every argument of :data:`ARGUMENTS`: its launch configuration, or,
    for one the launch file does not declare, ``settled``'s."""
    from launch.substitutions import LaunchConfiguration

    values = {}
    for name, argument in ARGUMENTS.items():
        text = settled[name] if name in settled else LaunchConfiguration(name).perform(context)
        values[name] = text == "true" if argument.choices == BOOLEAN else text
    return values


def suite_parameters_of(context, settled=None, layers=None):
    """(argument → value, node → the parameters it starts with) of the suite and of the other nodes of ``layers``:
    config/<node>.yaml, the robot's configuration (the ``robot`` argument: a folder of humanoid-balance init, its
    robot.yaml, or a bundled robot), the balance mode's profile (with the ``command_interface`` the argument names,
    unless auto: the plant's too), ``layers`` (node → parameters; sim.launch.py: the plant's wiring), then the
    arguments, later ones winning (humanoid_balance.deployment). ``settled``: argument → value of the arguments the
    launch file does not declare, None for a topic the node keeps (not remapped)."""
    values = argument_values(context, settled or {})
    profile = mode_parameters(values["balance_mode"])
    if values["command_interface"] != "auto":
        for node in ("loop_closure_mapper", PLANT):
            profile[node]["command_interface"] = values["command_interface"]
    layers = layers or {}
    overrides = {node: {**profile.get(node, {}), **layers.get(node, {})} for node in (*BALANCE_NODES, *layers)}
    for node in BALANCE_NODES:
        overrides[node]["use_sim_time"] = values["use_sim_time"]
    for name, (node, parameter) in PARAMETERS.items():
        overrides[node][parameter] = values[name]
    scheduling = scheduling_parameters(values)
    for node in BALANCE_NODES:
        overrides[node].update(scheduling)
    return values, suite_parameters(robot_config_file(values["robot"]), overrides)


def remaps(values, nodes, feet):
    """The remaps of ``nodes``' topics the arguments' ``values`` give (each once: two nodes read imu)."""
    return list(dict.fromkeys((topic, values[name]) for node in nodes for topic, name in topics(node, feet)
                              if values[name] is not None))


def suite_nodes(values, parameters):
    """The actions that start the four nodes with their ``parameters`` (node → parameters, the others' ignored)
    and the arguments' ``values`` (:func:`suite_parameters_of`): each a process, or, ``composed``, balance_stack
    running them in one; each required (:func:`required`). Their parameters are one file, each node's in its own
    section (the process's parameter files reach every node it runs)."""
    from launch_ros.actions import Node

    suite = {node: parameters[node] for node in BALANCE_NODES}
    path, cleanup = parameter_file(suite, "balance_launch")
    feet = load_robot_config(robot_config_file(values["robot"])).feet
    if values["composed"]:
        processes = [Node(package="humanoid_balance", executable="balance_stack", output="screen",
                          parameters=[path], remappings=remaps(values, suite, feet))]
    else:
        processes = [Node(package="humanoid_balance", executable=node, name=node, output="screen",
                          parameters=[path], remappings=remaps(values, [node], feet)) for node in suite]
    return [cleanup, *(action for process in processes for action in required(process))]


def required(node):
    """``node`` and the handler that ends the launch when it exits while the launch runs, whatever its exit code,
    with a line naming it: with an error (what it printed says why) the launch exits non-zero; with 0 (stopped by
    someone else: SIGINT to it alone, say) the launch shuts the others down and exits 0. A node the launch shuts
    down itself exits 0 and ends nothing more; so does one that a Ctrl-C, which reaches the launch and the nodes at
    once, ends before the launch has seen its own SIGINT: a zero exit is acted on CTRL_C_GRACE later, if the launch
    is not shutting down by then."""
    from launch.actions import LogInfo, OpaqueFunction, RegisterEventHandler, Shutdown, TimerAction
    from launch.event_handlers import OnProcessExit

    def stop_the_launch(event, context):
        if context.is_shutdown:
            return None
        if event.returncode != 0:
            raise RuntimeError(f"{event.action.name} exited with code {event.returncode} (its reason is printed "
                               "above): the suite cannot run without it, so the launch stops")
        reason = f"{event.action.name} exited with code 0 while the launch ran: the suite cannot run without it"

        def unless_shutting_down(context):
            return None if context.is_shutdown else [LogInfo(msg=f"{reason}, so the launch stops"),
                                                     Shutdown(reason=reason)]

        return [TimerAction(period=CTRL_C_GRACE, actions=[OpaqueFunction(function=unless_shutting_down)])]

    return [node, RegisterEventHandler(OnProcessExit(target_action=node, on_exit=stop_the_launch))]


def package_installed(package):
    """Whether the ROS 2 ``package`` is in the ament index (an optional node the launch starts where it is)."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        get_package_prefix(package)
    except PackageNotFoundError:
        return False
    return True


def parameter_file(parameters, name):
    """Write ``parameters`` (node → {parameter: value}) to a temporary parameter file named after ``name``,
    removed when the launch shuts down; (its path, the action that removes it)."""
    from launch.actions import RegisterEventHandler
    from launch.event_handlers import OnShutdown

    handle, path = tempfile.mkstemp(prefix=f"{name}_", suffix=".yaml")
    os.close(handle)
    write_parameter_file(parameters, path)

    def remove(event, context):
        if os.path.exists(path):
            os.remove(path)

    return path, RegisterEventHandler(OnShutdown(on_shutdown=remove))
