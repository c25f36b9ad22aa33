"""Records every topic of the ROS graph into a :class:`Bag`, polled rather than spun.

Each topic is found with the graph's ``get_topic_names_and_types`` (at start, then every ``discovery_period`` of
wall time) and subscribed with ``raw=True``: the CDR bytes the publisher sent are written as they are, with no
Python conversion. The subscription takes the QoS its publishers offer (reliable unless one is best effort,
transient local if all are, so a latched ``robot_description`` is received), and that offered QoS goes into the
recording's metadata.

The recorder's node is never added to an executor: the owner calls :meth:`GraphRecorder.poll` from its loop, which
takes what arrived (the readers keep up to ``DEPTH`` messages each in between). An rclpy callback costs far more
than the message's copy, and with its subscriptions in the executor a recording would slow a lockstep simulation
by a third. A message is logged at its arrival: on the simulated time with ``use_sim_time`` (the latest /clock
that had arrived before it, both arrival times taken by the middleware), else on the system clock.
"""
import bisect
import importlib
import time
from collections import defaultdict

from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from rosgraph_msgs.msg import Clock

__all__ = ["GraphRecorder", "message_class", "DEPTH", "LATCHED_QOS"]

DEPTH = 100           # messages a reader holds between two polls (0.2 s of a 500 Hz topic)
CLOCK_TOPIC = "/clock"
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
"""What a latched topic offers (robot_description, /tf_static): a subscriber that joins later still gets it."""


def message_class(msgtype):
    """The rclpy message class of ``pkg/msg/Name``."""
    package, _, name = msgtype.split("/")
    return getattr(importlib.import_module(f"{package}.msg"), name)


def subscription_qos(offered):
    """The QoS that receives from every one of the ``offered`` publisher QoS profiles."""
    reliable = all(p.reliability == ReliabilityPolicy.RELIABLE for p in offered)
    latched = all(p.durability == DurabilityPolicy.TRANSIENT_LOCAL for p in offered)
    return QoSProfile(depth=DEPTH,
                      reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)


class GraphRecorder:
    """Records every published topic of the graph into ``bag`` when polled.

    Args:
        bag: the :class:`Bag` to write to; the caller closes it.
        use_sim_time: log messages on the simulated time of /clock (0 before the first) instead of the system clock.
        poll_period: :meth:`poll` takes messages at most this often [s of wall time] (each poll tries every
            reader: polling too often costs more in empty takes than the messages themselves).
        discovery_period: how often :meth:`poll` looks at the graph again for new topics [s of wall time].
        context: the rclpy context of the recorder's node (default: the global one).
    """

    def __init__(self, bag, use_sim_time=False, poll_period=0.05, discovery_period=1.0, context=None):
        self.node = Node("recorder", context=context, start_parameter_services=False, enable_rosout=False,
                         parameter_overrides=[Parameter("start_type_description_service", value=False)])
        self.bag, self.use_sim_time = bag, use_sim_time
        self.poll_period, self.discovery_period = poll_period, discovery_period
        self.next_poll = self.next_discovery = 0.0   # [s], monotonic
        self.clock = ([], [])                        # /clock: arrivals [ns, system clock], simulated times [ns]
        self.unrecordable = {}                       # topic → type whose definition is unknown
        self.listeners = defaultdict(list)           # topic → callables(data, stamp [ns]) fed what is recorded
        self.readers = {}                            # topic → raw subscription
        self.discover()

    def discover(self):
        """Subscribe to the graph's published topics not recorded yet (recorded ones are not looked at again)."""
        for topic, types in self.node.get_topic_names_and_types():
            if topic in self.bag.connections or topic in self.unrecordable:
                continue  # recorded already, by this recorder or by another writer of the bag
            publishers = self.node.get_publishers_info_by_topic(topic)
            if not publishers:
                continue
            msgtype, offered = types[0], [p.qos_profile for p in publishers]
            if not self.bag.add_topic(topic, msgtype, offered, str(publishers[0].topic_type_hash)):
                self.unrecordable[topic] = msgtype
                self.node.get_logger().warning(f"{topic}: {msgtype} has no known definition; not recorded")
                continue
            self.readers[topic] = self.node.create_subscription(
                message_class(msgtype), topic, lambda data: None, subscription_qos(offered), raw=True,
                event_callbacks=SubscriptionEventCallbacks(use_default_callbacks=False))

    def poll(self, force=False):
        """Record what arrived since the last poll (at most every ``poll_period``, unless ``force``)."""
        now = time.monotonic()
        if now < self.next_poll and not force:
            return
        self.next_poll = now + self.poll_period
        for times in self.clock:
            del times[:-1]  # what arrives from now on arrived after the latest /clock taken
        if now >= self.next_discovery:
            self.next_discovery = now + self.discovery_period
            self.discover()
        clock_reader = self.readers.get(CLOCK_TOPIC) if self.use_sim_time else None
        if clock_reader is not None:
            self.take(CLOCK_TOPIC, clock_reader)
        for topic, reader in self.readers.items():
            if reader is not clock_reader:
                self.take(topic, reader)

    def take(self, topic, reader):
        """Record every message waiting in ``reader`` (taken through its handle, as rclpy's executors take them)."""
        while (taken := reader.handle.take_message(reader.msg_type, True)) is not None:
            data, info = taken
            stamp = self.stamp(info["received_timestamp"])
            if topic == CLOCK_TOPIC and self.use_sim_time:
                simulated = deserialize_message(data, Clock).clock
                self.clock[0].append(info["received_timestamp"])
                self.clock[1].append(stamp := simulated.sec * 1_000_000_000 + simulated.nanosec)
            self.bag.write(topic, stamp, data)
            for listener in self.listeners[topic]:
                listener(data, stamp)

    def stamp(self, received):
        """The log time [ns] of a message that arrived at ``received`` [ns, system clock]."""
        if not self.use_sim_time:
            return received
        arrivals, simulated = self.clock
        index = bisect.bisect_right(arrivals, received)
        return simulated[index - 1] if index else 0

    def listen(self, topic, callback):
        """Also call ``callback(data, stamp)`` with each recorded message of ``topic`` (CDR bytes, [ns])."""
        self.listeners[topic].append(callback)

    def missed(self):
        """The graph's published topics that are not in the recording (after one more look at the graph)."""
        self.discover()
        return sorted(topic for topic, _ in self.node.get_topic_names_and_types()
                      if topic not in self.bag.connections and self.node.get_publishers_info_by_topic(topic))

    def close(self):
        """Record what is left, close the bag, destroy the node; returns the topics of the graph missed."""
        self.poll(force=True)
        missed = self.missed()
        self.bag.close()
        self.node.destroy_node()
        return missed
