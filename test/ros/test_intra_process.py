"""balance_stack's in-process topics (nodes/intra_process.py), with real rclpy nodes in one process: a topic one node
publishes reaches the others as the message object itself, without a DDS subscription, latest message only, in the
chain's order (earliest node first, each node's main input last); it goes over DDS too once a reader outside the
process subscribes, and a lifecycle publisher delivers only while active; a topic from outside is taken once for the
process."""
import time

import pytest
import rclpy
from rclpy.lifecycle import LifecycleNode
from rclpy.node import Node
from std_msgs.msg import Float64

from humanoid_balance.nodes.intra_process import IntraProcess
from humanoid_balance.nodes.input_guard import InputGuard, advertise, subscribe
from humanoid_balance.nodes.qos import LATEST_QOS, RELIABLE_QOS
from support.ros_probe import Probe

pytestmark = pytest.mark.dds


class Stage(Node):
    """A node with an InputGuard whose main input is ``main``; it records (node, topic, message) of each call."""

    def __init__(self, name, main, calls, context, hub, inputs=()):
        super().__init__(name, context=context)
        self.hub = hub
        self.guard = InputGuard(self, main)
        for topic in inputs:
            subscribe(self, Float64, topic, lambda message, topic=topic: calls.append((name, topic, message)),
                      LATEST_QOS)


@pytest.fixture
def context():
    context = rclpy.Context()
    rclpy.init(context=context)
    yield context, IntraProcess()  # handed to each node of the test, as balance_stack's entry point does
    rclpy.shutdown(context=context)


def test_topics_between_nodes_of_the_process_are_handed_over_in_chain_order(context):
    context, hub = context
    calls = []
    source = Node("source", context=context)
    source.hub = hub
    state = advertise(source, Float64, "chain/state", RELIABLE_QOS)
    # the consumer is built before the producer of its main input: its DDS subscription is replaced
    consumer = Stage("consumer", "chain/estimate", calls, context, hub, inputs=("chain/estimate", "chain/state"))
    assert len(list(consumer.subscriptions)) == 1  # chain/state is already in-process; chain/estimate over DDS yet
    estimator = Stage("estimator", "chain/state", calls, context, hub, inputs=("chain/state",))
    estimate = advertise(estimator, Float64, "chain/estimate", RELIABLE_QOS)
    assert list(consumer.subscriptions) == [] and list(estimator.subscriptions) == []
    assert source.count_subscribers("chain/state") == 0  # no DDS reader in the process

    first, second = Float64(data=1.0), Float64(data=2.0)
    state.publish(first)
    state.publish(second)  # depth 1: only the latest reaches each subscriber
    estimate.publish(Float64(data=-1.0))
    hub.drain()
    assert [(name, topic) for name, topic, _ in calls] == [
        ("consumer", "chain/state"), ("consumer", "chain/estimate"), ("estimator", "chain/state")]
    assert calls[0][2] is second and calls[2][2] is second  # the object itself, not a copy

    # nodes in build order, a node's main input after its other inputs, whatever the publishing order
    calls.clear()
    estimate.publish(Float64(data=3.0))
    state.publish(Float64(data=4.0))
    hub.drain()
    assert [(name, topic) for name, topic, _ in calls] == [
        ("consumer", "chain/state"), ("consumer", "chain/estimate"), ("estimator", "chain/state")]


def test_an_output_goes_over_dds_once_a_reader_outside_the_process_subscribes(context):
    context, hub = context
    node = Node("producer", context=context)
    node.hub = hub
    output = advertise(node, Float64, "chain/output", RELIABLE_QOS)
    assert not output.wanted()  # nobody to see a display-only message: the nodes do not build it
    probe = Probe("intra_process_probe")
    try:
        received = probe.record(Float64, "chain/output")
        deadline = time.monotonic() + 20.0
        while output.get_subscription_count() == 0 and time.monotonic() < deadline:
            probe.executor.spin_once(timeout_sec=0.05)
        assert output.get_subscription_count() == 1 and output.wanted()
        output.publish(Float64(data=7.5))
        assert probe.spin_until(lambda: len(received) == 1, 10.0)
        assert received[0].data == 7.5
    finally:
        probe.close()


def test_a_lifecycle_publisher_delivers_only_while_active(context):
    context, hub = context
    calls = []
    node = LifecycleNode("managed", context=context)
    node.hub = hub
    output = advertise(node, Float64, "chain/command", RELIABLE_QOS)
    Stage("follower", "chain/command", calls, context, hub, inputs=("chain/command",))
    output.publish(Float64(data=1.0))
    hub.drain()
    assert calls == [] and not output.wanted()
    node.trigger_configure()
    node.trigger_activate()
    assert output.wanted()  # the follower in the process subscribes
    output.publish(Float64(data=2.0))
    hub.drain()
    assert [message.data for _, _, message in calls] == [2.0]


def test_a_topic_from_outside_is_taken_once_for_the_nodes_that_ask_for_it_alike(context):
    context, hub = context
    calls = []
    stages = [Stage("first", "", calls, context, hub, inputs=("outside/imu",)),
              Stage("second", "", calls, context, hub, inputs=("outside/imu",))]
    stages.append(Node("third", context=context))
    stages[2].hub = hub
    stages[2].guard = InputGuard(stages[2])
    subscribe(stages[2], Float64, "outside/imu", lambda message: calls.append(("third", "outside/imu", message)),
              RELIABLE_QOS)  # another QoS: a subscription of its own
    assert [len(list(stage.subscriptions)) for stage in stages] == [1, 0, 1]
    executor = rclpy.executors.SingleThreadedExecutor(context=context)
    for stage in stages:
        executor.add_node(stage)
    probe = Probe("intra_process_outside")
    try:
        publisher = probe.publisher(Float64, "outside/imu", sensor=False)
        deadline = time.monotonic() + 20.0
        while publisher.get_subscription_count() < 2 and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        assert publisher.get_subscription_count() == 2  # two DDS readers in the process, not three
        publisher.publish(Float64(data=9.0))
        deadline = time.monotonic() + 10.0
        while len(calls) < 3 and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
            hub.drain()
        shared = [(name, message) for name, _, message in calls if name != "third"]
        assert [name for name, _ in shared] == ["first", "second"]  # in build order
        assert shared[0][1] is shared[1][1] and shared[0][1].data == 9.0  # one message taken, handed to both
        assert len(calls) == 3 and calls[[name for name, _, _ in calls].index("third")][2].data == 9.0
    finally:
        probe.close()
        executor.shutdown()
    advertise(stages[1], Float64, "outside/imu", RELIABLE_QOS)  # now a node of the process publishes it
    assert [len(list(stage.subscriptions)) for stage in stages] == [0, 0, 0]
