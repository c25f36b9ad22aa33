"""ament_python build of humanoid_balance (also installable with pip on a bare machine)."""
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "humanoid_balance"


def share(folder, pattern="*"):
    """Install every file matching ``folder/pattern`` under ``share/humanoid_balance/folder``."""
    return (f"share/{PACKAGE}/{folder}", glob(f"{folder}/{pattern}"))


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        share("launch", "*.launch.py"),
        share("config", "*.yaml"),
        share("config", "*.xml"),
        share("config/robots", "*.yaml"),
        share("urdf", "*.urdf"),
        share("rviz", "*.rviz"),
        share("rviz", "*.foxglove.json"),
    ],
    install_requires=["setuptools"],
    extras_require={"test": ["pytest"]},  # colcon test runs pytest (not unittest) because of this
    zip_safe=True,
    maintainer="humanoid_balance developers",
    maintainer_email="humanoid-balance@example.com",
    description="Balance control for humanoids with serial-parallel hybrid legs",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "humanoid-balance = humanoid_balance.cli:main",
            "state_estimator = humanoid_balance.nodes:state_estimator",
            "contact_estimator = humanoid_balance.nodes:contact_estimator",
            "centroidal_balancer = humanoid_balance.nodes:centroidal_balancer",
            "loop_closure_mapper = humanoid_balance.nodes:loop_closure_mapper",
            "mujoco_sim = humanoid_balance.nodes:mujoco_sim",
            "balance_stack = humanoid_balance.nodes:balance_stack",
        ],
    },
)
