"""A process's claim on real time (nodes.realtime) against what the operating system says the process has: each
claim runs in a process of its own (it changes the scheduling of the process that makes it), with a thread started
before it, and reads back every thread's policy, priority and CPUs from /proc and os.sched_*."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from humanoid_balance.nodes.realtime import checked_cpus, checked_priority

CLAIMING = """
import json, os, sys, threading
from humanoid_balance.nodes.realtime import claim
started = threading.Event()
threading.Thread(target=lambda: (started.set(), threading.Event().wait(5.0)), daemon=True).start()
started.wait()
granted = claim(*json.loads(sys.argv[1]))
threads = [int(task) for task in os.listdir("/proc/self/task")]
print(json.dumps({"granted": granted._asdict(), "threads": len(threads),
                  "policies": sorted({os.sched_getscheduler(thread) for thread in threads}),
                  "priorities": sorted({os.sched_getparam(thread).sched_priority for thread in threads}),
                  "cpus": sorted({tuple(sorted(os.sched_getaffinity(thread))) for thread in threads}),
                  "locked": int(open("/proc/self/status").read().split("VmLck:")[1].split()[0])}))
"""


def claimed(priority=0, cpus=(), lock_memory=False):
    """What a fresh process claimed and what the operating system then says of its threads."""
    run = subprocess.run([sys.executable, "-c", CLAIMING, json.dumps([priority, list(cpus), lock_memory])],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_without_a_request_the_process_keeps_the_default_scheduler_and_says_so():
    result = claimed()
    granted = result["granted"]
    assert granted["policy"] == "SCHED_OTHER" and granted["priority"] == 0 and not granted["refused"]
    assert result["policies"] == [os.SCHED_OTHER] and granted["cpus"] == sorted(os.sched_getaffinity(0))


def test_a_priority_is_every_thread_s_or_its_refusal_is_reported_and_nothing_changed():
    result = claimed(priority=10)
    granted = result["granted"]
    assert result["threads"] >= 2
    if granted["refused"]:  # a machine that does not grant SCHED_FIFO: said, with the reason, and nothing changed
        assert granted["policy"] == "SCHED_OTHER" and "realtime_priority 10" in granted["refused"][0]
        assert result["policies"] == [os.SCHED_OTHER]
    else:
        assert granted["policy"] == "SCHED_FIFO" and granted["priority"] == 10
        assert result["policies"] == [os.SCHED_FIFO] and result["priorities"] == [10]  # the thread started before


def test_cpus_are_every_thread_s_and_locked_memory_is_locked_or_refused():
    cpu = min(os.sched_getaffinity(0))
    result = claimed(cpus=[cpu], lock_memory=True)
    granted = result["granted"]
    assert result["cpus"] == [[cpu]] and granted["cpus"] == [cpu]
    if granted["memory_locked"]:
        assert result["locked"] > 0
    else:
        assert any(line.startswith("lock_memory: ") for line in granted["refused"]) and result["locked"] == 0


def test_a_cpu_the_machine_lacks_is_refused_with_its_reason():
    result = claimed(cpus=[4096])
    assert result["granted"]["refused"] == ["cpu_affinity [4096]: Invalid argument"]
    assert result["cpus"] == [sorted(os.sched_getaffinity(0))]


@pytest.mark.parametrize("value", [-1, 100, 2.5])
def test_a_priority_outside_sched_fifo_s_range_names_the_parameter(value):
    with pytest.raises(ValueError, match="parameter realtime_priority: .* is not 0 \\(off\\) or a SCHED_FIFO"):
        checked_priority(value)


def test_cpu_affinity_minus_one_is_any_and_other_negatives_name_the_parameter():
    assert checked_cpus([-1]) == () and checked_cpus([0, 1]) == (0, 1)
    with pytest.raises(ValueError, match="parameter cpu_affinity: \\[0, -2\\]"):
        checked_cpus([0, -2])


def test_launch_arguments_become_every_node_s_scheduling_parameters_or_name_themselves():
    from humanoid_balance.launch_support import scheduling_parameters

    assert scheduling_parameters({"realtime_priority": "50", "cpu_affinity": "2, 3", "lock_memory": True}) == \
        {"realtime_priority": 50, "cpu_affinity": [2, 3], "lock_memory": True}
    assert scheduling_parameters({"realtime_priority": "0", "cpu_affinity": "", "lock_memory": False}) == \
        {"realtime_priority": 0, "cpu_affinity": [-1], "lock_memory": False}
    with pytest.raises(ValueError, match="launch argument realtime_priority: 'high' is not an integer"):
        scheduling_parameters({"realtime_priority": "high", "cpu_affinity": "", "lock_memory": False})
    with pytest.raises(ValueError, match="launch argument cpu_affinity: '0-3' is not a comma-separated list"):
        scheduling_parameters({"realtime_priority": "0", "cpu_affinity": "0-3", "lock_memory": False})


def test_skipped_ticks_count_the_source_s_ticks_a_node_did_not_handle():
    from humanoid_balance.loop.starvation import SkippedTicks

    rng = np.random.default_rng(0)
    ticks = SkippedTicks()
    for k in range(100):  # every tick of a 100 Hz source, its stamps jittered by 10 % of a period
        ticks.take(0.01 * k + 0.001 * rng.uniform(-1.0, 1.0))
    assert ticks.report() == (0.0, 100)
    for k in range(100, 400, 3):  # then one in three: two of every three skipped
        ticks.take(0.01 * k)
    fraction, source_ticks = ticks.report()
    assert fraction == pytest.approx(2 / 3, abs=0.02) and source_ticks == pytest.approx(300, abs=3)
