"""docs/parameters.md is what the nodes declare now: regenerated from the nodes, built in this process, it reads the
same (humanoid_balance.nodes.reference)."""
from pathlib import Path

import pytest

from humanoid_balance.nodes.reference import write_reference

pytestmark = pytest.mark.dds  # rclpy nodes (in this process, on their own context)
PAGE = Path(__file__).resolve().parents[2] / "docs" / "parameters.md"


def test_the_parameter_reference_is_current(tmp_path, ros_domain_id):
    generated = tmp_path / "parameters.md"
    write_reference(generated, ros_domain_id)
    assert PAGE.exists() and PAGE.read_text() == generated.read_text(), (
        "docs/parameters.md is not what the nodes declare: regenerate it with "
        "`humanoid-balance docs` from the repository's root")
