"""The package as colcon installs it, in a temporary workspace, and the environment a user has there.

What users run is ``install/``, not this repository's editable install. The environment is the one a ROS 2 machine
gives after ``source /opt/ros/<distro>/setup.bash`` and ``source install/setup.bash``: without a sourced ROS 2, the
Python environment plays ``/opt/ros/<distro>`` (the underlay of ``AMENT_PREFIX_PATH``, where the ROS 2 wheels put
their ament index); the install space is prepended to it. A ``sitecustomize`` masks the editable install (its import finder and the source
tree on ``sys.path``), so a module or data file that only the source tree has fails here as it would on a robot.
"""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COLCON = Path(sys.executable).with_name("colcon")
MASK = f"""\
import sys
sys.meta_path[:] = [finder for finder in sys.meta_path if "__editable__" not in getattr(finder, "__module__", "")]
sys.path[:] = [entry for entry in sys.path if entry.rstrip("/") != {str(REPO)!r}]
"""


class Workspace:
    """A colcon install space and the environment that sourcing it gives, editable install masked."""

    def __init__(self, root):
        self.root = root
        self.install = root / "install"
        self.prefix = self.install / "humanoid_balance"
        self.executables = self.prefix / "lib" / "humanoid_balance"
        self.share = self.prefix / "share" / "humanoid_balance"
        mask = root / "mask"
        mask.mkdir(exist_ok=True)
        (mask / "sitecustomize.py").write_text(MASK)
        underlay = {**os.environ,  # /opt/ros/<distro> where it is sourced, else the environment's ROS 2 wheels
                    "AMENT_PREFIX_PATH": os.environ.get("AMENT_PREFIX_PATH") or sys.prefix}
        sourced = subprocess.run(["bash", "-c", f"source {self.install / 'setup.bash'} && env -0"],
                                 capture_output=True, text=True, check=True, cwd=root, timeout=60, env=underlay)
        self.environment = dict(line.split("=", 1) for line in sourced.stdout.split("\0") if "=" in line)
        self.environment["PYTHONPATH"] = f"{mask}{os.pathsep}{self.environment['PYTHONPATH']}"
        self.environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{self.environment['PATH']}"  # ros2
        self.environment["HOME"] = str(root)  # no calibration file or ROS log of the developer's

    def python(self, code):
        """Run ``code`` with this install's environment, from outside the repository."""
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=self.root,
                              env=self.environment, timeout=300)

    def start(self, name):
        return subprocess.Popen([str(self.executables / name)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, cwd=self.root, env=self.environment)


def build(root):
    """colcon build of this repository into the workspace ``root``; (its Workspace, or None, colcon's output)."""
    result = subprocess.run(
        [str(COLCON), "--log-base", str(root / "log"), "build", "--paths", str(REPO),
         "--build-base", str(root / "build"), "--install-base", str(root / "install")],
        cwd=root, capture_output=True, text=True, timeout=300)
    return (Workspace(root) if result.returncode == 0 else None), result.stdout + result.stderr
