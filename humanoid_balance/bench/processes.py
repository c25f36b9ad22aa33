"""The suite's executables as operating-system processes, for the benchmarks that run the node graph for real."""
import ctypes
import os
import signal
import subprocess
import time
from pathlib import Path

from humanoid_balance.resources import executable

__all__ = ["die_with_parent", "NodeProcess", "stop", "stop_processes", "cpu_seconds"]

PR_SET_PDEATHSIG = 1


def die_with_parent():
    """For ``preexec_fn``: the child gets SIGTERM when its parent dies (Linux), so a crashed benchmark or test
    leaves no node running behind it."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def cpu_seconds(pid):
    """User + system CPU time a process has used so far [s] (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class NodeProcess:
    """One executable of the package in its own process, its stdout and stderr written to ``<directory>/<name>.log``."""

    def __init__(self, name, ros_args, environment, directory, append=False):
        """``append``: add to the log of an earlier run of ``name`` (a restart) instead of starting it afresh."""
        self.name = name
        self.log = Path(directory) / f"{name}.log"
        with open(self.log, "a" if append else "w") as log:
            self.process = subprocess.Popen([str(executable(name)), "--ros-args", *ros_args], stdout=log,
                                            stderr=subprocess.STDOUT, env=environment, preexec_fn=die_with_parent)

    @property
    def pid(self):
        return self.process.pid

    def tail(self, characters=1500):
        return self.log.read_text(errors="replace")[-characters:]

    def rejections(self, count=3):
        """The first ``count`` rejections the node logged (its input guard's "rejected: ..." warnings), as written."""
        lines = (line for line in self.log.read_text(errors="replace").splitlines() if "rejected: " in line)
        return [line[line.index("rejected: "):] for _, line in zip(range(count), lines)]

    def check(self, during):
        """Raise RuntimeError, naming the node and ending with its output, if it has exited."""
        if self.process.poll() is not None:
            raise RuntimeError(f"{self.name} exited with code {self.process.returncode} {during}; its output ends:\n"
                               f"{self.tail()}")


def stop(nodes, timeout=10.0):
    """SIGINT every node (as Ctrl-C), then SIGKILL those still running after ``timeout`` [s]."""
    stop_processes([node.process for node in nodes], timeout)


def stop_processes(processes, timeout=10.0):
    """SIGINT every process (subprocess.Popen), then SIGKILL those still running after ``timeout`` [s]."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
    deadline = time.monotonic() + timeout
    for process in processes:
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
