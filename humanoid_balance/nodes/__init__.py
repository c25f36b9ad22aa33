"""Thin rclpy nodes: parameters, topics, one call into the core per callback.

What they share, one concept per module: ``qos`` (the QoS profiles), ``parameters`` (descriptors, the robot
configuration's parameters), ``stamp_policy`` (input stamps, on plain numbers), ``input_guard`` (guarded callbacks,
rejections, the latest inputs), ``diagnostics`` (/diagnostics), ``entry`` (the console entry point and its
executor), ``composition`` (balance_stack: the four nodes' stages as one loop), ``output_topic`` (publishing only to someone), ``messages`` (conversions).

The console scripts enter through the functions here. They import their node's module only once they run, after
taking SIGINT and SIGTERM over, so that Ctrl-C or a SIGTERM at any moment of a node's start-up, its imports
included, ends it with exit code 0, as launch expects of a node it shuts down: a signal during the imports is
noted (an exception raised inside a C extension's import would turn into an ImportError) and acted on once they
are done; from ``rclpy.init`` on, rclpy's own handler shuts the context down and then calls this one; once the
node is ending, further signals are ignored.
"""
import importlib
import signal

__all__ = ["BALANCE_NODES", "PLANT", "REAL_TIME_RATE", "NODES", "node_factory", "shutdown_requested",
           "state_estimator", "contact_estimator", "centroidal_balancer", "loop_closure_mapper", "mujoco_sim",
           "balance_stack"]

BALANCE_NODES = ("state_estimator", "contact_estimator", "centroidal_balancer", "loop_closure_mapper")
"""The suite's nodes on a robot, in the order a joint state flows through them — the one list the launch files,
the demo, the bench and the tests read."""
PLANT = "mujoco_sim"
"""The embedded simulator standing in for the robot."""
REAL_TIME_RATE = 100.0
"""The control rate [Hz] of PLANT running free against the wall clock (sim.launch.py ``real_time:=true``, the demo's
--real-time; in lockstep it steps at its file's 500 Hz of simulated time): what this 2-core development machine
sustains with the four nodes in one process (test_free_running; in four, about 65 commands a second)."""
NODES = (*BALANCE_NODES, PLANT, "balance_stack")
"""The node executables, each a module of this package with ``main(args)`` (balance_stack: the BALANCE_NODES in one
process)."""

SIGNALS = (signal.SIGINT, signal.SIGTERM)
_signals = []


def _note(signal_number, frame):
    _signals.append(signal_number)


def shutdown_requested():
    """Whether SIGINT or SIGTERM has arrived since a node's entry point started."""
    return bool(_signals)


def _entry_point(module):
    """``main(args)`` of ``humanoid_balance.nodes.<module>``, imported when called; exit code 0 on a signal."""
    def main(args=None):
        for signal_number in SIGNALS:
            signal.signal(signal_number, _note)
        try:
            node_module = importlib.import_module(f"{__name__}.{module}")
            return 0 if shutdown_requested() else node_module.main(args)
        finally:  # on the way out, a second signal (launch forwards the terminal's Ctrl-C) must not kill finalisation
            for signal_number in SIGNALS:
                signal.signal(signal_number, signal.SIG_IGN)
    main.__name__ = main.__qualname__ = module
    return main


def node_factory(name):
    """What builds node ``name`` (one of BALANCE_NODES or PLANT): its module's FACTORY, a node class or, for a
    lifecycle node, one that configures and activates it as its ``autostart`` parameter says."""
    return importlib.import_module(f"{__name__}.{name}").FACTORY


state_estimator = _entry_point("state_estimator")
contact_estimator = _entry_point("contact_estimator")
centroidal_balancer = _entry_point("centroidal_balancer")
loop_closure_mapper = _entry_point("loop_closure_mapper")
mujoco_sim = _entry_point("mujoco_sim")
balance_stack = _entry_point("balance_stack")
