"""A node's console entry point: build it (or several, composed in one process), spin it on its executor until
Ctrl-C or shutdown, and turn what a user got wrong into one line and exit code 1."""
import gc
import sys

import rclpy
import rclpy.executors
from rclpy.exceptions import NameValidationException, ParameterException
from rclpy.executors import ExternalShutdownException
from rclpy.experimental import EventsExecutor
from rclpy.lifecycle import TransitionCallbackReturn

from humanoid_balance.model.errors import ModelError
from humanoid_balance.nodes import shutdown_requested
from humanoid_balance.nodes.composition import Composition
from humanoid_balance.nodes.parameters import describe
from humanoid_balance.nodes.realtime import PARAMETERS as SCHEDULING_PARAMETERS, claim

__all__ = ["EXECUTORS", "USER_MISTAKES", "autostarted", "declare_process_parameters", "claim_real_time", "run"]

EXECUTORS = {"events": EventsExecutor, "single_threaded": rclpy.executors.SingleThreadedExecutor}
"""The ``executor`` parameter: rclpy's EventsExecutor (its C++ event queue takes and dispatches a message for a
fraction of the SingleThreadedExecutor's cost, which rebuilds a wait set per message), or the classic one."""


def autostarted(lifecycle_node_class):
    """A factory that builds the lifecycle node and, if its ``autostart`` parameter is true, configures and
    activates it (as a lifecycle manager would); keyword arguments go to the node (its ``hub``, rclpy node options).

    Raises:
        ModelError: the configuration was refused (the node's ``configuration_error`` says why).
    """
    def build(**node_options):
        node = lifecycle_node_class(**node_options)
        if node.get_parameter("autostart").value:
            if node.trigger_configure() != TransitionCallbackReturn.SUCCESS:
                raise ModelError(f"configuration refused: {node.configuration_error or 'the transition failed'}")
            node.trigger_activate()
        return node
    return build


def declare_process_parameters(node):
    """Declare on ``node``, the first of its process, the process's parameters: ``executor`` (:data:`EXECUTORS`) and
    its scheduling (nodes.realtime.PARAMETERS); (the executor's kind, scheduling parameter → value).

    Raises:
        ValueError: naming the parameter, when the executor is none of EXECUTORS.
    """
    kind = node.declare_parameter("executor", "events",
                                  describe(f"rclpy executor: {' | '.join(EXECUTORS)}", True)).value
    if kind not in EXECUTORS:
        raise ValueError(f"parameter 'executor': '{kind}' is not one of {', '.join(EXECUTORS)}")
    return kind, {name: node.declare_parameter(name, default, describe(text, True)).value
                  for name, (default, text) in SCHEDULING_PARAMETERS.items()}


def claim_real_time(nodes, values):
    """Ask the operating system for the scheduling the parameters' ``values`` give (nodes.realtime.claim), log what it
    granted (a warning when it refused some) and hand it to every node of the process for its /diagnostics
    (``scheduling``); the Scheduling.

    Raises:
        ValueError: naming the parameter, when its value is none of its kind.
    """
    scheduling = claim(values["realtime_priority"], values["cpu_affinity"], values["lock_memory"])
    logger = nodes[0].get_logger()
    (logger.warning if scheduling.refused else logger.info)(f"scheduling: {scheduling.describe()}")
    for node in nodes:
        node.scheduling = scheduling
    return scheduling


USER_MISTAKES = (ModelError, ValueError, OSError, ParameterException, NameValidationException)
"""What a robot file, a parameter or a remap that a node cannot use raises while the node is built."""


def run(node_factories, name, args=None):
    """Console entry point: build the node (or, given a list of factories, the nodes, composed in one process on one
    executor, their stages run as one loop: :mod:`humanoid_balance.nodes.composition`) and spin until
    Ctrl-C or shutdown; exit 0.

    The executor is the first node's ``executor`` parameter (:data:`EXECUTORS`). A robot model, file or parameter
    the node cannot use (:data:`USER_MISTAKES` while building it) ends it with a one-line error naming the problem
    and exit code 1, not a traceback. Shutdown at any point of start-up (a signal noted by the entry point before
    ``rclpy.init``; after it, rclpy's handler invalidates the context, so whatever the node was creating fails)
    ends it with exit code 0. A message that rclpy fails to take or convert (RuntimeError out of the executor) does
    not kill the node: it is logged at a limited rate and counted as ``undecodable`` in the rejected inputs.
    """
    factories = node_factories if isinstance(node_factories, (list, tuple)) else [node_factories]
    nodes, executor = [], None
    try:
        rclpy.init(args=args)
        if shutdown_requested():  # a signal arrived before rclpy's handler was installed
            return 0
        hub = Composition() if len(factories) > 1 else None
        try:
            for factory in factories:  # composed: each node is handed the hub
                nodes.append(factory() if hub is None else factory(hub=hub))
            kind, scheduling = declare_process_parameters(nodes[0])
            claim_real_time(nodes, scheduling)  # before the executor, whose threads inherit it
        except USER_MISTAKES as error:
            if not rclpy.ok():
                return 0
            print(f"{name}: error: {error}", file=sys.stderr)
            return 1
        if not rclpy.ok():
            return 0
        gc.freeze()  # what start-up built (models, data, messages) stays out of every garbage collection
        executor = EXECUTORS[kind]()
        for node in nodes:
            executor.add_node(node)
        while rclpy.ok():
            try:
                executor.spin_once(timeout_sec=0.5)  # (the EventsExecutor's own spin() busy-waits in this rclpy)
            except RuntimeError as error:
                if not rclpy.ok():
                    break
                for node in nodes:
                    node.guard.rejected["undecodable"] += 1
                nodes[0].guard.log.error("undecodable", f"a message could not be taken or converted: {error}")
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok():
            raise  # a defect, not a shutdown: keep its traceback
    finally:
        if executor is not None:  # stopped (the EventsExecutor's timers thread too) before the nodes it holds
            executor.shutdown()   # go: entities destroyed under it can crash the process (rclpy#1644)
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
