"""Messages between the nodes of one process (balance_stack) handed over as objects: rclcpp's intra-process
communication, which rclpy lacks.

A topic that one node of the process publishes reaches the process's other nodes subscribed to it (the same resolved
name, remaps applied) without serialization, DDS or an executor wake-up. The message object itself is queued, the
latest one per subscription (the depth-1 QoS of the chain's inputs). The queue is drained after each executor
callback node by node in the order the nodes were built (the control chain's order), each node's main input (its
InputGuard's ``main_topic``, the one it computes on) after its other inputs. So one joint_states runs the whole chain
in one pass, in balance_stack state_estimator → centroidal_balancer → loop_closure_mapper → contact_estimator (the
command first; the balancer takes the contact estimate of the tick before). A topic goes over DDS as well, for
RViz, a recorder or the plant, while something outside the process subscribes to it. The in-process consumers of a
topic that a node of the process publishes do not hear publishers outside the process on it: remap one side to feed
the stack from outside. A topic from outside (the robot's joint_states, imu) is taken once for the process and handed
to each of its subscribers the same way. The hub is handed to each node it serves (its ``hub``): a node built
without one talks over DDS only.
"""
from collections import defaultdict
from itertools import count

from rclpy.lifecycle import LifecyclePublisher

__all__ = ["IntraProcess", "OutputTopic"]


class OutputTopic:
    """A node's publisher: hands each message to the process's subscribers (``deliver``), and publishes it over DDS
    while something subscribes there; serializing for nobody costs as much as a small core. A lifecycle publisher
    publishes only while its node is active."""

    __slots__ = ("dds", "deliver", "lifecycle", "local_subscribers")

    def __init__(self, dds, deliver=None, local_subscribers=()):
        self.dds = dds
        self.deliver = deliver
        self.lifecycle = isinstance(dds, LifecyclePublisher)
        self.local_subscribers = local_subscribers

    def publish(self, message):
        if self.lifecycle and not self.dds.is_activated:
            return
        if self.deliver is not None:
            self.deliver(message)
        if self.dds.get_subscription_count():
            self.dds.publish(message)

    def get_subscription_count(self):
        return self.dds.get_subscription_count() + len(self.local_subscribers)

    def wanted(self):
        """Whether a message published now would reach anyone: worth building one that only people look at."""
        return (not self.lifecycle or self.dds.is_activated) and (
            bool(self.local_subscribers) or self.dds.get_subscription_count() > 0)


class _LocalSubscription:
    __slots__ = ("node", "key", "callback")

    def __init__(self, node, key, callback):
        self.node, self.key, self.callback = node, key, callback


class _OutsideTopic:
    """One DDS subscription to a topic no node of the process publishes, shared by the process's subscribers that ask
    for the same type and QoS: one take and one conversion per message, whoever needs it (the imu feeds two nodes)."""
    __slots__ = ("topic", "message_type", "qos", "owner", "dds", "subscriptions")

    def __init__(self, topic, message_type, qos, owner, deliver_to):
        self.topic, self.message_type, self.qos, self.owner = topic, message_type, qos, owner
        self.subscriptions = []
        self.dds = owner.create_subscription(message_type, topic, deliver_to(self.subscriptions), qos)


class IntraProcess:
    """The process's in-process topics (see the module)."""

    def __init__(self):
        self._nodes = {}                          # node → its place in build order
        self._serial = count()                    # subscriptions in creation order
        self._subscriptions = defaultdict(list)   # resolved topic → its _LocalSubscriptions
        self._published = set()                   # resolved topics a node of the process publishes
        self._outside = []                        # _OutsideTopic of each DDS subscription of the process
        self._pending = {}                        # _LocalSubscription.key → (callback, latest message)

    def _place(self, node):
        return self._nodes.setdefault(node, len(self._nodes))

    def _delivery(self, subscriptions):
        """A message's hand-over to ``subscriptions`` (a list that may grow): queued for :meth:`drain`."""
        pending = self._pending

        def deliver(message):
            for subscription in subscriptions:
                pending[subscription.key] = (subscription.callback, message)
        return deliver

    def subscribe(self, node, message_type, topic, callback, qos):
        """Subscribe ``callback`` to ``topic`` for ``node``: in-process if a node of the process publishes it, else
        over DDS until one does, through one subscription per type and QoS for the whole process."""
        guard = getattr(node, "guard", None)
        main_input = guard is not None and guard.main_topic == topic
        subscription = _LocalSubscription(node, (self._place(node), main_input, next(self._serial)), callback)
        resolved = node.resolve_topic_name(topic)
        if resolved not in self._published:
            outside = next((entry for entry in self._outside if (entry.topic, entry.message_type, entry.qos)
                            == (resolved, message_type, qos)), None)
            if outside is None:
                outside = _OutsideTopic(resolved, message_type, qos, node, self._delivery)
                self._outside.append(outside)
            outside.subscriptions.append(subscription)
        self._subscriptions[resolved].append(subscription)
        return subscription

    def output(self, node, dds):
        """``dds`` (a publisher of ``node``) as an OutputTopic that also delivers in-process; the DDS subscriptions
        of the process's nodes on its topic are replaced by in-process delivery."""
        self._place(node)
        topic = dds.topic_name
        self._published.add(topic)
        for outside in [entry for entry in self._outside if entry.topic == topic]:
            outside.owner.destroy_subscription(outside.dds)
            self._outside.remove(outside)
        subscriptions = self._subscriptions[topic]  # the list itself: later subscriptions join it
        return OutputTopic(dds, self._delivery(subscriptions), subscriptions)

    def drain(self):
        """Run the queued callbacks, earliest node first and its main input last, until none is left (callbacks
        queue more)."""
        pending = self._pending
        while pending:
            callback, message = pending.pop(min(pending))
            callback(message)
