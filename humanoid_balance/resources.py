"""Locate what the package ships (robot and parameter files, executables) and the third-party reference robots,
whether it runs from the source tree, a pip install or a colcon install space (through the ament index)."""
import difflib
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

__all__ = ["DEFAULT_ROBOT", "TALOS_URDF", "robot_files", "robot_config_file", "config_file", "executable",
           "example_robot", "example_robot_models", "model_file", "find_file", "resolve_uri"]

PACKAGE = "humanoid_balance"
DEFAULT_ROBOT = "kangaroo_like"
SOURCE_ROOT = Path(__file__).resolve().parents[1]


def _ament_prefix(package):
    """Install prefix of ``package`` in the ament index (AMENT_PREFIX_PATH), or None."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_prefix
    except ImportError:
        return None
    try:
        return Path(get_package_prefix(package))
    except (PackageNotFoundError, LookupError, OSError):  # OSError: AMENT_PREFIX_PATH unset
        return None


def _shipped(relative):
    """The first existing ``relative`` path under the source tree, then the ament share; None if neither."""
    if (SOURCE_ROOT / relative).is_file():
        return SOURCE_ROOT / relative
    prefix = _ament_prefix(PACKAGE)
    if prefix is not None and (prefix / "share" / PACKAGE / relative).is_file():
        return prefix / "share" / PACKAGE / relative
    return None


def robot_files(name=DEFAULT_ROBOT):
    """(URDF, loop-closure YAML or None) of a robot shipped with the package."""
    urdf = _shipped(Path("urdf") / f"{name}.urdf")
    if urdf is None:
        raise FileNotFoundError(f"robot '{name}' is not shipped with humanoid_balance (looked in "
                                f"{SOURCE_ROOT}/urdf and the ament index)")
    loops = urdf.parents[1] / "config" / f"{name}.loops.yaml"
    return urdf, loops if loops.is_file() else None


def find_file(uri, relative_to=None, package_dirs=(), variables=("ROS_PACKAGE_PATH",)):
    """The file a URI names, resolved, or None if it is nowhere.

    ``package://<package>/<path>`` and ``model://<model>/<path>``: looked up in ``package_dirs``, then (package://)
    this package's own files, the package's ament share and its share in a pip-installed cmeel prefix (how
    example-robot-data and pinocchio ship as wheels), then the folders the environment ``variables`` list;
    in a folder, as ``<folder>/<package>/<path>`` or ``<folder>/<path>``. ``file://`` and plain paths: absolute,
    or relative to the folder of the file ``relative_to``.
    """
    text = str(uri).strip()
    if text.startswith("file://"):
        text = text[len("file://"):]
    scheme = next((prefix for prefix in ("package://", "model://") if text.startswith(prefix)), None)
    if scheme is None:
        path = Path(text) if Path(text).is_absolute() or relative_to is None else Path(relative_to).parent / text
        return path.resolve() if path.is_file() else None
    relative = text[len(scheme):]
    package, _, inner = relative.partition("/")
    environment = [entry for variable in variables for entry in os.environ.get(variable, "").split(os.pathsep)
                   if entry]
    installed = []
    if scheme == "package://":
        prefix = _ament_prefix(package)
        installed = [_shipped(inner) if package == PACKAGE else None,
                     prefix / "share" / package / inner if prefix is not None else None]
        installed += [Path(entry) / "cmeel.prefix" / "share" / package / inner for entry in sys.path if entry]
    candidates = ([Path(folder) / name for folder in package_dirs for name in (relative, inner)]
                  + [path for path in installed if path is not None]
                  + [Path(folder) / name for folder in environment for name in (relative, inner)])
    return next((path.resolve() for path in candidates if path.is_file()), None)


def resolve_uri(path):
    """A file path from a parameter, with ``package://`` resolved by :func:`find_file`; other paths, and a
    package:// that cannot be found, unchanged (the error then names it as given)."""
    text = str(path)
    found = find_file(text) if text.startswith("package://") else None
    return str(found) if found is not None else text


def robot_config_file(robot=DEFAULT_ROBOT):
    """The robot configuration of ``robot``: a bundled robot's name (``config/robots/<name>.yaml``), a directory
    written by ``humanoid-balance init`` (its ``robot.yaml``) or a configuration file."""
    path = Path(robot)
    if path.is_dir():
        return path / "robot.yaml"
    if path.is_file():
        return path
    shipped = _shipped(Path("config") / "robots" / f"{robot}.yaml")
    if shipped is None:
        raise FileNotFoundError(f"robot '{robot}': neither a robot configuration (a directory written by "
                                "humanoid-balance init, or its robot.yaml) nor a bundled robot "
                                f"({', '.join(bundled_robots())})")
    return shipped


def bundled_robots():
    """Names of the robots shipped with the package."""
    folder = _shipped(Path("config") / "robots" / f"{DEFAULT_ROBOT}.yaml").parent
    return sorted(path.stem for path in folder.glob("*.yaml"))


def config_file(name):
    """A parameter file of config/ (e.g. ``state_estimator.yaml``), as the launch files use it."""
    path = _shipped(Path("config") / name)
    if path is None:
        raise FileNotFoundError(f"config/{name} is not shipped with humanoid_balance (looked in "
                                f"{SOURCE_ROOT}/config and the ament index)")
    return path


def executable(name):
    """One of the package's executables (a node, ``humanoid-balance``): next to the running interpreter (pip, a
    virtual environment), else in the colcon install space, ``<prefix>/lib/humanoid_balance/``."""
    beside = shutil.which(name, path=str(Path(sys.executable).parent))
    if beside is not None:
        return Path(beside)
    prefix = _ament_prefix(PACKAGE)
    if prefix is not None and (prefix / "lib" / PACKAGE / name).is_file():
        return prefix / "lib" / PACKAGE / name
    raise FileNotFoundError(f"{name}: not installed next to {sys.executable} nor under lib/{PACKAGE} of the ament "
                            "index (pip install the package, or source install/setup.bash)")


def example_robot(relative):
    """A file of example-robot-data's ``robots/`` folder (e.g. ``talos_data/robots/talos_reduced.urdf``), from the
    pip wheel (``pip install example-robot-data``, a cmeel prefix in site-packages) or an ament install; None if
    it is not installed."""
    return find_file(f"package://example-robot-data/robots/{relative}", variables=())


def example_robot_models(suffix=".urdf"):
    """example-robot-data's models whose file name ends in ``suffix``, by name: the file name without ``suffix``
    (``talos_reduced``), or its path under ``robots/`` without it where several files share a name; {} when the
    package is not installed."""
    package = find_file("package://example-robot-data/package.xml", variables=())
    folder = package.parent / "robots" if package is not None else None
    if folder is None or not folder.is_dir():
        return {}
    files = sorted(folder.rglob(f"*{suffix}"))
    names = Counter(path.name for path in files)
    return {(path.name if names[path.name] == 1 else path.relative_to(folder).as_posix())[:-len(suffix)]: path
            for path in files}


def model_file(path, suffix=".urdf"):
    """The model file ``path`` names: the file itself, else the example-robot-data model of that name, with or
    without ``suffix`` (``talos_reduced.urdf`` or ``talos_reduced``: :func:`example_robot_models`).

    Raises:
        FileNotFoundError: neither, in one line naming the closest models and listing them all.
    """
    path = Path(path)
    if path.is_file():
        return path
    models = example_robot_models(suffix)
    text = path.as_posix()
    name = text[:-len(suffix)] if text.endswith(suffix) else text
    if name in models:
        return models[name]
    if not models:
        raise FileNotFoundError(f"{path}: no such file (example-robot-data, whose models can be named instead, is "
                                "not installed: pip install example-robot-data)")
    close = (sorted(model for model in models if model.startswith(name))[:6]
             or difflib.get_close_matches(name, list(models), n=3))
    raise FileNotFoundError(f"{path}: no such file, nor a model of example-robot-data"
                            + (f" (did you mean {', '.join(close)}?)" if close else "")
                            + f"; its {suffix.lstrip('.').upper()} models: {', '.join(sorted(models, key=str.lower))}")


TALOS_URDF = example_robot("talos_data/robots/talos_reduced.urdf")
"""PAL Robotics' TALOS (reduced), a serial reference robot; None without example-robot-data."""
