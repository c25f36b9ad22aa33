"""Loader errors: each bad file kept in test/data/bad_loops names the file, the entry and the offender."""
import pytest

from humanoid_balance.model import ModelFileError, load_loop_closures, load_robot
from support.model_fixtures import DATA, ROBOT_FILES, load

URDF = DATA / "crank_slider.urdf"
BAD = DATA / "bad_loops"

CASES = [
    ("unknown_frame", "loops[0] 'crank'", "frame_a 'crank_pni' is not a frame of the URDF; did you mean ['crank_pin'"),
    ("unknown_joint", "actuated", "a name 'actuatr' is not a joint of the URDF; did you mean ['actuator']"),
    ("duplicate_loop", "loops[1] 'crank'", "duplicate loop name (first used by loops[0])"),
    ("bad_axis", "loops[0] 'crank'", "axis 'w' is not one of ['x', 'y', 'z', 'rx', 'ry', 'rz']"),
    ("axes_count", "loops", "the loops constrain 1 axes but the robot has 2 passive joints"),
    ("outputs_length", "outputs", "2 outputs for 1 actuated joints"),
    ("output_not_joint", "outputs", "an output 'crank_pin' is not a joint of the URDF"),
    ("cannot_close", "reference", "the loops cannot be closed from the reference configuration"),
    ("wrong_version", "humanoid_balance_loops", "format version must be 1, got 7"),
    ("bad_actuator_kind", "actuators.actuator", "kind 'harmonic_drive' is not one of ['ballscrew', 'direct']"),
    ("not_yaml", None, "is not valid YAML"),
]


@pytest.mark.parametrize("name, entry, detail", CASES, ids=[case[0] for case in CASES])
def test_bad_loop_file_is_reported_with_file_entry_and_offender(name, entry, detail):
    path = BAD / f"{name}.loops.yaml"
    with pytest.raises(ModelFileError) as raised:
        load_robot(URDF, path)
    error = raised.value
    assert error.path == str(path)
    assert error.entry == entry
    assert detail in error.detail
    assert str(error).startswith(f"{path}: ")


def test_unclosable_reference_prints_the_residual():
    with pytest.raises(ModelFileError, match=r"initial residual ‖e_l‖ = \d\.\d{3}e[-+]\d+, worst loop 'crank'"):
        load_robot(URDF, BAD / "cannot_close.loops.yaml")


def test_missing_urdf_names_the_file(tmp_path):
    missing = tmp_path / "nothing.urdf"
    with pytest.raises(ModelFileError, match=f"{missing}: no such file"):
        load_robot(missing)


def test_valid_files_load():
    for name in ROBOT_FILES:
        robot, _ = load(name)
        assert len(robot.actuated_names) == len(robot.output_names)
    spec = load_loop_closures(ROBOT_FILES["crank_slider"][1])
    assert spec.actuators["actuator"].kind == "ballscrew"
    assert spec.constrained_axes_count == 2


def test_passive_joint_outside_every_loop_is_named():
    with pytest.raises(ModelFileError) as raised:
        load_robot(DATA / "slider_turntable.urdf", BAD / "loose_passive.loops.yaml")
    assert raised.value.entry == "loops"
    assert "passive joints ['spin'] belong to no loop" in raised.value.detail
