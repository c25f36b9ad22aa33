"""The contract every balance mode keeps, for each mode of the registry (control.balancer.BALANCE_MODES), so that a
new mode is covered by registering it: its controller names it, its gains are described tunables that the node
declares as <mode>.<field> parameters and docs/parameters.md lists, the deployment knows its drives, and in the closed
loop (MuJoCo) on the drives it needs it keeps kangaroo_like standing and hands over to and from another mode."""
from dataclasses import fields, is_dataclass, replace
from pathlib import Path

import numpy as np
import pytest

from humanoid_balance.bench.closed_loop import ClosedLoop, robot_config
from humanoid_balance.control.balancer import (BALANCE_MODES, MODES, STEPPING_MODES, BalancerConfig, configured,
                                               parameters)
from humanoid_balance.deployment import PLANT, mode_parameters
from humanoid_balance.mapping import COMMAND_FIELDS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "parameters.md"
STANDING = 1.0      # [s] of simulated time
BASE_DRIFT = 0.02   # [m] the base stays this close to where it started


@pytest.mark.parametrize("mode", MODES)
def test_a_mode_names_itself_and_describes_its_gains(mode):
    controller = BALANCE_MODES[mode].controller
    assert controller.mode == mode
    gains = controller.Gains
    assert is_dataclass(gains) and gains.__dataclass_params__.frozen, f"{mode}: Gains must be a frozen dataclass"
    for field in fields(gains):
        assert field.metadata.get("description"), f"{mode}.{field.name} has no description (control.tunables.tunable)"
        assert f"{mode}.{field.name}" in parameters(), f"the node does not declare {mode}.{field.name}"
        assert f"| `{mode}.{field.name}` |" in PAGE.read_text(), (
            f"docs/parameters.md does not list {mode}.{field.name}: regenerate it with `humanoid-balance docs`")
    assert isinstance(controller.steps, bool)


@pytest.mark.parametrize("mode", MODES)
def test_a_mode_is_deployed_on_the_drives_it_needs(mode):
    profile, table = BALANCE_MODES[mode], mode_parameters(mode)
    assert table["centroidal_balancer"]["mode"] == mode
    assert profile.command_interface in COMMAND_FIELDS
    assert table["loop_closure_mapper"]["command_interface"] == table[PLANT]["command_interface"] \
        == profile.command_interface
    assert profile.impedance == (profile.command_interface == "impedance")


@pytest.mark.parametrize("mode", MODES)
def test_the_node_parameters_set_a_modes_gains(mode):
    """Each <mode>.<field> parameter reaches that mode's gains, unset ones their defaults: the config the node builds
    from its parameters (control.balancer.configured), read back from a controller of the mode's class."""
    defaults = {name: tunable.parameter_default for name, tunable in parameters().items()}
    first = fields(BALANCE_MODES[mode].controller.Gains)[0]
    name = f"{mode}.{first.name}"
    changed = [2.0 * x for x in first.default] if isinstance(first.default, tuple) else 2.0 * first.default + 1.0
    config = configured({**defaults, name: changed}.get, mode=mode)
    expected = tuple(changed) if isinstance(first.default, tuple) else type(first.default)(changed)
    assert getattr(config.gains[mode], first.name) == expected
    others = {m: config.gains[m] for m in MODES if m != mode}
    assert others == {m: BALANCE_MODES[m].controller.Gains() for m in others}
    unchanged = configured(defaults.get, mode=mode)
    assert replace(unchanged, gains={}, zmp_com=None) == replace(BalancerConfig(mode=mode), gains={}, zmp_com=None)
    if isinstance(first.default, tuple):
        with pytest.raises(ValueError, match=f"parameter '{name}' must have {len(first.default)} values"):
            configured({**defaults, name: [1.0]}.get, mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_a_mode_keeps_the_robot_standing_and_hands_over(mode):
    """kangaroo_like in the closed loop, the drives as the mode needs: the base stays within BASE_DRIFT of where it
    started for STANDING s; then the mode hands over to another and takes it back (BalanceStage.change_mode, as the
    node's mode parameter does), each commanding at once."""
    loop = ClosedLoop(robot_config("kangaroo_like"), mode=mode)
    assert loop.impedance == BALANCE_MODES[mode].impedance
    loop.tick()
    start = loop.sim.ground_truth().base_position.copy()
    drift = 0.0
    while loop.sim.time < STANDING:
        loop.tick()
        drift = max(drift, float(np.linalg.norm(loop.sim.ground_truth().base_position - start)))
    assert drift < BASE_DRIFT, f"{mode}: the base moved {drift * 1e3:.1f} mm standing"
    stage = loop.loop.balance
    other = next(m for m in MODES if m != mode)
    for next_mode in (other, mode):
        stage.change_mode(next_mode)
        assert stage.controller.mode == next_mode and type(stage.controller) is BALANCE_MODES[next_mode].controller
        loop.tick()
        assert np.isfinite(loop.signals.command.position).all()


def test_the_stepping_modes_are_the_modes_that_step():
    assert STEPPING_MODES == tuple(m for m in MODES if BALANCE_MODES[m].controller.steps)
    assert STEPPING_MODES and set(STEPPING_MODES) <= set(MODES)
