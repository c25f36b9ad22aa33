"""Locate the robot and parameter files shipped with the package (source tree, pip install or ament share)."""
from pathlib import Path

__all__ = ["DEFAULT_ROBOT", "robot_files", "config_file"]

DEFAULT_ROBOT = "kangaroo_like"
SOURCE_ROOT = Path(__file__).resolve().parents[1]


def _ament_share():
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:
        return None
    try:
        return Path(get_package_share_directory("humanoid_balance"))
    except (PackageNotFoundError, LookupError, OSError):  # OSError: AMENT_PREFIX_PATH unset
        return None


def robot_files(name=DEFAULT_ROBOT):
    """(URDF, loop-closure YAML or None) of a robot shipped with the package."""
    for root in (SOURCE_ROOT, None):
        root = root or _ament_share()
        if root is not None and (root / "urdf" / f"{name}.urdf").is_file():
            loops = root / "config" / f"{name}.loops.yaml"
            return root / "urdf" / f"{name}.urdf", loops if loops.is_file() else None
    raise FileNotFoundError(f"robot '{name}' is not shipped with humanoid_balance (looked in {SOURCE_ROOT}/urdf "
                            "and the ament index)")


def config_file(name):
    """A parameter file of config/ (e.g. ``state_estimator.yaml``), as the launch files use it."""
    for root in (SOURCE_ROOT, None):
        root = root or _ament_share()
        if root is not None and (root / "config" / name).is_file():
            return root / "config" / name
    raise FileNotFoundError(f"config/{name} is not shipped with humanoid_balance (looked in {SOURCE_ROOT}/config "
                            "and the ament index)")
