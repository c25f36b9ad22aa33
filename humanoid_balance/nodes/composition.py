"""balance_stack's wiring: the four nodes of the suite in one process run their stages as one
:class:`~humanoid_balance.loop.BalanceLoop`, one :meth:`~humanoid_balance.loop.BalanceLoop.cycle` per joint_states.

    joint_states, imu ─> state_estimator ─> BalanceLoop.cycle: estimation → contacts → balance → mapping
                                         ─> each node publishes its part: odom, estimated_joint_states, zmp,
                                            contact/<foot>/*, balance/*, actuator_commands, ...

A node of the stack does not subscribe to what another node of the stack publishes (:data:`FED`): the cycle hands
it over as data, in the loop's order, within the tick — the contact phases of the tick before to the base estimate,
this tick's ZMP and phases to the balancer, the feet the last command lifted to the contact estimate. Their topics
still go out over DDS, each while something outside the process subscribes to it (RViz, a recorder), and the
visual ones at display_rate. A publisher outside the process on one of those topics is not heard by the stack (run
the nodes separately to feed one from outside). Each node keeps its parameters, services and /diagnostics; the balancer
and the mapper compute only while active (lifecycle). The state estimator's callback timing covers the whole cycle.
The feet's F/T readings (ft_sensors mode) are the contact estimator's own subscriptions, handed to the cycle.
The balancer takes the contact estimator's phases (its ``contact_phases`` parameter chooses between topics, of
which the stack has none).
"""
from humanoid_balance.loop import BalanceLoop
from humanoid_balance.nodes.input_guard import call_guarded

__all__ = ["Composition", "FED", "BUILD_ORDER"]

BUILD_ORDER = ("state_estimator", "contact_estimator", "centroidal_balancer", "loop_closure_mapper")
"""The stack's nodes in the loop's order (nodes.BALANCE_NODES)."""


def _per_foot(topic, prefix, suffix):
    return topic.startswith(prefix) and topic.endswith(suffix)


FED = {  # node → whether one of its inputs is handed over by the cycle instead of subscribed to
    "state_estimator": lambda topic: _per_foot(topic, "contact/", "/state"),
    "contact_estimator": lambda topic: topic in ("estimated_joint_states", "odom", "imu")
    or _per_foot(topic, "balance/", "/lifted"),
    "centroidal_balancer": lambda topic: topic in ("estimated_joint_states", "odom", "zmp")
    or _per_foot(topic, "contact/", "/state") or _per_foot(topic, "contact/", "/wrench"),
    "loop_closure_mapper": lambda topic: topic == "balance/joint_command",
}


class Composition:
    """What the nodes of balance_stack share (each node's ``hub``): which of their inputs the cycle feeds, and the
    cycle itself."""

    def __init__(self):
        self.nodes = {}   # node name → node, as they subscribe
        self.loop = None  # the BalanceLoop of their stages, built at the first cycle

    def feeds(self, node, topic):
        """Whether the cycle hands ``topic`` to ``node`` (no subscription then)."""
        name = node.get_name()
        self.nodes[name] = node
        return FED[name](topic)

    def imu(self, time, sample):
        """The state estimator's imu ``sample`` stamped ``time`` [s]: the contact estimator's too (its accelerometer,
        for its flight detection; the cycle hands each tick's on)."""
        contacts = self.nodes.get("contact_estimator")
        if contacts is not None and sample.specific_force is not None:
            contacts.acceleration.set_stamped(time, sample.specific_force)

    def cycle(self, stamp, observation, timing):
        """One tick of the stack on the state estimator's ``observation`` (a joint_states stamped ``stamp``): the
        BalanceLoop's cycle, then each node's outputs. The balancer and the mapper take part while active."""
        estimator, contacts, balancer, mapper = (self.nodes[name] for name in BUILD_ORDER)
        loop = self.loop
        if loop is None:
            loop = self.loop = BalanceLoop(estimator.core, contacts.core, None, None)
        loop.balance = balancer.stage if _active(balancer) else None
        loop.mapping = mapper.stage if loop.balance is not None and _active(mapper) else None
        lifted = loop.lifted
        cycle = loop.cycle(observation._replace(foot_wrenches=contacts.sensor_wrenches()))
        timing.lap()
        time = observation.time
        estimator.adopt(stamp, cycle.state, observation.effort)
        _guarded(contacts, contacts.adopt, stamp, time, cycle.contact)
        if cycle.command is not None:
            if loop.lifted != lifted:  # what the balancer says of the feet, for the contact estimator's diagnostics
                for foot, up in zip(contacts.feet, cycle.command.lifted or [False] * len(contacts.feet)):
                    contacts.lifted[foot].set(up)
            _guarded(balancer, balancer.adopt, stamp, time, cycle.q, cycle.contact.zmp, cycle.command)
        if cycle.mapped is not None:
            _guarded(mapper, mapper.adopt, stamp, cycle.mapped)
        timing.lap()


def _active(node):
    """Whether a lifecycle node of the stack is configured and active."""
    return getattr(node, "stage", None) is not None and node.command_publisher.active()


def _guarded(node, adopt, *arguments):
    """``adopt(*arguments)`` as a message on the node's main input: rejections and faults counted in its
    diagnostics, the input's age reset."""
    call_guarded(node.guard, node.guard.main_topic, adopt, *arguments)
