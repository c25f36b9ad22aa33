"""Start ROS 2 programs as separate operating-system processes, the way a user would.

Tests use these helpers to talk to real nodes over DDS: each program gets its own process, its own
rclpy context and the session's ROS_DOMAIN_ID (set in conftest.py).
"""
import os
import signal
import subprocess
import sys
from pathlib import Path

from humanoid_balance.bench.processes import die_with_parent

TEST_DIR = Path(__file__).resolve().parent


def start(argv, ros_args=()):
    """Start ``argv`` (+ ``--ros-args ros_args``) with stdout and stderr captured as text."""
    command = list(argv)
    if ros_args:
        command += ["--ros-args", *ros_args]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
        preexec_fn=die_with_parent,  # no node outlives a crashed test
    )


def start_script(name, *args, ros_args=()):
    """Start a helper script from ``test/support/`` with this interpreter."""
    return start([sys.executable, str(TEST_DIR / name), *args], ros_args)


def stop(process, timeout=10.0):
    """Interrupt a process (as Ctrl-C would), then return (returncode, stdout, stderr)."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    return process.returncode, out, err
