"""Build the package the ROS way (colcon, ament_python) and check the installed ament layout."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
COLCON = Path(sys.executable).with_name("colcon")


def console_scripts():
    """Names of the console_scripts entries declared in setup.py."""
    text = (REPO / "setup.py").read_text()
    return re.findall(r'"([\w-]+) = humanoid_balance[\w.]*:main"', text)


@pytest.fixture(scope="module")
def install_prefix(tmp_path_factory):
    if not COLCON.exists():
        pytest.skip(f"colcon is not installed next to {sys.executable}")
    workspace = tmp_path_factory.mktemp("colcon_ws")
    result = subprocess.run(
        [str(COLCON), "--log-base", str(workspace / "log"), "build", "--paths", str(REPO),
         "--build-base", str(workspace / "build"), "--install-base", str(workspace / "install")],
        cwd=workspace, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    yield workspace / "install" / "humanoid_balance"
    shutil.rmtree(workspace, ignore_errors=True)


def test_every_console_script_is_an_executable_in_lib(install_prefix):
    names = console_scripts()
    assert "humanoid-balance" in names
    for name in names:
        executable = install_prefix / "lib" / "humanoid_balance" / name
        assert executable.is_file(), f"{executable} missing"
        assert os.access(executable, os.X_OK), f"{executable} not executable"


def test_data_folders_installed_under_share(install_prefix):
    share = install_prefix / "share" / "humanoid_balance"
    assert (share / "package.xml").is_file()
    for folder, pattern in [("launch", "*.launch.py"), ("config", "*.yaml"), ("urdf", "*.urdf"),
                            ("rviz", "*.rviz")]:
        assert (share / folder).is_dir(), f"share/humanoid_balance/{folder} missing"
        for source in (REPO / folder).glob(pattern):
            assert (share / folder / source.name).is_file(), f"{folder}/{source.name} not installed"


def test_ament_index_marker(install_prefix):
    marker = install_prefix / "share" / "ament_index" / "resource_index" / "packages" / "humanoid_balance"
    assert marker.is_file()


def test_installed_command_line_tool_runs(install_prefix):
    site_packages = next((install_prefix / "lib").glob("python3*/site-packages"))
    env = dict(os.environ, PYTHONPATH=f"{site_packages}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    result = subprocess.run([sys.executable, str(install_prefix / "lib" / "humanoid_balance" / "humanoid-balance"),
                             "--help"], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "usage: humanoid-balance" in result.stdout
