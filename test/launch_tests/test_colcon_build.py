"""The package as colcon installs it (support/install_space.py: a temporary workspace, the editable install masked): its
executables, data, modules and nodes from ``install/`` alone, ``colcon test``, and signals during start-up."""
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from humanoid_balance.nodes import BALANCE_NODES, NODES
from support.install_space import COLCON, REPO
from support.ros_probe import Probe

DIAGNOSTICS = {"state_estimator": "estimation", "contact_estimator": "contacts", "centroidal_balancer": "balance",
               "loop_closure_mapper": "mapping", "mujoco_sim": "simulation"}
STACK = BALANCE_NODES  # in balance_stack
START_TIMEOUT = 90.0  # for all five nodes to start together on a loaded 2-core machine [s]
STAY_UP = 5.0         # each node must keep running this long after its first diagnostics [s]


def console_scripts():
    """Names of the console_scripts entries declared in setup.py."""
    return re.findall(r'"([\w-]+) = humanoid_balance[\w.]*:\w+"', (REPO / "setup.py").read_text())


def source_modules():
    """Dotted names of every module of the package in the source tree."""
    names = []
    for path in sorted((REPO / "humanoid_balance").rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


@pytest.fixture(scope="module")
def workspace(install_space):
    return install_space


def finish(process, signal_number=signal.SIGINT, timeout=20.0):
    """Send ``signal_number``; (exit code, everything the process printed)."""
    if process.poll() is None:
        process.send_signal(signal_number)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
    return process.returncode, output


def test_every_console_script_is_an_executable_in_lib(workspace):
    names = console_scripts()
    assert "humanoid-balance" in names and set(NODES) <= set(names)
    for name in names:
        executable = workspace.executables / name
        assert executable.is_file(), f"{executable} missing"
        assert os.access(executable, os.X_OK), f"{executable} not executable"


def test_data_folders_installed_under_share(workspace):
    share = workspace.prefix / "share" / "humanoid_balance"
    assert (share / "package.xml").is_file()
    for folder, pattern in [("launch", "*.launch.py"), ("config", "*.yaml"), ("urdf", "*.urdf"),
                            ("rviz", "*.rviz")]:
        assert (share / folder).is_dir(), f"share/humanoid_balance/{folder} missing"
        for source in (REPO / folder).glob(pattern):
            assert (share / folder / source.name).is_file(), f"{folder}/{source.name} not installed"


def test_ament_index_marker(workspace):
    marker = workspace.prefix / "share" / "ament_index" / "resource_index" / "packages" / "humanoid_balance"
    assert marker.is_file()
    assert workspace.environment["AMENT_PREFIX_PATH"].split(os.pathsep)[0] == str(workspace.prefix)


def test_every_module_imports_from_the_install_space(workspace):
    """Each module of the source tree imports, and from ``install/``: the editable install cannot stand in."""
    modules = source_modules()
    assert "humanoid_balance.control.balancer" in modules
    result = workspace.python(
        "import importlib, json\n"
        "found = {}\n"
        f"for name in {modules!r}:\n"
        "    try:\n"
        "        found[name] = importlib.import_module(name).__file__\n"
        "    except Exception as error:\n"
        "        found[name] = f'{type(error).__name__}: {error}'\n"
        "print(json.dumps(found))\n")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.splitlines()[-1])
    site_packages = str(workspace.prefix / "lib")
    outside = {name: where for name, where in found.items() if not str(where).startswith(site_packages)}
    assert not outside, f"modules that do not import from {site_packages}: {outside}"


def test_robot_files_come_from_the_ament_share(workspace):
    result = workspace.python("from humanoid_balance.resources import robot_files, config_file\n"
                              "print(*robot_files(), config_file('state_estimator.yaml'))")
    assert result.returncode == 0, result.stderr
    share = workspace.prefix / "share" / "humanoid_balance"
    assert result.stdout.split() == [str(share / "urdf" / "kangaroo_like.urdf"),
                                     str(share / "config" / "kangaroo_like.loops.yaml"),
                                     str(share / "config" / "state_estimator.yaml")]


def start_and_watch(workspace, executables, expected):
    """Start ``executables`` from install/lib/humanoid_balance/ with no parameters; each of the ``expected``
    diagnostics names must arrive, every process must still run STAY_UP seconds later and then exit 0 on Ctrl-C
    without a traceback."""
    probe = Probe("install_probe")
    processes = {name: workspace.start(name) for name in executables}
    try:
        reported = lambda: all(name in probe.diagnostics for name in expected)  # noqa: E731
        exited = lambda: any(process.poll() is not None for process in processes.values())  # noqa: E731
        probe.spin_until(lambda: reported() or exited(), START_TIMEOUT)
        assert not exited(), {name: finish(p)[1][-2000:] for name, p in processes.items() if p.poll() is not None}
        missing = [name for name in expected if name not in probe.diagnostics]
        assert not missing, f"no diagnostics within {START_TIMEOUT} s from {missing}"
        probe.spin_until(exited, STAY_UP)
        assert not exited(), {name: finish(p)[1][-2000:] for name, p in processes.items() if p.poll() is not None}
    finally:
        probe.close()
        results = {name: finish(process) for name, process in processes.items()}
    for name, (code, output) in results.items():
        assert "Traceback" not in output, f"{name}:\n{output[-3000:]}"
        assert code == 0, f"{name} exited with {code}:\n{output[-3000:]}"


@pytest.mark.dds
def test_every_node_starts_with_its_defaults_stays_up_and_stops_cleanly(workspace):
    """All five nodes from install/lib/humanoid_balance/, no parameters, each in its own process."""
    start_and_watch(workspace, DIAGNOSTICS, [f"{name}: {what}" for name, what in DIAGNOSTICS.items()])


@pytest.mark.dds
def test_the_composed_stack_starts_its_four_nodes_stays_up_and_stops_cleanly(workspace):
    start_and_watch(workspace, ["balance_stack"], [f"{name}: {DIAGNOSTICS[name]}" for name in STACK])


RMW = os.environ["RMW_IMPLEMENTATION"]  # its library is loaded by rclpy.init (conftest.py sets the default)
START_UP_MOMENTS = {  # a shared library the node has mapped once it is that far, and a delay after it [s]
    "importing numpy": ("_multiarray_umath", 0.0),
    "importing pinocchio": ("pinocchio_pywrap", 0.0),
    "rclpy initialised": (f"lib{RMW}.so", 0.0),
    "building the node": (f"lib{RMW}.so", 0.5),
    "late in start-up": (f"lib{RMW}.so", 1.5),
}


def has_mapped(process, library):
    try:
        return library in Path(f"/proc/{process.pid}/maps").read_text()
    except OSError:  # the process has exited
        return False


SIGNALS_AT = [  # (moment, signal): each moment once, the two signals in turn, both late in start-up
    (moment, (signal.SIGINT, signal.SIGTERM)[k % 2]) for k, moment in enumerate(START_UP_MOMENTS)] + [
    ("late in start-up", signal.SIGTERM)]


@pytest.mark.parametrize("moment, signal_number", SIGNALS_AT,
                         ids=[f"{moment}-{signal.Signals(number).name}" for moment, number in SIGNALS_AT])
def test_a_signal_at_any_moment_of_start_up_exits_cleanly(workspace, moment, signal_number):
    """Ctrl-C (SIGINT) or SIGTERM, as launch sends them, while a node imports, initialises rclpy or builds its
    topics: exit code 0 and no traceback, as launch_testing's exit-code check requires. The moment is found from
    the libraries the process has loaded, not guessed from a delay. Both signals end a node through the same
    handler (nodes' main), so each moment is tried with one of them, in turn."""
    library, delay = START_UP_MOMENTS[moment]
    processes = {name: workspace.start(name) for name in NODES}
    signalled = {}
    deadline = time.monotonic() + START_TIMEOUT
    while len(signalled) < len(processes) and time.monotonic() < deadline:
        for name, process in processes.items():
            if name not in signalled and (process.poll() is not None or has_mapped(process, library)):
                signalled[name] = time.monotonic() + delay
        time.sleep(0.002)
    results = {}
    for name, when in sorted(signalled.items(), key=lambda item: item[1]):
        time.sleep(max(0.0, when - time.monotonic()))
        processes[name].send_signal(signal_number)
    results = {name: finish(process) for name, process in processes.items()}
    for name, (code, output) in results.items():
        assert "Traceback" not in output, f"{name}, signal {moment}:\n{output[-3000:]}"
        assert code == 0, f"{name}, signal {moment}: exit code {code}\n{output[-3000:]}"


def test_colcon_test_runs_the_pytest_suite(workspace):
    """``colcon test`` as the README gives it runs pytest over test/ (without a pytest test dependency in setup.py it
    falls back to unittest and silently runs nothing)."""
    colcon = [str(COLCON), "--log-base", str(workspace.root / "log")]
    paths = ["--paths", str(REPO), "--build-base", str(workspace.root / "build"),
             "--install-base", str(workspace.install)]
    tested = subprocess.run([*colcon, "test", *paths, "--pytest-args", "-k", "test_model_loader"],
                            cwd=workspace.root, capture_output=True, text=True, timeout=600)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    summary = subprocess.run([*colcon, "test-result", "--test-result-base", str(workspace.root / "build"),
                              "--verbose"], cwd=workspace.root, capture_output=True, text=True, timeout=60)
    assert summary.returncode == 0, summary.stdout + summary.stderr
    counts = re.search(r"(\d+) tests, (\d+) errors, (\d+) failures", summary.stdout)
    assert counts and int(counts[1]) >= 10 and counts[2] == counts[3] == "0", summary.stdout


def test_installed_command_line_tool_runs(workspace):
    result = subprocess.run([str(workspace.executables / "humanoid-balance"), "--help"], capture_output=True,
                            text=True, env=workspace.environment, cwd=workspace.root, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "usage: humanoid-balance" in result.stdout
