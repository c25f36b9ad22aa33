"""balance_stack: the four nodes of the suite in one process, on one executor — the Python counterpart of a
component container, for machines with few cores, where every message between processes costs a wake-up.

    joint_states, imu ─> one BalanceLoop cycle: state_estimator → contact_estimator → centroidal_balancer →
                         loop_closure_mapper ─> actuator_commands (and each node's other topics)

Each joint_states runs the four stages once, in the loop's order, handing what they tell each other on as data
(nodes/composition.py). Topics, parameters and remaps are the nodes' own: the process's --ros-args apply to every
node, so parameter files name their node (``/**/state_estimator:`` and so on, as the files of config/ do) and a remap
that must reach only one node is scoped with its name (``-r state_estimator:joint_states:=/robot/joint_states``).
"""
from humanoid_balance.nodes import node_factory
from humanoid_balance.nodes.composition import BUILD_ORDER
from humanoid_balance.nodes.entry import run

STACK = tuple(node_factory(name) for name in BUILD_ORDER)


def main(args=None):
    return run(list(STACK), "balance_stack", args)
