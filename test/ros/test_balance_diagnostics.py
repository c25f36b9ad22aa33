"""The balance controller's typed status (control.balance_status) and its text at the edge (nodes.balance_diagnostics):
the /diagnostics keys and values the bench, the demo and the node tests read, written out here as they are published,
and the controller's own verdict — a wrench QP fallback before joint limits not met, else OK."""
import math

from humanoid_balance.control.balance_status import BalanceStatus, Concern, Health, HealthLevel
from humanoid_balance.control.joint_limits import LimitStatus
from humanoid_balance.control.momentum_balance import QpStatus
from humanoid_balance.nodes.balance_diagnostics import at_a_limit, status_values, warning
from humanoid_balance.nodes.diagnostics import _format

STANDING = BalanceStatus(
    mode="kinematic", vertical_phase="n/a", qp_status=QpStatus.SOLVED, qp_solve_time=2.5e-5, wrench_residual=2.6e-7,
    linear_momentum=0.0, angular_momentum=0.125, clamped_values=0, restarts=0, joint_limits=LimitStatus.FREE,
    joint_limits_solver_flag=0, joints_at_a_limit=(), updates_limited=3, com_height_out_of_reach=0.0,
    limb_time_scale=1.0, step_phase="standing", steps_taken=1, steps_cut_short=0)


def published(status):
    return {key: _format(value) for key, value in status_values(status).items()}


def test_the_figures_are_published_under_todays_keys():
    assert list(published(STANDING).items()) == [
        ("mode", "kinematic"), ("vertical phase", "n/a"), ("qp status", "solved"), ("qp solve time [s]", "2.5e-05"),
        ("wrench residual [N, N·m]", "2.6e-07"), ("linear momentum [kg m/s]", "0"),
        ("angular momentum [kg m²/s]", "0.125"), ("clamped values", "0"),
        ("restarts from the measured posture", "0"), ("joint limits", "free"), ("joint limits solver flag", "0"),
        ("joints at a limit", "none"), ("updates limited by joint limits", "3"),
        ("CoM height out of reach [m]", "0"), ("limb time scale", "1"), ("step phase", "standing"),
        ("steps taken", "1"), ("steps cut short (the swing leg could not follow)", "0"),
        ("largest stance sole tilt [rad]", "0"), ("feet tipping", "none"), ("updates with a stance sole tipping", "0")]
    assert status_values(None) == {}


def test_what_a_mode_has_not_reads_n_a():
    viip = STANDING._replace(mode="viip", vertical_phase="stoop", joint_limits=None, step_phase=None, steps_taken=0)
    figures = published(viip)
    assert figures["joint limits"] == "n/a" and figures["step phase"] == "n/a" and figures["vertical phase"] == "stoop"


def test_joints_at_a_limit():
    limited = STANDING._replace(joint_limits=LimitStatus.LIMITED,
                                joints_at_a_limit=("left_knee_actuator", "right_knee_actuator"))
    assert published(limited)["joints at a limit"] == "left_knee_actuator, right_knee_actuator"
    assert published(limited)["joint limits"] == "limited"
    assert at_a_limit(limited) == ", at a limit: left_knee_actuator, right_knee_actuator"
    assert at_a_limit(STANDING) == "" and at_a_limit(None) == ""


def test_the_controllers_verdict():
    assert STANDING.health() == Health(HealthLevel.OK) and warning(STANDING) is None and warning(None) is None
    assert STANDING._replace(qp_status=QpStatus.NO_CONTACT).health().level is HealthLevel.OK  # in the air: no fault
    tipping = STANDING._replace(tipping_feet=("left_foot",), largest_sole_tilt=math.radians(3.0))
    assert tipping.health() == Health(HealthLevel.WARN, Concern.SOLE_TIPPING)
    assert warning(tipping) == "sole tipping: left_foot tilted 3.0° off the floor"
    not_met = STANDING._replace(joint_limits=LimitStatus.NOT_MET, joint_limits_solver_flag=-3)
    assert not_met.health() == Health(HealthLevel.WARN, Concern.LIMITS_NOT_MET)
    assert warning(not_met) == ("joint limits not met (DAQP exit flag -3): the command may leave them (clamped to the "
                                "joints' limits, the mapper's to the strokes)")
    for fallback in (QpStatus.LAST_FEASIBLE, QpStatus.GRAVITY_ONLY):
        both = not_met._replace(qp_status=fallback)  # the QP's fallback is told first
        assert both.health() == Health(HealthLevel.WARN, Concern.QP_FALLBACK)
        expected = {QpStatus.LAST_FEASIBLE: "last feasible", QpStatus.GRAVITY_ONLY: "gravity only"}[fallback]
        assert warning(both) == f"wrench QP fallback: {expected}"
