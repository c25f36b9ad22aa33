"""Fuzz on the running chain (issue 20), node by node: thousands of bad messages, mixed, on every topic the node
subscribes to (found in the DDS graph, so a new input cannot be missed), alongside the chain's own valid stream —
malformed ones, and well-formed ones that cannot be (issue 54): a base 1 m away or turned by 1 rad since the tick
before, a joint 1 rad or 1 m away, a ZMP 1 m ahead of the feet, a foot pushing with 20 times the robot's weight.
The node stays alive, counts every kind of rejection, keeps answering the plant's ticks from the valid stream (a
rejected stamp is never adopted), every output of the suite stays finite and within the URDF's and the actuators'
limits, and afterwards the commands and the robot are where they were. The plant runs in lockstep here, so that
what is judged is how bad messages are handled, whatever else loads the machine.
"""
import random
import time

import numpy as np
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy

from support import fuzz_messages
from support.chain_watch import (ALL_EVENTS, INFRASTRUCTURE, MAIN_OUTPUT, RATE, SETTLE, assert_standing_as_before,
                                 running_chain)
from humanoid_balance.bench.dds_loop import PLANT, SUITE
from humanoid_balance.model.robot_config import load_robot_config
from humanoid_balance.recording.recorder import message_class
from humanoid_balance.resources import DEFAULT_ROBOT, robot_config_file

pytestmark = pytest.mark.dds
FUZZ_MESSAGES = 3000    # per node
FUZZ_BURST = 1          # messages per 2 ms tick: 500 Hz of bad messages, 5 times the plant's rate


@pytest.fixture(scope="module")
def chain():
    yield from running_chain(lockstep=True)


def fuzz_catalogue(chain, node):
    """topic → [(expected rejection reason, message)] for every topic ``node`` subscribes to."""
    config = load_robot_config(robot_config_file(DEFAULT_ROBOT))
    robot, latest = chain.robot_model, chain.watch.latest
    command_upper = robot.position_limits(robot.output_names)[1]
    weight = robot.total_mass * 9.81  # [N]
    makers = {
        "joint_states": lambda: fuzz_messages.joint_states(latest["joint_states"], implausible=True),
        "imu": lambda: fuzz_messages.imu(latest["imu"]),
        "odom": lambda: fuzz_messages.odometry(latest["odom"]),
        "zmp": lambda: fuzz_messages.point(latest["zmp"], implausible=True),
        "balance/com_reference": lambda: fuzz_messages.point(latest["zmp"], stamped=False),
        "estimated_joint_states": lambda: fuzz_messages.joint_states(latest["estimated_joint_states"],
                                                                     implausible=True),
        "balance/joint_command": lambda: fuzz_messages.joint_states(latest["balance/joint_command"],
                                                                    (0, command_upper[0] + 1.0)),
        "actuator_commands": lambda: fuzz_messages.actuator_commands(latest["actuator_commands"]),
        "sim/push": fuzz_messages.push,
    }
    for foot, sole in zip(config.feet, config.soles):
        makers[f"contact/{foot}/state"] = fuzz_messages.contact_state
        makers[f"contact/{foot}/wrench"] = lambda sole=sole: fuzz_messages.sole_wrench(sole, 20 * weight)
        makers[f"balance/{foot}/step"] = lambda: fuzz_messages.pose("odom")
        makers[f"balance/{foot}/lifted"] = lambda: []  # std_msgs/Bool: no value of it is malformed
    for limb in config.busy_limbs:
        makers[f"balance/{limb}/trajectory"] = lambda limb=limb: fuzz_messages.trajectory(config.limb_joints[limb],
                                                                                        0.0)
    catalogue = {}
    for topic, types in chain.node.get_subscriber_names_and_types_by_node(node, "/"):
        if topic in INFRASTRUCTURE:
            continue
        name = topic.lstrip("/")
        assert name in makers, f"{node} subscribes to {topic} ({types[0]}), for which there is no fuzz"
        catalogue[name] = (message_class(types[0]), makers[name]())
    return catalogue


@pytest.mark.parametrize("node", [*SUITE, PLANT])
def test_fuzz_is_rejected_counted_and_leaves_the_chain_as_it_was(chain, node):
    main = MAIN_OUTPUT[node]
    before = chain.watch.baseline()
    rejected_before = chain.status[node].rejected()
    catalogue = fuzz_catalogue(chain, node)
    publishers = {topic: chain.node.create_publisher(kind, topic, ALL_EVENTS if topic in ("joint_states", "imu")
                                                     else QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
                  for topic, (kind, _) in catalogue.items()}
    plan = [(topic, reason, message) for topic, (_, faults) in catalogue.items() for reason, message in faults]
    rng = random.Random(20)
    sent = []
    clock = chain.node.get_clock()  # the nodes' (the plant's /clock)
    assert chain.spin(5.0, until=lambda: all(publisher.get_subscription_count() for publisher in publishers.values()))
    chain.watch.ignore_own(catalogue)

    def burst():
        for _ in range(FUZZ_BURST):
            if len(sent) == FUZZ_MESSAGES:
                return
            topic, reason, message = rng.choice(plan)
            if hasattr(message, "header") and not reason.startswith("stamp_"):  # current: reaches the content checks
                fuzz_messages.set_stamp(message, clock.now().nanoseconds * 1e-9 + rng.uniform(0.0, 0.5))
            publishers[topic].publish(message)
            sent.append(reason)

    start = clock.now().nanoseconds * 1e-9
    chain.spin(60.0, until=lambda: len(sent) == FUZZ_MESSAGES, on_tick=burst, period=0.002)
    end = clock.now().nanoseconds * 1e-9
    assert len(sent) == FUZZ_MESSAGES
    fuzzed = time.monotonic()
    chain.spin(SETTLE + 1.0, until=lambda: chain.status[node].arrival > fuzzed + 1.0)
    # The valid stream keeps getting through (less of it: bad messages take the place of good ones in the
    # latest-sample queues), never held up by a rejected message: the node's output, by its stamps (simulated
    # time), answers at least a fifth of the plant's ticks and never skips a quarter of a second.
    stamps = [start] + sorted(t for t in chain.watch.stamps[main] if start <= t < end) + [end]
    assert np.diff(stamps).max() < 0.25, f"{node}'s {main} skipped {np.diff(stamps).max():.2f} s while fuzzed"
    answered = (len(stamps) - 2) / ((end - start) * RATE)
    assert answered > 0.2, f"{node}'s {main} answered {answered:.0%} of the plant's ticks while fuzzed"
    counted = {reason: count - rejected_before.get(reason, 0)
               for reason, count in chain.status[node].rejected().items()}
    expected = {reason for _, reason, _ in plan}
    assert expected <= {reason for reason, count in counted.items() if count > 0}, (expected, counted)
    assert sum(counted.values()) >= 0.1 * FUZZ_MESSAGES, counted
    for publisher in publishers.values():
        chain.node.destroy_publisher(publisher)
    chain.spin(SETTLE)
    assert_standing_as_before(chain, before, f"fuzzing {node}")
    assert chain.status[node].level in ("OK", "WARN"), chain.status[node]
