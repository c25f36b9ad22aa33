"""A push at 90 % of what the feet physically allow, through the nodes, on position drives (issue 52): the demo's
closed loop (the plant in lockstep, the four nodes in one process) on kangaroo_like (closed-chain legs) and TALOS
(serial legs, example-robot-data) in kinematic mode, recovery steps off; one push of 0.1 s at the pelvis of 90 % of
the linear inverted pendulum's bound for the feet alone (the capture point reaching the soles' edge,
control.capture_point.capturable_velocity, computed here from the robot as it stands). Judged on the plant's ground
truth: no fall, the CoM standing still again within 3 s, and every loaded sole flat, tilted at most 2° from the floor
throughout. Forwards no sole lifts (without the foot damping and levelling both soles rolled onto their toes at
68-84 % of the bound; levelled beyond 1.25° of tilt, TALOS's toes tipped 2.02°; beyond 0.75° while a CoP is near an
edge, kinematic.edge_tilt_deadband, 1.52°). Sideways the inner sole must unload, and lifts (at most two lift-offs):
the robot rocks on its outer sole, which levelling beyond 1.25° left at 2.1° (kangaroo_like), and the foot in the air,
turned with the base, must come down flat (turned back level at swing_gain, 20 /s, kangaroo_like's landed on its edge
at 2.6°; at the kinematic mode's RETURN_TURN_RATE, 100 /s at 500 Hz, and with the edge deadband, the largest tilt is
1.77°, TALOS's 1.70°, was 2.24°).
On torque drives (momentum mode) kangaroo_like holds the same forward and backward pushes on soles within the issue's
2°: a sole sharing the load that tips has the CoP bound of its lower edge moved in (momentum.tipping_cop_gain), and
without it they rolled 3.0° and 5.5°; TALOS's still roll 2.3° and 3.5° (9.8° backwards without it)."""
import math

import pytest

from humanoid_balance.bench.recovery_steps import MAX_STEPS, lipm_bounds, pushed

pytestmark = pytest.mark.dds
FRACTION, MAX_TILT = 0.9, math.radians(2.0)


@pytest.mark.parametrize("robot", ["kangaroo_like", "talos"])
def test_a_forward_push_at_ninety_percent_of_the_feet_bound_is_held_on_flat_soles(robot):
    impulse = FRACTION * lipm_bounds(robot)["forward"][0]
    fell, push = pushed(impulse, "kinematic", "forward", False, robot)
    assert not fell, f"{robot} fell after {impulse:.1f} N·s"
    assert push["feet lifted"] == 0
    assert push["standing still after [s]"] <= 3.0
    assert push["largest sole tilt [rad]"] <= MAX_TILT, \
        f"a sole tilted {math.degrees(push['largest sole tilt [rad]']):.2f}° under {impulse:.1f} N·s"


@pytest.mark.parametrize("robot", ["kangaroo_like", "talos"])
def test_a_sideways_push_at_ninety_percent_of_the_feet_bound_is_held_on_flat_soles(robot):
    impulse = FRACTION * lipm_bounds(robot)["lateral"][0]
    fell, push = pushed(impulse, "kinematic", "lateral", False, robot)
    assert not fell, f"{robot} fell after {impulse:.1f} N·s"
    assert push["standing still after [s]"] <= 3.0
    assert push["feet lifted"] <= MAX_STEPS
    assert push["largest sole tilt [rad]"] <= MAX_TILT, \
        f"a sole tilted {math.degrees(push['largest sole tilt [rad]']):.2f}° under {impulse:.1f} N·s"


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_on_torque_drives_a_push_at_ninety_percent_of_the_feet_bound_is_held_on_flat_soles(direction):
    impulse = FRACTION * lipm_bounds("kangaroo_like")[direction][0]
    fell, push = pushed(impulse, "momentum", direction, False, "kangaroo_like")
    assert not fell, f"fell after {impulse:.1f} N·s {direction}"
    assert push["feet lifted"] == 0
    assert push["standing still after [s]"] <= 3.0
    assert push["largest sole tilt [rad]"] <= MAX_TILT, \
        f"a sole tilted {math.degrees(push['largest sole tilt [rad]']):.2f}° under {impulse:.1f} N·s {direction}"


def test_on_torque_drives_a_sole_rolled_by_a_sideways_push_is_let_down_flat():
    """TALOS pushed sideways at 90 % of its feet's bound in momentum mode rocks onto its outer sole, whose joint
    impedance levelled the body on it and pressed it further onto its edge: it rolled 6.9°. The ankle now yields as
    far as the sole rolled (momentum.sole_level_gain), beyond 0.75° while the other foot is off the floor or nearly
    (momentum.rolling_load_share): 1.8°."""
    impulse = FRACTION * lipm_bounds("talos")["lateral"][0]
    fell, push = pushed(impulse, "momentum", "lateral", False, "talos")
    assert not fell, f"fell after {impulse:.1f} N·s sideways"
    assert push["feet lifted"] <= MAX_STEPS
    assert push["standing still after [s]"] <= 3.0
    assert push["largest sole tilt [rad]"] <= MAX_TILT, \
        f"a sole tilted {math.degrees(push['largest sole tilt [rad]']):.2f}° under {impulse:.1f} N·s sideways"
