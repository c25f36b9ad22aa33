"""Faults in time on the running chain (issue 20), the four nodes in their own processes, each fault judged against
what the chain did just before it:

- kill -9 of each node, ten seconds down, then a restart: the others report the gap and hold, the robot stays
  up, and the chain resumes balancing where it was;
- two seconds of silence from state_estimator (SIGSTOP), then recovery;
- the soak run's smoke version (humanoid-balance bench soak): random pushes and dances, nothing dies, leaks or is
  rejected.
"""
import time

import pytest

from support.chain_watch import HEIGHT_TOLERANCE, MAIN_OUTPUT, RATE, SETTLE, assert_standing_as_before, running_chain
from humanoid_balance.bench import soak
from humanoid_balance.bench.dds_loop import PLANT, SUITE

pytestmark = pytest.mark.dds


@pytest.fixture(scope="module")
def chain():
    """The plant in lockstep on its /clock, the nodes on it: a node that is down leaves the plant stepping on its
    timeout and on the others' holds, and a loaded machine slows the run instead of felling the robot (the
    free-running chain has its own test, test_free_running.py)."""
    yield from running_chain(lockstep=True, restartable=True)


GAP_REPORT = {  # killed node → (node that reports it, words of its report)
    "state_estimator": ("contact_estimator", "no good estimated_joint_states"),
    "contact_estimator": ("centroidal_balancer", "zmp stale"),
    "centroidal_balancer": ("loop_closure_mapper", "balance/joint_command stale"),
    "loop_closure_mapper": ("mujoco_sim", "no good actuator_commands"),
}


DOWN_TIME = 10.0  # a killed node stays down this long [s of wall time] before its restart: the others' holds must
                 # last (without its zmp the balancer once balanced on CoM feedback alone, and the robot's rocking on
                 # its soles grew until it fell some 5–9 s after the kill — after a quick restart, only now and then)


@pytest.mark.parametrize("node", [node for node in SUITE if node != "loop_closure_mapper"])  # (its gap is the
# plant's to hold, as a robot's driver holds when its commands stop: the mapper keeps no state a restart could lose)
def test_kill_9_and_restart_the_others_report_and_hold_then_the_chain_resumes(chain, node):
    before = chain.watch.baseline()
    chain.kill(node)
    killed = time.monotonic()
    reporter, words = GAP_REPORT[node]
    assert chain.spin(15.0, until=lambda: chain.status[reporter].arrival > killed + 0.5 and
                      words in chain.status[reporter].message), chain.status[reporter]
    assert chain.status[reporter].level in ("WARN", "ERROR")
    chain.spin(killed + DOWN_TIME - time.monotonic())
    assert words in chain.status[reporter].message, chain.status[reporter]
    heights = [height for arrival, height in chain.heights if arrival >= killed] or [chain.base_height]
    worst = max(heights, key=lambda height: abs(height - before[1]))
    assert abs(worst - before[1]) < HEIGHT_TOLERANCE, \
        f"the robot moved while {node} was down: base at {worst:.3f} m, {before[1]:.3f} m before"
    chain.launch(node)
    assert_resumes(chain, node, f"the restart of {node}")
    assert_standing_as_before(chain, before, f"kill -9 and restart of {node}")


def test_two_seconds_of_silence_from_the_estimator_are_reported_then_the_chain_recovers(chain):
    before = chain.watch.baseline()
    clock = chain.node.get_clock()  # the nodes' (the plant's /clock)

    def reported():  # two seconds of silence on the nodes' clock, and the reports (1 Hz) that came since
        return clock.now().nanoseconds - paused > 2e9 and \
            "no good estimated_joint_states" in chain.status["contact_estimator"].message and \
            chain.status["centroidal_balancer"].message == "inputs stale: holding posture"

    chain.pause("state_estimator")  # SIGSTOP: no estimates, no odometry
    paused = clock.now().nanoseconds
    try:
        assert chain.spin(30.0, until=reported), (chain.status["contact_estimator"],
                                                  chain.status["centroidal_balancer"])
    finally:
        chain.resume("state_estimator")
    assert_resumes(chain, "state_estimator", "two seconds of silence")
    assert_standing_as_before(chain, before, "two seconds of silence")


RECOVERY = 30.0  # after SETTLE, the time every node has to report no ERROR again [s of wall time]: in a CI run the
                 # contact estimator still had no estimated_joint_states 5.7 s after the chain's probe saw them flow
                 # again from a restarted state_estimator (DDS matching the new writer with every reader); here 2–4 s


def assert_resumes(chain, node, what):
    """``node``'s main output and the commands flow again at more than half the rate, and then every node reports
    no ERROR within RECOVERY."""
    def flowing(topic):  # a tenth of the plant's rate at least, in wall time: the lockstep's pace is the machine's
        now = time.monotonic()
        return chain.watch.rate(topic, now - 0.5, now) > 0.1 * RATE

    assert chain.spin(60.0, until=lambda: flowing(MAIN_OUTPUT[node]) and flowing("actuator_commands")), \
        f"no recovery after {what} (exited: {chain.exited()}); {node}'s output ends:\n{chain.processes[node].tail()}"
    chain.spin(SETTLE)
    settled = time.monotonic()
    names = (*SUITE, PLANT)

    def recovered():
        return all(chain.status[name].arrival > settled and chain.status[name].level != "ERROR" for name in names)

    assert chain.spin(RECOVERY, until=recovered), \
        f"after {what}: {({name: chain.status[name] for name in names if chain.status[name].level == 'ERROR'})}"


def test_soak_smoke_run_stands_leaks_nothing_and_rejects_nothing():
    """``humanoid-balance bench soak``, briefly: 10 s of random pushes and dances through a chain of its own (in
    lockstep here: the free-running chain's own test is test_free_running.py)."""
    run = soak.soak(10.0, lockstep=True)
    assert run.pushes >= 2 and run.dances >= 2
    assert set(run.memory_start) == set(run.memory_end) == {*SUITE, PLANT}
    falls, _, died, memory, rejected = soak.rows(run)
    assert falls.met, falls.measured
    assert died.met, died.measured
    assert rejected.met, rejected.measured
    assert memory.measured.count("(of ") == 5
