"""Closing the loops far from the reference (model/continuation.py) on a planar four-bar against its closed-form
solution: a full-rotation (Grashof) crank-rocker, where Newton from the reference fails or lands on the other
assembly branch, and a non-Grashof linkage driven past its dead point, which must be refused."""
import io

import numpy as np
import pytest

from humanoid_balance.cli import check_model
from humanoid_balance.estimation import RobotStateEstimator, calibrate_actuator_offsets
from humanoid_balance.mapping import ActuatorMap
from humanoid_balance.model import ClosedChain, ClosureError, SingularConfigurationError, close_loops, load_robot
from support.model_fixtures import closed_configuration, load

CRANK, COUPLER, ROCKER, GROUND = 0.05, 0.20, 0.12, 0.18  # [m]; s + l = 0.25 < p + q = 0.30, crank shortest

LINK = ('<link name="{}"><inertial><mass value="0.1"/>'
        '<inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>')
JOINT = ('<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/><origin xyz="{x} 0 0"/>'
         '<axis xyz="0 0 1"/><limit lower="{lower}" upper="{upper}" effort="10" velocity="10"/></joint>')


def four_bar_angles(theta, assembly=1.0, a=CRANK, b=COUPLER, c=ROCKER, d=GROUND):
    """Closed form: rocker angle φ and coupler joint angle (relative to the crank) [rad] at crank angle θ [rad];
    ``assembly`` ±1 picks the branch. Crank pivot at the origin, rocker pivot at (d, 0): with P = D − A,
    |P + c e(φ)| = b gives P·e(φ) = (b² − c² − |P|²) / 2c."""
    px, py = d - a * np.cos(theta), -a * np.sin(theta)
    p = np.hypot(px, py)
    phi = np.arctan2(py, px) + assembly * np.arccos((b * b - c * c - p * p) / (2 * c * p))
    coupler = np.arctan2(c * np.sin(phi) - a * np.sin(theta), d + c * np.cos(phi) - a * np.cos(theta))
    return phi, coupler - theta


def write_four_bar(directory, crank_limits, theta0=0.0, assembly=1.0, a=CRANK, b=COUPLER, c=ROCKER, d=GROUND):
    """URDF + loop YAML of the four-bar, cut at the coupler-rocker pin; the crank is actuated, the reference
    assembled at crank angle ``theta0`` [rad]. Returns the two paths."""
    phi, coupler = four_bar_angles(theta0, assembly, a, b, c, d)
    links = [LINK.format(name) for name in ("base", "crank", "crank_pin", "coupler", "coupler_end", "rocker",
                                            "rocker_pin")]
    free = dict(lower=-10, upper=10)
    joints = [JOINT.format(name="crank_joint", kind="revolute", parent="base", child="crank", x=0,
                           lower=crank_limits[0], upper=crank_limits[1]),
              JOINT.format(name="crank_tip", kind="fixed", parent="crank", child="crank_pin", x=a, **free),
              JOINT.format(name="coupler_joint", kind="revolute", parent="crank_pin", child="coupler", x=0, **free),
              JOINT.format(name="coupler_tip", kind="fixed", parent="coupler", child="coupler_end", x=b, **free),
              JOINT.format(name="rocker_joint", kind="revolute", parent="base", child="rocker", x=d, **free),
              JOINT.format(name="rocker_tip", kind="fixed", parent="rocker", child="rocker_pin", x=c, **free)]
    urdf, loops = directory / "four_bar.urdf", directory / "four_bar.loops.yaml"
    urdf.write_text('<?xml version="1.0"?>\n<robot name="four_bar">\n' + "\n".join(links + joints) + "\n</robot>\n")
    loops.write_text("humanoid_balance_loops: 1\n"
                     "loops:\n"
                     "  - {name: four_bar, frame_a: rocker_pin, frame_b: coupler_end, axes: [x, y]}\n"
                     "actuated: [crank_joint]\n"
                     "outputs: [rocker_joint]\n"
                     "measured_passive: [rocker_joint]\n"
                     f"reference: {{crank_joint: {theta0!r}, coupler_joint: {float(coupler)!r}, "
                     f"rocker_joint: {float(phi)!r}}}\n")
    return urdf, loops


def assert_on_branch(robot, q, theta, assembly):
    """q is the closed-form configuration at crank angle θ on the branch continuous with the reference."""
    phi, coupler = four_bar_angles(theta, assembly)
    assert q[robot.joint_q_index("crank_joint")] == theta
    assert q[robot.joint_q_index("rocker_joint")] == pytest.approx(phi, abs=1e-9)  # continuous: no 2π to forgive
    wrapped = np.angle(np.exp(1j * (q[robot.joint_q_index("coupler_joint")] - coupler)))
    assert abs(wrapped) < 1e-9


def newton_from_reference_is_right(robot, chain, theta, assembly):
    q = robot.reference_q.copy()
    q[robot.actuated_q] = theta
    try:
        assert_on_branch(robot, chain.solve_passive(q).q, theta, assembly)
    except (ClosureError, SingularConfigurationError, AssertionError):
        return False
    return True


@pytest.fixture(scope="module", params=[1.0, -1.0], ids=["open", "crossed"])
def crank_rocker(request, tmp_path_factory):
    assembly = request.param
    files = write_four_bar(tmp_path_factory.mktemp("four_bar"), (-5.0, 5.0), assembly=assembly)
    robot = load_robot(*files)
    return robot, ClosedChain(robot), assembly


def test_full_rotation_crank_closes_far_from_the_reference_where_newton_fails(crank_rocker):
    """150°, 180°, 270° of crank from the reference (turning the other way on the mirrored assembly, where Newton
    fails at the mirrored angles): plain Newton from the reference stalls or converges to the other assembly;
    close_loops gives the closed form on the reference's branch."""
    robot, chain, assembly = crank_rocker
    for degrees in (150.0, 180.0, 270.0):
        theta = assembly * np.radians(degrees)
        assert not newton_from_reference_is_right(robot, chain, theta, assembly), degrees
        solution = close_loops(chain, [theta])
        assert_on_branch(robot, solution.q, theta, assembly)
        assert solution.residual_norm <= 1e-12 and np.linalg.norm(chain.residual(solution.q)) < 1e-12
        assert solution.condition_number < 10.0


def test_whole_turns_stay_on_the_branch(crank_rocker):
    """Every 10° over two turns each way, from the reference: the closed form, rocker angle included."""
    robot, chain, assembly = crank_rocker
    for theta in np.radians(np.arange(-720.0, 721.0, 10.0)):
        assert_on_branch(robot, close_loops(chain, [theta]).q, theta, assembly)


def test_near_targets_cost_plain_newton(crank_rocker):
    """10° away, the first step (the whole path) converges: a few Newton iterations, no continuation."""
    robot, chain, _ = crank_rocker
    assert close_loops(chain, [np.radians(10.0)]).iterations <= 6


def test_check_model_reports_a_far_stroke_valid(tmp_path, capsys):
    """A crank stroke of 150°–270° from the reference: before continuation, check-model reported samples of it
    as not closing (and closed others on the wrong branch)."""
    files = write_four_bar(tmp_path, (np.radians(150.0), np.radians(270.0)))
    out = io.StringIO()
    assert check_model(*files, samples=20, out=out) == 0, capsys.readouterr().err
    worst = out.getvalue().split("worst over 20 random strokes")[1].split()
    assert float(worst[1].rstrip(",")) < 10.0 and float(worst[3]) < 1e-10  # cond, residual


def test_estimator_starts_up_far_from_the_reference(tmp_path):
    """The first sample (no previous estimate) at 180° of crank, then one after a gap at 270°: the estimate is
    the closed form on the reference's branch."""
    robot = load_robot(*write_four_bar(tmp_path, (-5.0, 5.0)))
    estimator = RobotStateEstimator(robot, feet=["rocker_pin"])
    state = estimator.update([np.pi], None, 0.0)
    assert_on_branch(robot, state.q, np.pi, 1.0)
    assert state.residual_norm < 1e-12
    state = estimator.update([np.radians(270.0)], None, 5.0)  # 5 s gap: re-closed from the last estimate
    assert_on_branch(robot, state.q, np.radians(270.0), 1.0)


def test_calibration_far_from_the_reference(tmp_path):
    """Relative crank encoder 200° from the reference, 5° offset, absolute rocker encoder: the offset is found,
    starting from the reference (no tracked configuration)."""
    robot = load_robot(*write_four_bar(tmp_path, (-5.0, 5.0)))
    chain = ClosedChain(robot)
    theta, offset = np.radians(200.0), np.radians(5.0)
    phi, _ = four_bar_angles(theta)
    result = calibrate_actuator_offsets(chain, [theta - offset], [phi])
    assert result.converged, result.error_norm
    assert result.offsets[0] == pytest.approx(offset, abs=1e-9)
    assert_on_branch(robot, result.q, result.q[robot.actuated_q[0]], 1.0)


def test_linkage_past_its_dead_point_is_refused(tmp_path):
    """Non-Grashof four-bar (crank 0.12 m: s + l = 0.32 > p + q = 0.30): the crank cannot pass |θ| < 20.7°, where
    coupler and rocker stretch into line. Assembled at 90°, 25° closes; 10° and 0° raise ClosureError naming the
    crank and its value, not a configuration."""
    robot = load_robot(*write_four_bar(tmp_path, (-5.0, 5.0), theta0=np.pi / 2, a=0.12))
    chain = ClosedChain(robot)
    dead_point = np.arccos((GROUND ** 2 + 0.12 ** 2 - (COUPLER - ROCKER) ** 2) / (2 * GROUND * 0.12))
    assert np.degrees(dead_point) == pytest.approx(20.7, abs=0.05)
    solution = close_loops(chain, [np.radians(25.0)])
    phi, _ = four_bar_angles(np.radians(25.0), a=0.12)
    assert solution.q[robot.joint_q_index("rocker_joint")] == pytest.approx(phi, abs=1e-9)
    for theta in (np.radians(10.0), 0.0):
        with pytest.raises(ClosureError) as refused:
            close_loops(chain, [theta])
        message = str(refused.value)
        assert f"crank_joint = {theta:.6g} (from {np.pi / 2:.6g})" in message and "‖e_l‖" in message
        assert refused.value.residual_norm > 1e-9 and refused.value.worst_loop == "four_bar"


def test_prismatic_actuator_beyond_reach_is_refused():
    """The crank-slider's rod pushed 0.3 m out (the crank is 0.05 m): a ClosureError, not a configuration."""
    robot, chain = load("crank_slider")
    with pytest.raises(ClosureError, match="actuator = 0.3"):
        close_loops(chain, [0.3])


def test_mapper_jumps_to_far_outputs_on_the_branch():
    """The mapper's slow path is the same continuation, on the outputs: one command straight from the reference
    to far outputs recovers the strokes that produced them."""
    robot, chain = load("kangaroo_like")
    rng = np.random.default_rng(61)
    for _ in range(5):
        truth = closed_configuration(robot, chain, rng, fraction=0.9)
        mapping = ActuatorMap(robot, max_condition=np.inf)
        positions, _ = mapping.positions(truth[robot.output_q])
        np.testing.assert_allclose(positions, truth[robot.actuated_q], atol=1e-10)
