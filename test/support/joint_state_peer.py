"""A minimal rclpy program for the middleware test: ``talker`` publishes one known JointState on
``joint_states`` until stopped; ``listener`` prints the first JointState it receives as JSON and exits.
"""
import json
import sys

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from sensor_msgs.msg import JointState

NAMES = ["left_knee", "left_hip_pitch", "right_knee"]
POSITIONS = [0.3, -0.25, 0.31]
VELOCITIES = [0.0, 0.1, -0.2]
EFFORTS = [12.5, -3.0, 11.0]


def talker(node):
    publisher = node.create_publisher(JointState, "joint_states", 10)

    def publish():
        message = JointState(name=NAMES, position=POSITIONS, velocity=VELOCITIES, effort=EFFORTS)
        message.header.stamp = node.get_clock().now().to_msg()
        try:
            publisher.publish(message)
        except Exception:  # the stop signal shut the context down between this tick and spin's return: the end
            if node.context.ok():
                raise

    node.create_timer(0.05, publish)
    rclpy.spin(node)


def listener(node):
    received = []
    node.create_subscription(JointState, "joint_states", received.append, 10)
    while rclpy.ok() and not received:
        rclpy.spin_once(node, timeout_sec=0.1)
    message = received[0]
    print(json.dumps({"name": list(message.name), "position": list(message.position),
                      "velocity": list(message.velocity), "effort": list(message.effort)}), flush=True)


def main():
    role = sys.argv[1]
    rclpy.init(args=sys.argv)
    node = Node(f"joint_state_{role}")
    try:
        {"talker": talker, "listener": listener}[role](node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
