"""A node that sends every sensor_msgs/JointState of ``ping`` back on ``pong``, as fast as rclpy can, with the control
chain's QoS: the other end of the ping-pong that measures rclpy's own floor, and, remapped, a link of the ring that
stands for the node chain (``python -m humanoid_balance.bench.echo [--ros-args -r ping:=… -r pong:=…]``)."""
from rclpy.node import Node
from sensor_msgs.msg import JointState

from humanoid_balance.nodes.entry import run
from humanoid_balance.nodes.input_guard import InputGuard
from humanoid_balance.nodes.qos import LATEST_QOS, RELIABLE_QOS


class EchoNode(Node):
    def __init__(self, **node_options):
        super().__init__("dds_echo", **node_options)
        self.guard = InputGuard(self)
        publisher = self.create_publisher(JointState, "pong", RELIABLE_QOS)
        self.create_subscription(JointState, "ping", publisher.publish, LATEST_QOS)


if __name__ == "__main__":
    raise SystemExit(run(EchoNode, "dds_echo"))
