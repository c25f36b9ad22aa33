"""What the launch files share: a node the suite cannot run without, and the parameter file a launch writes for
its nodes. ``launch`` is imported by the functions, not the module: it exists where ``ros2 launch`` does, and the
package imports without it."""
import os
import tempfile

from humanoid_balance.deployment import write_parameter_file

__all__ = ["required", "parameter_file"]


def required(node):
    """``node`` and the handler that ends the launch with a non-zero exit when it exits with an error while the
    launch runs: what it printed says why, the launch's line names it (a node shut down by the launch exits 0)."""
    from launch.actions import RegisterEventHandler
    from launch.event_handlers import OnProcessExit

    def stop_the_launch(event, context):
        if event.returncode != 0 and not context.is_shutdown:
            raise RuntimeError(f"{event.action.name} exited with code {event.returncode} (its reason is printed "
                               "above): the suite cannot run without it, so the launch stops")

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
