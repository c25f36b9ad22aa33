"""PairedInput: a main message is read with its companion of the same stamp (odom with estimated_joint_states, as the
state estimator publishes them from one state), not with whichever arrived last; without one, with the newest before
it (a companion stamped ahead is not its state), else the oldest, counted."""
from builtin_interfaces.msg import Time

from humanoid_balance.nodes.input_guard import PairedInput


def test_a_main_message_takes_the_companion_of_its_own_stamp():
    odom = PairedInput(depth=4)
    assert odom.of(Time(sec=1, nanosec=0)) is None  # none yet
    for k in range(6):
        odom.set(Time(sec=1, nanosec=2_000_000 * k), f"base {k}")
    # the node fell behind: odom of ticks 4 and 5 have arrived when the joints of tick 4 are read
    assert odom.of(Time(sec=1, nanosec=8_000_000)) == "base 4"
    assert odom.of(Time(sec=1, nanosec=4_000_000)) == "base 2" and odom.unpaired == 0
    # the joints of tick 6 before its odom: the newest, counted; one older than those kept: the oldest, counted
    assert odom.of(Time(sec=1, nanosec=12_000_000)) == "base 5" and odom.unpaired == 1
    assert odom.of(Time(sec=1, nanosec=0)) == "base 2" and odom.unpaired == 2
    # an odom stamped ahead of everything (a bad publisher) is not taken for the joints of tick 6, nor of 7
    odom.set(Time(sec=9, nanosec=0), "from the future")
    assert odom.of(Time(sec=1, nanosec=12_000_000)) == "base 5"
    odom.set(Time(sec=1, nanosec=14_000_000), "base 7")
    assert odom.of(Time(sec=1, nanosec=14_000_000)) == "base 7" and odom.unpaired == 3
