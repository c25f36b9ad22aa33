"""A node process's claim on the operating system for real time, as ros2_control's controller manager makes it: a
SCHED_FIFO priority for every thread of the process (the executor's and the middleware's receive threads: a message
waits for the slowest of them), the CPUs it may run on and its memory locked against page faults — each asked for by
a parameter of the process's first node (:data:`PARAMETERS`), each granted or refused by the operating system and
reported (:class:`Scheduling`, in every node's /diagnostics as ``scheduling``), never fatal: a computer that does not
grant it runs the suite on the default scheduler and says so.

To grant it on a robot's computer: ``@robot - rtprio 98`` and ``@robot - memlock unlimited`` in
/etc/security/limits.conf (or CAP_SYS_NICE and CAP_IPC_LOCK for the user running the nodes), as for ros2_control.
"""
import ctypes
import os
from typing import NamedTuple

__all__ = ["PARAMETERS", "Scheduling", "claim", "current", "checked_priority", "checked_cpus"]

PARAMETERS = {
    "realtime_priority": (0, "SCHED_FIFO priority of this process's threads, 1-99 (0: the default scheduler); needs "
                             "rtprio in /etc/security/limits.conf or CAP_SYS_NICE; what it got: /diagnostics' "
                             "scheduling"),
    "cpu_affinity": ([-1], "CPUs this process runs on, e.g. [2, 3] ([-1]: any)"),
    "lock_memory": (False, "lock this process's memory (mlockall) so that no page fault stalls a tick; needs memlock "
                           "in /etc/security/limits.conf or CAP_IPC_LOCK"),
}
"""name → (default, description) of the parameters a process's first node declares for its scheduling."""

MCL_CURRENT, MCL_FUTURE = 1, 2  # <sys/mman.h>
GRANT_HINT = "grant rtprio and memlock in /etc/security/limits.conf, or CAP_SYS_NICE and CAP_IPC_LOCK"


class Scheduling(NamedTuple):
    """What a process asked the operating system for and got."""

    policy: str           # every thread's policy: "SCHED_FIFO" or "SCHED_OTHER"
    priority: int         # its priority (0 with SCHED_OTHER)
    cpus: tuple           # the CPUs it may run on
    memory_locked: bool
    refused: tuple = ()   # one line per request the operating system refused, with its reason

    def describe(self):
        """One line for /diagnostics and the log."""
        text = f"{self.policy}" + (f" {self.priority}" if self.priority else "")
        text += f", CPUs {','.join(map(str, self.cpus))}" + (", memory locked" if self.memory_locked else "")
        return text + (f"; refused: {'; '.join(self.refused)} ({GRANT_HINT})" if self.refused else "")


def checked_priority(priority):
    """``priority`` as an int within SCHED_FIFO's range or 0; ValueError naming the parameter otherwise."""
    highest = os.sched_get_priority_max(os.SCHED_FIFO)
    if int(priority) != priority or not 0 <= priority <= highest:
        raise ValueError(f"parameter realtime_priority: {priority} is not 0 (off) or a SCHED_FIFO priority 1-{highest}")
    return int(priority)


def checked_cpus(cpus):
    """``cpus`` as a tuple of CPU numbers, () for [-1] (any); ValueError naming the parameter otherwise."""
    cpus = tuple(int(cpu) for cpu in cpus)
    if cpus in ((), (-1,)):
        return ()
    if any(cpu < 0 for cpu in cpus):
        raise ValueError(f"parameter cpu_affinity: {list(cpus)} is not [-1] (any) or a list of CPU numbers")
    return cpus


def claim(priority=0, cpus=(), lock_memory=False):
    """Ask for a SCHED_FIFO ``priority`` (0: none) for every thread of this process, the CPUs ``cpus`` (none: any)
    and locked memory; the :class:`Scheduling` the process then has, read back from the operating system. Threads
    started later inherit the policy and the CPUs of the thread that starts them.

    Raises:
        ValueError: a parameter's value is none of the kind (:func:`checked_priority`, :func:`checked_cpus`).
    """
    priority, cpus = checked_priority(priority), checked_cpus(cpus)
    refused = []
    if cpus:
        try:
            _each_thread(os.sched_setaffinity, cpus)
        except OSError as error:
            refused.append(f"cpu_affinity {list(cpus)}: {error.strerror}")
    if priority:
        try:
            _each_thread(os.sched_setscheduler, os.SCHED_FIFO, os.sched_param(priority))
        except OSError as error:  # (the main thread is first: a refusal leaves every thread as it was)
            refused.append(f"realtime_priority {priority}: {error.strerror}")
    locked = False
    if lock_memory:
        libc = ctypes.CDLL(None, use_errno=True)
        locked = libc.mlockall(MCL_CURRENT | MCL_FUTURE) == 0
        if not locked:
            refused.append(f"lock_memory: {os.strerror(ctypes.get_errno())}")
    return current(locked, tuple(refused))


def current(memory_locked=False, refused=()):
    """The :class:`Scheduling` this process has: its main thread's policy and priority (the others' follow it)."""
    fifo = os.sched_getscheduler(0) == os.SCHED_FIFO
    return Scheduling("SCHED_FIFO" if fifo else "SCHED_OTHER", os.sched_getparam(0).sched_priority if fifo else 0,
                      tuple(sorted(os.sched_getaffinity(0))), memory_locked, refused)


def _each_thread(function, *arguments):
    """``function(thread, *arguments)`` for every thread of this process, its main thread first; a thread that ended
    meanwhile is skipped."""
    main = os.getpid()
    for thread in (main, *(int(task) for task in os.listdir("/proc/self/task") if int(task) != main)):
        try:
            function(thread, *arguments)
        except ProcessLookupError:
            continue
