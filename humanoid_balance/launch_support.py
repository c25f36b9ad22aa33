"""What the launch files share: a node the suite cannot run without, and the parameter file a launch writes for
its nodes. ``launch`` is imported by the functions, not the module: it exists where ``ros2 launch`` does, and the
package imports without it."""
import os
import tempfile

from humanoid_balance.deployment import write_parameter_file

__all__ = ["required", "parameter_file"]

CTRL_C_GRACE = 1.0  # [s] a node's zero exit waits this long for the launch's own SIGINT (required)


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
