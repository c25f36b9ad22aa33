"""The command stage of a balance tick (control.command_integration) against hand-computed numbers: two outputs with
ranges ±1 rad, speeds ±2 rad/s and efforts ±10 N·m, a 0.1 s tick, the motion's rates integrated into the position
command, a restart from the measured posture beyond max_tracking_error, every value outside its limit clamped and
counted; and the rates that keep a joint in its range."""
import numpy as np
import pytest

from humanoid_balance.control.command_integration import CommandIntegrator

LOWER = np.array([[-1.0, -1.0], [-2.0, -2.0], [-10.0, -10.0]])
UPPER = -LOWER
DT = 0.1


def integrator(position=(0.5, 0.0)):
    stage = CommandIntegrator(LOWER, UPPER, max_tracking_error=0.25)
    stage.position = np.array(position)
    return stage


def motion(*rates):
    return np.r_[np.zeros(6), rates]


def update(stage, motion, effort=(1.0, -1.0), measured=(0.5, 0.0)):
    return stage.update(motion, np.array(effort), None, np.array(measured), None, DT, None)


def test_the_rates_are_integrated_and_every_value_is_kept_within_its_limits():
    stage = integrator()
    command, limits = update(stage, motion(1.0, -2.4), effort=(20.0, -1.0))
    assert limits is None  # no JointLimits: the motion is only clamped
    np.testing.assert_allclose(command[0], [0.6, -0.24])  # 0.5 + 0.1 × 1, 0 + 0.1 × (−2.4): within the ranges
    np.testing.assert_allclose(command[1], [1.0, -2.0])   # −2.4 rad/s clamped to −2
    np.testing.assert_allclose(command[2], [10.0, -1.0])  # 20 N·m clamped to 10
    assert stage.clamped == 2 and stage.restarts == 0
    np.testing.assert_allclose(stage.position, [0.6, -0.24])
    command, _ = update(stage, motion(2.0, 0.0), measured=(0.9, -0.24))
    np.testing.assert_allclose(command[0], [0.8, -0.24])
    command, _ = update(stage, motion(2.0, 0.0), measured=(0.9, -0.24))
    np.testing.assert_allclose(command[0], [1.0, -0.24])  # 1.0 reached: at the range's edge, not clamped
    command, _ = update(stage, motion(2.0, 0.0), measured=(0.95, -0.24))
    np.testing.assert_allclose(command[0], [1.0, -0.24])  # 1.2 clamped to 1
    assert stage.clamped == 3


def test_a_command_the_robot_does_not_follow_restarts_from_the_measured_posture():
    stage = integrator()
    command, _ = update(stage, motion(2.0, 0.0), measured=(0.45, 0.0))  # 0.7 − 0.45 = 0.25: not beyond
    np.testing.assert_allclose(command[0], [0.7, 0.0])
    assert stage.restarts == 0
    command, _ = update(stage, motion(2.0, 0.0), measured=(0.6, 0.1))  # 0.9 − 0.6 = 0.3 > 0.25
    np.testing.assert_allclose(command[0], [0.6, 0.1])
    np.testing.assert_allclose(command[1], [2.0, 0.0])  # the motion's rates are still sent
    assert stage.restarts == 1


def test_a_posture_held_still_is_not_restarted():
    stage = integrator()
    command, limits = update(stage, None, measured=(-0.5, 0.9))
    np.testing.assert_allclose(command[0], [0.5, 0.0])
    np.testing.assert_allclose(command[1], [0.0, 0.0])
    assert limits is None and stage.restarts == 0


def test_the_rates_that_keep_a_joint_in_its_range():
    stage = integrator(position=(0.5, 1.2))  # the second already beyond its upper limit
    lowest, highest = stage.range_rates(np.array([0, 1]), DT)
    np.testing.assert_allclose(lowest, [-15.0, -22.0])  # (−1 − 0.5) / 0.1, (−1 − 1.2) / 0.1
    np.testing.assert_allclose(highest, [5.0, 0.0])     # (1 − 0.5) / 0.1; beyond: it may stay or come back
    assert stage.range_rates(np.array([1]), DT)[0] == pytest.approx([-22.0])
