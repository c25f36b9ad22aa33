"""Contact estimation against statics computed with pinocchio, analytic wrenches and scipy.signal."""
import numpy as np
import pinocchio as pin
import pytest
from scipy import signal

from humanoid_balance.estimation.butterworth import ButterworthLowPass
from humanoid_balance.estimation.contact_state import ACTUATOR_FORCES, FT_SENSORS, ContactEstimator
from humanoid_balance.estimation.contact_wrench import (AERIAL, CONTACT, UNKNOWN, ContactHysteresis,
                                                        center_of_pressure, wrench_in_frame, zero_moment_point)
from humanoid_balance.estimation.lift_claims import LIFT_CLEARANCE
from humanoid_balance.estimation.quasi_static_contact import QuasiStaticContactEstimator
from humanoid_balance.model.soles import sole_rectangle
from support.model_fixtures import load, static_stance

SOLES = ("left_sole", "right_sole")


@pytest.fixture(scope="module")
def standing():
    robot, chain = load("kangaroo_like", floating_base=True)
    return (robot, *static_stance(robot, chain, SOLES))


def test_static_equilibrium_is_consistent(standing):
    robot, q, F, tau, weight = standing
    assert F[0, 2] == pytest.approx(0.6 * weight, rel=1e-6) and F[1, 2] == pytest.approx(0.4 * weight, rel=1e-6)


def test_zmp_of_a_still_robot_is_the_ground_projection_of_its_com(standing):
    robot, q, F, _, _ = standing
    data = robot.model.createData()
    com = pin.centerOfMass(robot.model, data, q)
    pin.framesForwardKinematics(robot.model, data, q)
    placements = [data.oMf[robot.frame_id(s)] for s in SOLES]
    world = [M.act(pin.Force(f)).vector for M, f in zip(placements, F)]
    zmp = zero_moment_point(world, placements[0].translation[2], 1.0)
    np.testing.assert_allclose(zmp[:2], com[:2], atol=1e-3)


def test_quasi_static_estimate_recovers_ground_truth_contact_forces(standing):
    robot, q, F, tau, weight = standing
    estimate = QuasiStaticContactEstimator(robot, SOLES).estimate(q, tau)
    assert np.abs(estimate[:, 2] - F[:, 2]).max() < 0.01 * weight
    np.testing.assert_allclose(estimate, F, atol=1e-6 * weight)


def test_motor_torques_are_converted_to_ballscrew_forces(standing):
    robot, q, F, tau, weight = standing
    screws = [robot.spec.actuators.get(name) for name in robot.actuated_names]  # None: a direct drive
    motor_torque = tau * np.array([s.lead / (2 * np.pi * s.efficiency) if s else 1.0 for s in screws])  # eq. 47⁻¹
    estimate = QuasiStaticContactEstimator(robot, SOLES, efforts_are_motor_torques=True).estimate(q, motor_torque)
    np.testing.assert_allclose(estimate, F, atol=1e-6 * weight)


def test_actuator_mode_end_to_end_zmp_and_support_polygon(standing):
    robot, q, F, tau, _ = standing
    estimator = ContactEstimator(robot, SOLES, mode=ACTUATOR_FORCES)
    for _ in range(3):
        result = estimator.update(q, actuator_efforts=tau)
    assert [foot.state for foot in result.feet] == [CONTACT, CONTACT]
    com = pin.centerOfMass(robot.model, robot.model.createData(), q)
    np.testing.assert_allclose(result.zmp[:2], com[:2], atol=1e-3)
    assert all(foot.cop_inside() for foot in result.feet)
    polygon = estimator.support_polygon(result)[:, :2]
    assert len(polygon) >= 4
    # The ZMP lies inside the convex support polygon: every edge sees it on its left (counter-clockwise).
    edges = np.roll(polygon, -1, axis=0) - polygon
    to_zmp = result.zmp[:2] - polygon
    assert np.all(edges[:, 0] * to_zmp[:, 1] - edges[:, 1] * to_zmp[:, 0] > 0)


def lowest_corner(robot, q, sole):
    """The world height of ``sole``'s lowest contact corner at ``q`` [m], by pinocchio."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    placement = data.oMf[robot.frame_id(sole)]
    return min(placement.act(corner)[2] for corner in sole_rectangle(robot, sole).corners())


def left_sole_raised(robot, q, rise):
    """``q`` with the left knee bent and its ankle pitched back as much (the sole kept level) so that the left sole's
    lowest corner is ``rise`` [m] higher (Newton on finite differences)."""
    knee, ankle = (robot.model.joints[robot.model.getJointId(name)].idx_q for name in ("left_knee", "left_ankle_pitch"))

    def bent(angle):
        moved = q.copy()
        moved[knee] += angle
        moved[ankle] -= angle
        return moved

    target, angle = lowest_corner(robot, q, SOLES[0]) + rise, 0.0
    for _ in range(6):
        height = lowest_corner(robot, bent(angle), SOLES[0])
        angle += (target - height) / ((lowest_corner(robot, bent(angle + 1e-6), SOLES[0]) - height) / 1e-6)
    assert lowest_corner(robot, bent(angle), SOLES[0]) == pytest.approx(target, abs=1e-7)
    return bent(angle)


def test_a_foot_the_balancer_lifted_carries_nothing_and_the_other_the_weight(standing):
    """A robot on its right sole only (its wrench the one that holds the base, g_b = J_c,bᵀ F, the efforts the full
    statics'), the swing leg's efforts disturbed as its dynamics would: told the left foot is lifted, the estimate
    gives it no wrench and the right sole the true one, the ZMP where the right sole can bear it, the left foot aerial;
    not told, the disturbance reads as a load on the lifted foot."""
    robot, q = standing[0], standing[1]
    chain = load("kangaroo_like", floating_base=True)[1]
    data = robot.model.createData()
    pin.computeJointJacobians(robot.model, data, q)
    pin.updateFramePlacements(robot.model, data)
    J_right = pin.getFrameJacobian(robot.model, data, robot.frame_id(SOLES[1]), pin.LOCAL)
    g = pin.rnea(robot.model, data, q, np.zeros(robot.nv), np.zeros(robot.nv))
    F_right = np.linalg.solve(J_right[:, :6].T, g[:6])
    S = np.zeros((robot.nv, len(robot.actuated_v)))
    S[robot.actuated_v, np.arange(len(robot.actuated_v))] = 1.0
    tau = np.linalg.lstsq(np.hstack([S, chain.constraint_jacobian(q).T]), g - J_right.T @ F_right,
                          rcond=None)[0][:len(robot.actuated_v)]
    left_leg = [i for i, name in enumerate(robot.actuated_names) if name.startswith("left")]
    swinging = tau.copy()
    swinging[left_leg] += 5.0  # [N or N·m] the swing leg's own acceleration, which statics cannot tell from a load
    lifted = ContactEstimator(robot, SOLES, mode=ACTUATOR_FORCES)
    lifted.update(left_sole_raised(robot, q, -2 * LIFT_CLEARANCE), actuator_efforts=tau)  # where
    for _ in range(3):                                                             # it stood, before it rose to q
        result = lifted.update(q, actuator_efforts=swinging, lifted=[True, False])
    assert [foot.state for foot in result.feet] == [AERIAL, CONTACT]
    np.testing.assert_allclose(result.feet[0].wrench, 0.0, atol=1e-9)
    np.testing.assert_allclose(QuasiStaticContactEstimator(robot, SOLES).estimate(q, tau, carrying=[False, True]),
                               [np.zeros(6), F_right], atol=1e-6 * robot.total_mass)
    com = pin.centerOfMass(robot.model, data, q)  # between the feet: the right sole alone holds it glued, its CoP
    right = lifted.rectangles[1]                     # off the sole; the ZMP is the sole's point nearest it
    com_on_sole = data.oMf[robot.frame_id(SOLES[1])].actInv(com)
    nearest = np.clip(com_on_sole[:2], [right.x_min, right.y_min], [right.x_max, right.y_max])
    np.testing.assert_allclose(result.zmp[:2], data.oMf[robot.frame_id(SOLES[1])].act(np.r_[nearest, 0.0])[:2],
                               atol=0.01)
    told_nothing = ContactEstimator(robot, SOLES, mode=ACTUATOR_FORCES)
    for _ in range(3):
        unaware = told_nothing.update(q, actuator_efforts=swinging)
    assert np.abs(unaware.feet[0].wrench).max() > 1.0


def test_a_foot_said_lifted_is_taken_as_lifted_only_once_its_sole_has_risen(standing):
    """A second publisher saying a standing foot is lifted (once and held, or toggling): while its sole stays where it
    stood, every estimate equals one told nothing (no foot aerial, no filter restarted); once the sole has risen
    LIFT_CLEARANCE beside the other (by pinocchio), the foot is aerial until it is said put down."""
    robot, q = standing[0], standing[1]
    g = pin.rnea(robot.model, robot.model.createData(), q, np.zeros(robot.nv), np.zeros(robot.nv))
    tau = g[robot.actuated_v]  # [N or N·m] efforts of the order a standing robot's
    said, told_nothing = (ContactEstimator(robot, SOLES, mode=ACTUATOR_FORCES) for _ in range(2))
    for k in range(12):
        a = said.update(q, actuator_efforts=tau + 0.5 * k, lifted=[k < 6 or k % 2 == 0, False])
        b = told_nothing.update(q, actuator_efforts=tau + 0.5 * k)
        assert [foot.state for foot in a.feet] == [foot.state for foot in b.feet] == [CONTACT, CONTACT]
        for mine, theirs in zip(a.feet, b.feet):
            np.testing.assert_array_equal(mine.wrench, theirs.wrench)
    almost, risen = (left_sole_raised(robot, q, rise) for rise in (0.9 * LIFT_CLEARANCE, 1.1 * LIFT_CLEARANCE))
    assert said.update(almost, actuator_efforts=tau, lifted=[True, False]).feet[0].state == CONTACT
    assert said.update(risen, actuator_efforts=tau, lifted=[True, False]).feet[0].state == AERIAL
    assert said.update(q, actuator_efforts=tau, lifted=[True, False]).feet[0].state == AERIAL  # until put down
    assert said.update(q, actuator_efforts=tau, lifted=[False, False]).feet[0].state != AERIAL


def test_center_of_pressure_of_a_known_wrench_through_a_sensor_frame():
    """A 300 N force pressing at (0.05, −0.02) on the sole, measured by a sensor 4 cm above the sole and
    yawed by 30°: back in the sole frame, the CoP is the point of application."""
    point, force = np.array([0.05, -0.02, 0.0]), np.array([10.0, -5.0, 300.0])
    wrench_sole = np.concatenate([force, np.cross(point, force)])
    sole_M_sensor = pin.SE3(pin.rpy.rpyToMatrix(0, 0, np.radians(30)), np.array([0.01, 0.0, 0.04]))
    reading = wrench_in_frame(sole_M_sensor.inverse(), wrench_sole)
    back = wrench_in_frame(sole_M_sensor, reading)
    np.testing.assert_allclose(center_of_pressure(back, 5.0), point[:2], atol=1e-12)
    assert center_of_pressure(np.array([0, 0, 2.0, 0, 0, 0]), 5.0) is None


def test_ft_mode_transforms_sensor_wrenches_into_sole_frames():
    robot, _ = load("kangaroo_like", floating_base=True)
    estimator = ContactEstimator(robot, SOLES, mode=FT_SENSORS)
    q = robot.reference_q
    point, force = np.array([0.03, 0.01, 0.0]), np.array([0.0, 0.0, 200.0])
    wrench_sole = np.concatenate([force, np.cross(point, force)])
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    foot_M_sole = data.oMf[robot.frame_id("left_foot")].actInv(data.oMf[robot.frame_id("left_sole")])
    reading = wrench_in_frame(foot_M_sole, wrench_sole)  # what a sensor at the foot link's frame reads
    result = estimator.update(q, sensor_wrenches=[("left_foot", reading), None])
    np.testing.assert_allclose(result.feet[0].wrench, wrench_sole, atol=1e-9)
    np.testing.assert_allclose(result.feet[0].cop_sole, point[:2], atol=1e-12)
    np.testing.assert_allclose(result.feet[0].cop_world(), data.oMf[robot.frame_id("left_sole")].act(point),
                               atol=1e-12)
    assert result.feet[1].state == UNKNOWN and result.feet[1].wrench is None and result.feet[1].cop_world() is None


def test_the_zmp_is_built_from_what_the_soles_can_bear(standing):
    """F/T readings in the sole frames (sensor = sole): the left sole 300 N pressing 0.5 m beyond its toe (a sensor's
    or an estimate's error: a sole cannot), the right one −40 N (pulling) with a moment. The feet's wrenches are
    published as read; the ZMP is that of the left sole's load at its toe edge's point nearest the reading and none of
    the right's, by hand from the sole rectangles."""
    robot, q = standing[0], standing[1]
    estimator = ContactEstimator(robot, SOLES, mode=FT_SENSORS)
    left, right = estimator.rectangles
    beyond = np.array([left.x_max + 0.5, 0.5 * (left.y_min + left.y_max) + 0.01, 0.0])
    pressing = np.concatenate([[0.0, 0.0, 300.0], np.cross(beyond, [0.0, 0.0, 300.0])])
    pulling = np.array([0.0, 0.0, -40.0, 3.0, -2.0, 0.0])
    result = estimator.update(q, sensor_wrenches=[(SOLES[0], pressing), (SOLES[1], pulling)])
    np.testing.assert_allclose(result.feet[0].wrench, pressing, atol=1e-9)
    np.testing.assert_allclose(result.feet[0].cop_sole, beyond[:2], atol=1e-12)
    np.testing.assert_allclose(result.feet[1].wrench, pulling, atol=1e-9)
    edge = np.array([left.x_max, beyond[1], 0.0])
    np.testing.assert_allclose(result.zmp, result.feet[0].sole_placement.act(edge), atol=1e-9)
    assert result.normal_force == pytest.approx(300.0)


@pytest.mark.parametrize("mode, readings", [(FT_SENSORS, {"sensor_wrenches": None}),
                                              (ACTUATOR_FORCES, {"actuator_efforts": None})])
def test_without_its_mode_s_readings_every_foot_is_unknown_and_no_zmp(mode, readings):
    robot, _ = load("kangaroo_like", floating_base=True)
    result = ContactEstimator(robot, SOLES, mode=mode).update(robot.reference_q, **readings)
    assert [foot.state for foot in result.feet] == [UNKNOWN, UNKNOWN] and result.zmp is None


def test_ft_readings_for_another_number_of_feet_are_refused_naming_them():
    robot, _ = load("kangaroo_like", floating_base=True)
    with pytest.raises(ValueError, match="sensor_wrenches: 1 readings for 2 feet"):
        ContactEstimator(robot, SOLES, mode=FT_SENSORS).update(robot.reference_q, sensor_wrenches=[None])


def test_sole_rectangle_from_collision_box():
    robot, _ = load("kangaroo_like")
    rectangle = sole_rectangle(robot, "left_sole")
    np.testing.assert_allclose(rectangle, [-0.08, 0.14, -0.055, 0.055], atol=1e-12)
    assert rectangle.contains(0.0, 0.0) and not rectangle.contains(0.15, 0.0)


def test_hysteresis_switches_only_across_the_band():
    phase = ContactHysteresis(on=40.0, off=20.0)
    forces = [None, 0.0, 30.0, 45.0, 30.0, 25.0, 19.0, 30.0, 41.0, None]
    states = [phase.update(f) for f in forces]
    assert states == [UNKNOWN, AERIAL, AERIAL, CONTACT, CONTACT, CONTACT, AERIAL, AERIAL, CONTACT, UNKNOWN]
    lifted = [phase.update(f, lifted=True) for f in (100.0, None)]
    assert lifted == [AERIAL, UNKNOWN] and phase.update(30.0) == AERIAL and phase.update(41.0) == CONTACT
    with pytest.raises(ValueError):
        ContactHysteresis(on=10.0, off=20.0)


def test_butterworth_magnitude_matches_freqz():
    rate, cutoff = 500.0, 5.0
    lowpass = ButterworthLowPass(cutoff, rate, channels=1)
    for frequency in (0.5, 2.0, 5.0, 10.0, 40.0):
        lowpass.reset()
        t = np.arange(int(20 * rate)) / rate
        output = np.array([lowpass.update([np.sin(2 * np.pi * frequency * ti)])[0] for ti in t])
        steady = output[len(t) // 2:]
        _, response = signal.sosfreqz(lowpass.sos, worN=[frequency], fs=rate)
        assert np.abs(steady).max() == pytest.approx(abs(response[0]), rel=0.01, abs=1e-4)
    _, at_cutoff = signal.sosfreqz(lowpass.sos, worN=[cutoff], fs=rate)
    assert abs(at_cutoff[0]) == pytest.approx(1 / np.sqrt(2), rel=1e-6)  # −3 dB at the cutoff


@pytest.mark.parametrize("real_rate", [150.0, 1000.0])
def test_butterworth_follows_the_rate_the_samples_come_at(real_rate):
    """Designed for 500 Hz, fed at another rate with the samples' times: a sine at the cutoff comes out at
    1/√2 (−3 dB) of its amplitude, as from a Butterworth designed for the real rate; without the times, the same
    samples read as 500 Hz put the cutoff elsewhere (at 150 Hz a 5 Hz sine is then 3.3 cutoffs up: 0.09)."""
    cutoff, frequency = 5.0, 5.0
    t = np.arange(int(20 * real_rate)) / real_rate + 1000.0
    samples = np.sin(2 * np.pi * frequency * t)
    following = ButterworthLowPass(cutoff, 500.0, channels=1)
    output = np.array([following.update([x], time=ti)[0] for x, ti in zip(samples, t)])
    assert following.sample_rate == pytest.approx(real_rate, rel=0.2)
    assert np.abs(output[len(t) // 2:]).max() == pytest.approx(1 / np.sqrt(2), rel=0.03)
    fixed = ButterworthLowPass(cutoff, 500.0, channels=1)
    output = np.array([fixed.update([x])[0] for x in samples])
    _, response = signal.sosfreqz(fixed.sos, worN=[frequency * 500.0 / real_rate], fs=500.0)
    assert np.abs(output[len(t) // 2:]).max() == pytest.approx(abs(response[0]), rel=0.02)


def test_butterworth_fed_just_above_twice_its_cutoff_keeps_its_design_and_filters_on():
    """A 5 Hz filter fed at 10.005 Hz: the rate's 1 % grid puts it at 9.96 Hz, below twice the cutoff, where no
    Butterworth of that cutoff exists; the filter keeps its last design and goes on (it raised on every sample, and
    the contact estimator dropped every message: a burst of estimated_joint_states stamped ahead once took its
    running rate there)."""
    lowpass = ButterworthLowPass(5.0, 500.0, channels=1)
    times = 1000.0 + np.arange(200) / 10.005
    outputs = [lowpass.update([1.0], time=t)[0] for t in times]
    assert np.allclose(outputs, 1.0) and lowpass.cutoff < lowpass.sample_rate / 2.0


def test_butterworth_step_response():
    """Second-order Butterworth (ζ = 1/√2): unit DC gain and a 4.3 % overshoot, e^(−π ζ/√(1−ζ²))."""
    lowpass = ButterworthLowPass(5.0, 1000.0, channels=2)
    assert np.allclose(lowpass.update([3.0, -1.0]), [3.0, -1.0])  # starts in steady state: no transient
    response = np.array([lowpass.update([4.0, -1.0])[0] for _ in range(2000)]) - 3.0
    assert response[-1] == pytest.approx(1.0, abs=1e-6)
    assert response.max() == pytest.approx(1.0 + np.exp(-np.pi), rel=0.02)


def test_polygon_margin_of_a_unit_square():
    from humanoid_balance.model.soles import polygon_margin

    square = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]  # counter-clockwise
    assert polygon_margin([0.5, 0.5], square) == pytest.approx(0.5)
    assert polygon_margin([0.5, 0.1, 7.0], square) == pytest.approx(0.1)
    assert polygon_margin([1.5, 0.5], square) == pytest.approx(-0.5)
