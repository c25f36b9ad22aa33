"""balance_stack: the four nodes of the suite in one process, on one executor — the Python counterpart of a
component container, for machines with few cores, where every message between processes costs a wake-up.

    state_estimator ─> centroidal_balancer ─> loop_closure_mapper ─> (actuator_commands out) ─> contact_estimator

Topics, parameters and remaps are the nodes' own: the process's --ros-args apply to every node, so parameter files
name their node (``/**/state_estimator:`` and so on, as the files of config/ do) and a remap that must reach only
one node is scoped with its name (``-r state_estimator:joint_states:=/robot/joint_states``).
"""
from humanoid_balance.nodes import node_factory
from humanoid_balance.nodes.entry import run

BUILD_ORDER = ("state_estimator", "centroidal_balancer", "loop_closure_mapper", "contact_estimator")
"""nodes.BALANCE_NODES in the order they are built, which is the order a tick runs in (nodes/intra_process.py): the
command's path first, the contact estimate after the command is out. The balancer takes the ZMP and the contact
phases of the tick before, as it does when the nodes run in their own processes; they are low-passed at a few hertz,
so a tick's age (2 ms at 500 Hz) is nothing to them, while the command leaves the contact estimate's time (a sixth
of a tick's CPU) sooner."""
STACK = tuple(node_factory(name) for name in BUILD_ORDER)


def main(args=None):
    return run(list(STACK), "balance_stack", args)
