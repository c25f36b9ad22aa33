"""state_estimator over DDS: message-to-message latency and highest sustained rate on kangaroo_like.

The node runs in its own process; this script publishes joint_states at a fixed rate, stamped with the
send time, and times each estimated_joint_states (which carries the input stamp) on arrival.
Target: 1 kHz sustained with p99 latency ≤ 1 ms.

Run: .venv/bin/python benchmarks/bench_state_estimator_dds.py
"""
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import JointState

from humanoid_balance.model import load_robot
from humanoid_balance.resources import robot_files


def measure(node, publisher, names, positions, received, rate_hz, duration=5.0, warmup=1.0):
    period = 1.0 / rate_hz
    message = JointState(name=names, position=positions, velocity=[0.0] * len(names))
    start = time.perf_counter()
    next_send, sent = start, 0
    received.clear()
    while time.perf_counter() - start < warmup + duration:
        now = time.perf_counter()
        if now >= next_send:
            stamp = time.time()
            message.header.stamp.sec, message.header.stamp.nanosec = int(stamp), int((stamp % 1) * 1e9)
            publisher.publish(message)
            sent += 1
            next_send += period
        rclpy.spin_once(node, timeout_sec=max(0.0, min(next_send - time.perf_counter(), period)))
    end = time.time()
    measured = [(arrival, latency) for arrival, latency in received if arrival > end - duration]
    latencies = np.array([latency for _, latency in measured])
    if latencies.size == 0:
        return 0.0, float("nan"), float("nan")
    return len(measured) / duration, np.percentile(latencies, 50) * 1e3, np.percentile(latencies, 99) * 1e3


def main():
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    urdf, loops = robot_files()
    robot = load_robot(urdf, loops)
    executable = shutil.which("state_estimator", path=str(Path(sys.executable).parent))
    process = subprocess.Popen([executable, "--ros-args", "-p", "offsets_file:=/tmp/hb_bench_offsets.yaml",
                                "--log-level", "error"])
    rclpy.init()
    node = Node("state_estimator_bench")
    received = []

    def on_estimate(message):
        stamp = message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
        now = time.time()
        received.append((now, now - stamp))

    publisher = node.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
    node.create_subscription(JointState, "estimated_joint_states", on_estimate,
                             QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
    names = list(robot.actuated_names)
    positions = [float(x) for x in robot.reference_q[robot.actuated_q]]
    try:
        deadline = time.time() + 20
        while not received and time.time() < deadline:
            measure(node, publisher, names, positions, received, 50, duration=0.5, warmup=0.0)
        print(f"state_estimator over DDS (kangaroo_like, {len(robot.joint_names)} joints); "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores\n")
        print(f"{'target rate':>12}{'achieved':>12}{'p50 latency':>14}{'p99 latency':>14}   target")
        for rate in (250, 500, 1000):
            achieved, p50, p99 = measure(node, publisher, names, positions, received, rate)
            print(f"{rate:>9} Hz{achieved:>9.0f} Hz{p50:>11.3f} ms{p99:>11.3f} ms   "
                  f"{'1 kHz sustained, p99 ≤ 1 ms' if rate == 1000 else ''}")
    finally:
        node.destroy_node()
        rclpy.shutdown()
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
