"""Session-wide test setup: an isolated DDS domain per test session, and each test marked with its tier.

Every process started by the tests inherits these variables, so parallel sessions on one machine
(two CI runs, a developer running tests twice) never see each other's topics.

The tier is the folder a test sits in (test/README.md): ``pytest -m unit`` runs the fast tier alone.
"""
import os
import sys
from pathlib import Path

import pytest

# ROS_DOMAIN_ID must stay within 0..101 for the default Fast DDS port mapping; 0 is the usual default
# that interactive users run on, so it is avoided.
DOMAIN_ID = 1 + os.getpid() % 100
os.environ["ROS_DOMAIN_ID"] = str(DOMAIN_ID)
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")

TEST_DIR = Path(__file__).resolve().parent
TIERS = ("unit", "sim", "ros", "launch_tests")  # the folders under test/, each its marker (pytest.ini)


def pytest_collection_modifyitems(items):
    """Mark each test with the tier of its folder under test/."""
    for item in items:
        path = Path(item.path).resolve()
        if TEST_DIR in path.parents and path.relative_to(TEST_DIR).parts[0] in TIERS:
            item.add_marker(path.relative_to(TEST_DIR).parts[0])


@pytest.fixture(scope="session")
def ros_domain_id():
    """The DDS domain of this test session."""
    return DOMAIN_ID


@pytest.fixture(scope="session")
def install_space(tmp_path_factory):
    """The package built by colcon into a temporary workspace, once per session: an install_space.Workspace."""
    from support.install_space import COLCON, build

    if not COLCON.exists():
        pytest.skip(f"colcon is not installed next to {sys.executable}")
    workspace, output = build(tmp_path_factory.mktemp("colcon_ws"))
    assert workspace is not None, output
    return workspace


@pytest.fixture(scope="session")
def kangaroo():
    """kangaroo_like on a fixed base, loaded once per session: (RobotModel, ClosedChain). Shared: a test must not
    change it (a test that needs to, loads its own with support.model_fixtures.load)."""
    from support.model_fixtures import load

    return load("kangaroo_like")


@pytest.fixture(scope="session")
def kangaroo_floating():
    """kangaroo_like on a floating base, loaded once per session: (RobotModel, ClosedChain). Shared, as kangaroo."""
    from support.model_fixtures import load

    return load("kangaroo_like", floating_base=True)
