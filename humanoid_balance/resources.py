"""Locate the robot and parameter files shipped with the package (source tree, pip install or ament share)."""
import sysconfig
from pathlib import Path

__all__ = ["DEFAULT_ROBOT", "TALOS_URDF", "robot_files", "config_file"]

DEFAULT_ROBOT = "kangaroo_like"
SOURCE_ROOT = Path(__file__).resolve().parents[1]
TALOS_URDF = (Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots/talos_data"
              / "robots/talos_reduced.urdf")  # a reference robot: pip install example-robot-data


def _ament_share():
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:
        return None
    try:
        return Path(get_package_share_directory("humanoid_balance"))
    except (PackageNotFoundError, LookupError, OSError):  # OSError: AMENT_PREFIX_PATH unset
        return None


def _shipped(relative):
    """The first existing ``relative`` path under the source tree, then the ament share; None if neither."""
    for root in (SOURCE_ROOT, None):
        root = root or _ament_share()
        if root is not None and (root / relative).is_file():
            return root / relative
    return None


def robot_files(name=DEFAULT_ROBOT):
    """(URDF, loop-closure YAML or None) of a robot shipped with the package."""
    urdf = _shipped(Path("urdf") / f"{name}.urdf")
    if urdf is None:
        raise FileNotFoundError(f"robot '{name}' is not shipped with humanoid_balance (looked in "
                                f"{SOURCE_ROOT}/urdf and the ament index)")
    loops = urdf.parents[1] / "config" / f"{name}.loops.yaml"
    return urdf, loops if loops.is_file() else None


def config_file(name):
    """A parameter file of config/ (e.g. ``state_estimator.yaml``), as the launch files use it."""
    path = _shipped(Path("config") / name)
    if path is None:
        raise FileNotFoundError(f"config/{name} is not shipped with humanoid_balance (looked in "
                                f"{SOURCE_ROOT}/config and the ament index)")
    return path
