"""ROS 2's launch system on the package as colcon installs it (support/install_space.py): the launch tests of launch/
run against the install space, each in a process of its own with the environment ``source install/setup.bash``
gives, and ``ros2 launch`` as a user types it — on a robot folder written by ``init``, with a bad argument, with
a node that cannot start, and with a node stopped alone.

Needs ROS 2's launch system (launch, launch_ros, launch_testing, ros2launch): ``make test`` installs it from
``../shared/ros2-launch`` when that folder exists; without it these tests skip, saying so.
"""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import yaml

pytest.importorskip("launch_testing", reason="ROS 2's launch system is not installed: ../shared/ros2-launch/"
                    "install.sh .venv (make test does it when that folder exists)")

from geometry_msgs.msg import PointStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402

from support.model_fixtures import talos_urdf  # noqa: E402
from support.ros_probe import Probe  # noqa: E402

pytestmark = pytest.mark.dds
LAUNCH_TESTS = sorted((Path(__file__).parent / "launch").glob("test_*.py"))
LAUNCH_TEST_TIMEOUT = 900.0  # a whole launch test file, every case [s]
START_TIMEOUT = 120.0        # for the nodes to load a robot on a loaded machine [s]
SUITE = ("mujoco_sim: simulation", "state_estimator: estimation", "contact_estimator: contacts",
         "centroidal_balancer: balance", "loop_closure_mapper: mapping")
NODE_ENDED = "exited with code 0 while the launch ran"  # the launch's line when a required node ends by itself
TALOS_FEET = ("leg_left_6_link", "leg_right_6_link")
TRACEBACK = "Traceback (most recent call last)"


def runner(launch_test):
    """How a user runs ``launch_test``: balance.launch.py's with ROS 2's ``launch_test`` command, sim.launch.py's
    with pytest (``colcon test``'s way), so that both work from the install space."""
    if launch_test.name == "test_balance_launch.py":
        return ["launch_test", str(launch_test)]
    return [sys.executable, "-m", "pytest", str(launch_test), "-v", "-s", "-p", "no:cacheprovider"]


@pytest.mark.parametrize("launch_test", LAUNCH_TESTS, ids=[path.name for path in LAUNCH_TESTS])
def test_launch_test_passes_on_the_install_space(install_space, launch_test, tmp_path, record_property):
    """One launch per case; the cases' times are printed and kept in the JUnit report."""
    log = tmp_path / "launch_test.log"
    with log.open("w") as output:
        result = subprocess.run(runner(launch_test), stdout=output, stderr=subprocess.STDOUT,
                                cwd=install_space.root, env=install_space.environment, timeout=LAUNCH_TEST_TIMEOUT)
    text = log.read_text(errors="replace")
    for case, seconds in re.findall(r"launch case (.+?): ([\d.]+) s", text):
        record_property(case, seconds)
        print(f"{launch_test.name} {case}: {seconds} s")
    failures = "\n".join(line for line in text.splitlines() if re.search(r"(FAIL|ERROR|Error)\b", line))
    assert result.returncode == 0, f"{launch_test.name} failed:\n{failures[-4000:]}\n--- end of its output:\n" \
                                   f"{text[-6000:]}"
    assert not re.search(r"\d+ skipped|skipped=\d+", text), "launch cases skipped"


def ros2_launch(install_space, *arguments):
    """``ros2 launch humanoid_balance ARGUMENTS`` in its own process group, as a terminal starts it: with Ctrl-C's
    SIGINT at its default disposition, whatever this process inherited (a test run started in the background of a
    shell without job control ignores SIGINT, and so would a launch it starts: launch relies on Python's default
    SIGINT handler, which Python does not install over an ignored signal)."""
    return subprocess.Popen(["ros2", "launch", "humanoid_balance", *arguments], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=install_space.root,
                            env=install_space.environment, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def ended(process, timeout):
    """(exit code, output) once ``process`` ends by itself within ``timeout`` [s]; (None, output) if it had to be
    killed. Either way no process of its group is left."""
    try:
        output, _ = process.communicate(timeout=timeout)
        code = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        code = None
    return code, output


def ctrl_c(process):
    """Ctrl-C in the terminal that started ``process``: SIGINT to its whole process group (the launch and its nodes),
    as the terminal sends it to its foreground group."""
    os.killpg(process.pid, signal.SIGINT)


def stacks(process):
    """Every thread's Python stack of a running ``process`` (py-spy), for a launch that does not end."""
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists():
        return "(py-spy not installed)"
    return subprocess.run([str(spy), "dump", "--pid", str(process.pid)], capture_output=True, text=True,
                          timeout=60).stdout


def group_is_empty(process, timeout=20.0):
    """Whether every process of ``process``'s group (the launch and its nodes) has gone within ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    return False


@pytest.fixture(scope="module")
def talos_folder(install_space, tmp_path_factory):
    """TALOS configured by the installed ``humanoid-balance init``, as a user does before ``robot:=``."""
    folder = tmp_path_factory.mktemp("talos")
    urdf = talos_urdf()
    result = subprocess.run([str(install_space.executables / "humanoid-balance"), "init", str(urdf), "--feet",
                             *TALOS_FEET, "--output", str(folder), "--package-dirs", str(urdf.parents[4])],
                            capture_output=True, text=True, env=install_space.environment, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return folder


def edited(folder, destination, **values):
    """A copy of the robot configuration ``folder`` with ``values`` set in its robot.yaml."""
    destination.mkdir()
    for path in folder.iterdir():
        if path.is_file():
            (destination / path.name).write_bytes(path.read_bytes())
        else:
            (destination / path.name).symlink_to(path)
    robot = destination / "robot.yaml"
    document = yaml.safe_load(robot.read_text())
    document["/**"]["ros__parameters"].update(values)
    robot.write_text(yaml.safe_dump(document))
    return destination


def test_ros2_launch_sim_on_a_robot_folder_from_init_stands_and_ends_on_ctrl_c(install_space, talos_folder,
                                                                                tmp_path):
    """``ros2 launch humanoid_balance sim.launch.py robot:=<TALOS folder>`` in momentum mode (TALOS's joint
    impedance): a plant key of the robot's file (push_duration) wins over the plant's defaults, the robot stands 3 s
    of simulated time, and Ctrl-C ends the launch with exit code 0 and no process left."""
    folder = edited(talos_folder, tmp_path / "talos", push_duration=0.25)
    launch = ros2_launch(install_space, "sim.launch.py", f"robot:={folder}", "balance_mode:=momentum",
                         "real_time:=false", "rviz:=false")
    probe = Probe("ros2_launch_probe")
    odometry = probe.record(Odometry, "sim/odom")
    probe.record(PointStamped, "sim/com")
    simulated = lambda: odometry[-1].header.stamp.sec + 1e-9 * odometry[-1].header.stamp.nanosec  # noqa: E731
    try:
        reported = probe.spin_until(lambda: set(SUITE) <= set(probe.diagnostics) or launch.poll() is not None,
                                    START_TIMEOUT)
        assert reported and launch.poll() is None, ended(launch, 5.0)[1][-4000:]
        assert probe.parameters("mujoco_sim", ["push_duration", "command_interface"]) == {
            "push_duration": 0.25, "command_interface": "impedance"}
        assert probe.spin_until(lambda: odometry and simulated() >= 3.0, 120.0), "sim/odom did not reach 3 s"
        heights = [message.pose.pose.position.z for message in odometry]
        assert min(heights) > heights[0] - 0.05, f"TALOS fell: base from {heights[0]:.3f} m to {min(heights):.3f} m"
        ctrl_c(launch)  # the probe still in the graph, as a user's tools are when they press Ctrl-C
        try:
            output, _ = launch.communicate(timeout=60.0)
        except subprocess.TimeoutExpired:
            pytest.fail(f"ros2 launch did not end within 60 s of Ctrl-C; its threads:\n{stacks(launch)}")
    finally:
        probe.close()
        if launch.poll() is None:
            os.killpg(launch.pid, signal.SIGKILL)
            launch.communicate()
    assert launch.returncode == 0 and TRACEBACK not in output and NODE_ENDED not in output, output[-4000:]
    assert group_is_empty(launch), "nodes left running after Ctrl-C"


def test_ros2_launch_refuses_a_bad_argument_value_in_one_line(install_space):
    code, output = ended(ros2_launch(install_space, "balance.launch.py", "contact_mode:=actuator_force"), 60.0)
    assert code not in (0, None), output
    assert "contact_mode" in output and "actuator_forces" in output and TRACEBACK not in output, output


def test_a_node_that_cannot_start_ends_the_launch_with_its_reason(install_space, talos_folder, tmp_path):
    """A robot file whose sole is misspelled: the nodes that read it exit 1, saying so; the launch stops the others
    and exits non-zero, no process left."""
    soles = yaml.safe_load((talos_folder / "robot.yaml").read_text())["/**"]["ros__parameters"]["soles"]
    folder = edited(talos_folder, tmp_path / "misspelled", soles=[soles[0] + "_typo", soles[1]])
    launch = ros2_launch(install_space, "balance.launch.py", f"robot:={folder}")
    code, output = ended(launch, START_TIMEOUT)
    assert code not in (0, None), f"exit code {code} (None: still running after {START_TIMEOUT} s):\n{output[-4000:]}"
    assert f"{soles[0]}_typo" in output, output[-4000:]
    assert "exited with code 1" in output and TRACEBACK not in output, output[-4000:]
    assert group_is_empty(launch), "nodes left running after the launch ended"


def test_a_node_stopped_alone_ends_the_launch_naming_it(install_space):
    """SIGINT to centroidal_balancer alone, which then exits 0 as it does on Ctrl-C: the suite cannot run without
    it, so the launch stops the others with a line naming it and exits 0, no process left."""
    launch = ros2_launch(install_space, "balance.launch.py", "robot:=mahru")
    probe = Probe("node_stopped_probe")
    try:
        nodes = set(SUITE[1:])
        reported = probe.spin_until(lambda: nodes <= set(probe.diagnostics) or launch.poll() is not None,
                                    START_TIMEOUT)
        assert reported and launch.poll() is None, ended(launch, 5.0)[1][-4000:]
        balancer, = (node for node in psutil.Process(launch.pid).children()
                     if Path(node.cmdline()[1]).name == "centroidal_balancer")
        balancer.send_signal(signal.SIGINT)
        code, output = ended(launch, 60.0)
    finally:
        probe.close()
    assert code == 0, f"exit code {code} (None: still running 60 s after the balancer ended):\n{output[-4000:]}"
    assert re.search(rf"centroidal_balancer-\d+ {NODE_ENDED}", output) and TRACEBACK not in output, output[-4000:]
    assert group_is_empty(launch), "nodes left running after the launch ended"
