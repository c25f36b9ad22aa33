"""The stamp policy on plain numbers (nodes/stamp_policy.py), each rule against the case it is written for; the
same policy through a node over DDS: test_fuzz.py and the node tests."""
import pytest

from humanoid_balance.nodes.messages import RejectedMessage
from humanoid_balance.nodes.stamp_policy import ClockJump, StampPolicy

NOW = 100.0  # the node's clock [s]


def accept(policy, topic, seconds, now=NOW):
    """Check and accept a message; the ClockJump it completes, or None."""
    return policy.adopt(policy.check(topic, seconds, now))


def rejected_kind(policy, topic, seconds, now=NOW):
    with pytest.raises(RejectedMessage) as error:
        policy.check(topic, seconds, now)
    return error.value.reason


def test_stamps_in_line_pass_and_a_stamp_going_back_is_rejected():
    policy = StampPolicy(max_lead=1.0, jump_messages=10)
    assert accept(policy, "imu", 99.0) is None
    assert accept(policy, "imu", 99.0) is None       # the same stamp again: not backwards
    assert rejected_kind(policy, "imu", 98.5) == "stamp_backwards"
    assert accept(policy, "joint_states", 98.5) is None  # each topic has its own clock


def test_only_an_accepted_message_moves_the_topics_clock():
    policy = StampPolicy()
    accept(policy, "imu", 99.0)
    policy.check("imu", 99.5, NOW)                   # its message then rejected for its content: never adopted
    assert accept(policy, "imu", 99.2) is None       # later than the last accepted, earlier than the rejected one


def test_a_stamp_too_far_ahead_is_rejected_and_does_not_make_the_next_ones_old():
    policy = StampPolicy(max_lead=1.0)
    accept(policy, "imu", 99.9)
    assert rejected_kind(policy, "imu", NOW + 1e6) == "stamp_future"
    assert accept(policy, "imu", 100.0) is None
    assert accept(policy, "imu", NOW + 0.9) is None  # within max_lead


def test_a_stamp_ahead_within_the_lead_moves_the_topics_clock_only_as_far_as_the_node_s():
    """A bad publisher's message stamped 0.4 s ahead is accepted (within max_lead) but does not hold the valid stream
    back: its next message, stamped as it is sent, is not before the topic's clock; one stamped before the node's
    clock when the early one came still is."""
    policy = StampPolicy(max_lead=1.0)
    accept(policy, "odom", 99.99)
    assert accept(policy, "odom", NOW + 0.4) is None
    assert accept(policy, "odom", NOW + 0.01, now=NOW + 0.01) is None
    assert rejected_kind(policy, "odom", NOW - 0.005, now=NOW + 0.02) == "stamp_backwards"


def test_a_stamp_ahead_is_computed_with_at_the_node_s_clock():
    """A measurement is not taken after it arrives: a message stamped 0.4 s ahead (within max_lead) is computed with
    at the node's clock, so the true readings after it keep a positive time step from it (a state estimator that
    integrated on the raw stamp went back 0.4 s at the next reading); in line, the stamp itself; a followed clock
    jump ahead, the source's stamps."""
    policy = StampPolicy(max_lead=1.0, jump_messages=3)
    verdict = policy.check("joint_states", NOW - 0.003, NOW)
    assert verdict.time == NOW - 0.003
    policy.adopt(verdict)
    early = policy.check("joint_states", NOW + 0.4, NOW)
    assert early.time == NOW
    policy.adopt(early)
    assert policy.check("joint_states", NOW + 0.002, NOW + 0.004).time - early.time == pytest.approx(0.002)
    for k in range(2):  # a jump of the source's clock 5 s ahead, followed at its third stamp
        assert rejected_kind(policy, "imu", NOW + 5.0 + 0.01 * k, NOW + 0.01 * k) == "stamp_future"
    assert accept(policy, "imu", NOW + 5.02, NOW + 0.02).ahead
    assert policy.check("imu", NOW + 5.03, NOW + 0.03).time == NOW + 5.03


def test_before_the_first_clock_nothing_is_ahead():
    """A node on sim time before its first /clock reads 0: the lead check waits for the clock."""
    assert accept(StampPolicy(max_lead=1.0), "imu", 5000.0, now=0.0) is None


def test_a_run_of_stamps_ahead_is_a_clock_jump_followed_from_then_on():
    policy = StampPolicy(max_lead=1.0, jump_messages=3)
    accept(policy, "imu", 99.0)
    assert rejected_kind(policy, "imu", 200.0) == "stamp_future"
    assert rejected_kind(policy, "imu", 200.1) == "stamp_future"
    jump = accept(policy, "imu", 200.2)              # the third in a row, going forward: followed
    assert jump == ClockJump("imu", True, 200.2, 99.0, 3)
    assert accept(policy, "imu", 200.2 + 0.5, now=NOW + 0.5) is None  # the source's lead is now accepted


def test_a_run_of_stamps_gone_back_is_a_restarted_source_followed():
    policy = StampPolicy(jump_messages=3)
    accept(policy, "joint_states", 99.0)
    assert rejected_kind(policy, "joint_states", 1.0) == "stamp_backwards"
    assert rejected_kind(policy, "joint_states", 1.1) == "stamp_backwards"
    assert accept(policy, "joint_states", 1.2) == ClockJump("joint_states", False, 1.2, 99.0, 3)
    assert accept(policy, "joint_states", 1.3) is None


def test_a_run_broken_by_a_change_of_kind_or_of_direction_starts_again():
    policy = StampPolicy(max_lead=1.0, jump_messages=3)
    accept(policy, "imu", 99.0)
    rejected_kind(policy, "imu", 200.0)
    rejected_kind(policy, "imu", 50.0)               # backwards: another kind, a new run
    rejected_kind(policy, "imu", 200.1)              # ahead again: a new run of one
    assert rejected_kind(policy, "imu", 200.05) == "stamp_future"  # not going forward among themselves
    assert rejected_kind(policy, "imu", 200.2) == "stamp_future"
