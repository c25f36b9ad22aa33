"""The balance controller's status (control.balance_status.BalanceStatus) as /diagnostics' figures and messages: the
keys and texts the bench, the demo and the tests read."""
import math

from humanoid_balance.control.balance_status import Concern

__all__ = ["at_a_limit", "status_values", "warning"]


def status_values(status):
    """{key: value} of a BalanceStatus (None: no update yet, no figures), formatted by nodes.diagnostics."""
    if status is None:
        return {}
    return {"mode": status.mode, "vertical phase": status.vertical_phase,
            "qp status": status.qp_status, "qp solve time [s]": status.qp_solve_time,
            "wrench residual [N, N·m]": status.wrench_residual,
            "linear momentum [kg m/s]": status.linear_momentum,
            "angular momentum [kg m²/s]": status.angular_momentum,
            "clamped values": status.clamped_values, "restarts from the measured posture": status.restarts,
            "joint limits": "n/a" if status.joint_limits is None else status.joint_limits,
            "joint limits solver flag": status.joint_limits_solver_flag,
            "joints at a limit": ", ".join(status.joints_at_a_limit) or "none",
            "updates limited by joint limits": status.updates_limited,
            "CoM height out of reach [m]": status.com_height_out_of_reach,
            "limb time scale": status.limb_time_scale,
            "step phase": "n/a" if status.step_phase is None else status.step_phase,
            "steps taken": status.steps_taken,
            "steps cut short (the swing leg could not follow)": status.steps_cut_short,
            "largest stance sole tilt [rad]": status.largest_sole_tilt,
            "feet tipping": ", ".join(status.tipping_feet) or "none",
            "updates with a stance sole tipping": status.tipping_updates}


def at_a_limit(status):
    """', at a limit: <joints>' for a status message while joints or actuators are at a limit, else ''."""
    joints = () if status is None else status.joints_at_a_limit
    return f", at a limit: {', '.join(joints)}" if joints else ""


def warning(status):
    """The message of the controller's own warning (BalanceStatus.health); None: none (or no update yet)."""
    if status is None:
        return None
    concern = status.health().concern
    if concern is Concern.QP_FALLBACK:
        return f"wrench QP {status.qp_status}"
    if concern is Concern.LIMITS_NOT_MET:
        return (f"joint limits not met (DAQP exit flag {status.joint_limits_solver_flag}): the command may leave them "
                "(clamped to the joints' limits, the mapper's to the strokes)")
    if concern is Concern.SOLE_TIPPING:
        return (f"sole tipping: {', '.join(status.tipping_feet)} tilted {math.degrees(status.largest_sole_tilt):.1f}° "
                "off the floor")
    return None
