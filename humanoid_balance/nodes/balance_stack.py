"""balance_stack: the four nodes of the suite in one process, on one executor — the Python counterpart of a
component container, for machines with few cores, where every message between processes costs a wake-up.

    state_estimator ─> centroidal_balancer ─> loop_closure_mapper ─> (actuator_commands out) ─> contact_estimator

Topics, parameters and remaps are the nodes' own: the process's --ros-args apply to every node, so parameter files
name their node (``/**/state_estimator:`` and so on, as the files of config/ do) and a remap that must reach only
one node is scoped with its name (``-r state_estimator:joint_states:=/robot/joint_states``).
"""
from humanoid_balance.nodes.centroidal_balancer import CentroidalBalancerNode
from humanoid_balance.nodes.common import autostarted, run
from humanoid_balance.nodes.contact_estimator import ContactEstimatorNode
from humanoid_balance.nodes.loop_closure_mapper import LoopClosureMapperNode
from humanoid_balance.nodes.state_estimator import StateEstimatorNode

STACK = (StateEstimatorNode, autostarted(CentroidalBalancerNode), autostarted(LoopClosureMapperNode),
         ContactEstimatorNode)
"""Build order, which is the order a tick runs in (nodes/intra_process.py): the command's path first, the contact
estimate after the command is out. The balancer takes the ZMP and the contact phases of the tick before, as it does
when the nodes run in their own processes; they are low-passed at a few hertz, so a tick's age (2 ms at 500 Hz) is
nothing to them, while the command leaves the contact estimate's time (a sixth of a tick's CPU) sooner."""


def main(args=None):
    return run(list(STACK), "balance_stack", args)
