"""The balancer core on kangaroo_like: each mode does what its paper says on a kinematic/static model, and
no command ever leaves the URDF limits, whatever the references (hypothesis)."""
import numpy as np
import pinocchio as pin
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from humanoid_balance.control.balancer import balance_controller, BalancerConfig, BalancerState, Foot
from humanoid_balance.control.modes.kinematic import KinematicGains
from humanoid_balance.control.modes.viip import ViipGains
from support.model_fixtures import static_stance

JOINTS = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")
FEET = (Foot("left_foot", "left_sole", tuple(f"left_{j}" for j in JOINTS)),
        Foot("right_foot", "right_sole", tuple(f"right_{j}" for j in JOINTS)))


def crouched(robot, chain, knee_actuators):
    """The reference configuration with both knee actuators moved to ``knee_actuators`` [m], the loops closed."""
    q = robot.reference_q.copy()
    for target in np.linspace(0, knee_actuators, 6)[1:]:
        q[[robot.joint_q_index("left_knee_actuator"), robot.joint_q_index("right_knee_actuator")]] = target
        q = chain.solve_passive(q).q
    return q


@pytest.fixture(scope="module")
def kangaroo(kangaroo_floating):
    """A crouch away from the straight-knee singularity (its feet behind the CoM, as a kinematic model allows)."""
    robot, chain = kangaroo_floating
    return robot, chain, crouched(robot, chain, -0.05)


def com_of(robot, q):
    return pin.centerOfMass(robot.model, robot.model.createData(), q)


def commanded_motion(robot, chain, q, command):
    """The robot's velocity ν (robot.nv,) the command's output rates give, the loops closed and the left sole kept
    where it is by the base."""
    T = chain.output_velocity_map(q)
    data = robot.model.createData()
    pin.computeJointJacobians(robot.model, data, q)
    pin.updateFramePlacements(robot.model, data)
    J_foot = pin.getFrameJacobian(robot.model, data, robot.frame_id("left_sole"), pin.LOCAL_WORLD_ALIGNED) @ T
    base = -np.linalg.solve(J_foot[:, :6], J_foot[:, 6:] @ command.velocity)  # the support sole does not move
    return T @ np.r_[base, command.velocity]


def test_kinematic_mode_drives_the_com_to_its_reference(kangaroo):
    """Apply the commanded output positions to the model (loops re-closed, support sole kept where it is by
    moving the base) and the CoM converges to a reference 2 cm to the side (in a crouch whose CoM lies over the
    soles: a reference outside the support polygon is not granted, test_reference_governor)."""
    robot, chain, _ = kangaroo
    q = crouched(robot, chain, -0.02)
    balancer = balance_controller(robot, BalancerConfig(mode="kinematic", feet=FEET))
    target = com_of(robot, q) + np.array([0.0, 0.02, 0.0])
    dt = 0.01
    for _ in range(300):
        state = BalancerState(q, np.zeros(robot.nv), (True, True), com_of(robot, q), target)
        command = balancer.update(state, dt)
        # Move as commanded for one tick: output rates, loops closed, the support sole fixed by the base.
        q = chain.solve_passive(pin.integrate(robot.model, q, commanded_motion(robot, chain, q, command) * dt)).q
    np.testing.assert_allclose(com_of(robot, q)[:2], target[:2], atol=2e-3)


@pytest.mark.parametrize("bound", [0.25, 0.1])
def test_commands_a_robot_does_not_follow_restart_from_where_it_is(kangaroo, bound):
    """A robot that does not move (its driver not listening yet, or a mapper holding what its actuators cannot
    reach) under a CoM reference 5 cm away: each command integrates the same velocity further from the measured
    posture. Without a bound it runs off; with ``max_tracking_error`` it never gets further than that from the
    measured outputs, and starts again from them each time it would."""
    robot, chain, q = kangaroo
    target = com_of(robot, q) + np.array([0.0, 0.05, 0.05])
    state = BalancerState(q, np.zeros(robot.nv), (True, True), com_of(robot, q), target)
    measured = q[robot.output_q]
    unbounded = balance_controller(robot, BalancerConfig(mode="kinematic", feet=FEET, max_tracking_error=np.inf))
    bounded = balance_controller(robot, BalancerConfig(mode="kinematic", feet=FEET, max_tracking_error=bound))
    runaway, deviations, restarts = 0.0, [], []
    for _ in range(300):  # 3 s at 100 Hz
        runaway = np.abs(unbounded.update(state, 0.01).position - measured).max()
        deviations.append(np.abs(bounded.update(state, 0.01).position - measured).max())
        restarts.append(bounded.restarts)
    assert runaway > 2 * bound and unbounded.restarts == 0
    assert max(deviations) <= bound
    assert restarts[-1] >= 2 and min(deviations) == 0.0  # restarted on the measured posture, then moving again
    assert deviations[restarts.index(1)] == 0.0 and deviations[restarts.index(1) + 1] > 0.0


def test_kinematic_mode_without_a_measured_zmp_holds_the_posture(kangaroo):
    """Eq. 24 feeds back the measured ZMP; without one (zmp None: none fresh) the kinematic mode commands no motion
    — the outputs stay where they are — while the statics' torques still hold the weight. With the ZMP at the
    CoM's ground point the same CoM error does move the robot (the CoM-only feedback that let the plant's rocking
    grow until it fell, seconds after its contact estimator died)."""
    robot, chain, q = kangaroo
    target = com_of(robot, q) + np.array([0.0, 0.02, 0.0])
    held = balance_controller(robot, BalancerConfig(mode="kinematic", feet=FEET))
    command = held.update(BalancerState(q, np.zeros(robot.nv), (True, True), None, target), 0.01)
    assert not command.velocity.any()
    np.testing.assert_array_equal(command.position, q[robot.output_q])
    moving = balance_controller(robot, BalancerConfig(mode="kinematic", feet=FEET))
    zmp_at_com = com_of(robot, q) * np.array([1.0, 1.0, 0.0])
    motion = moving.update(BalancerState(q, np.zeros(robot.nv), (True, True), zmp_at_com, target), 0.01)
    assert np.abs(motion.velocity).max() > 1e-3
    for held_or_moving in (command, motion):  # statics that hold the weight (the QP's residual: the crouch's CoM is
        # near its soles' heel edge), whatever the soles' CoPs
        assert held_or_moving.wrenches[:, 2].sum() == pytest.approx(robot.total_mass * 9.81, rel=0.03)
        assert np.abs(held_or_moving.effort).max() > 1.0


@pytest.mark.parametrize("tracking", [True, False])
def test_kinematic_mode_pushed_sideways_resists_until_the_zmp_reaches_the_edge(kangaroo, tracking):
    """Pushed sideways — the CoM at 0.1 m/s, the measured ZMP still under it, the reference where it is — eq. 24 with
    the capture point's desired ZMP (dcm_zmp_tracking: p_d = c + (1 + k_ξ/ω) ċ/ω, within the soles) commands the CoM
    against the push at u = −k_p (p_d − p) = −k_p (1 + k_ξ/ω) ċ/ω, until the ZMP has reached p_d; with Choi–Kim's p_d,
    the reference's LIPM ZMP (here under the CoM), it commands nothing until the push has moved the ZMP, and then
    gives way to it (the ZMP lagged the capture point by 0.2 s, and kangaroo_like held 80 % of its feet's LIPM bound
    sideways, 86 % with the tracking)."""
    robot, chain, q = kangaroo
    gains = KinematicGains(dcm_zmp_tracking=tracking)
    config = BalancerConfig(mode="kinematic", feet=FEET, gains={"kinematic": gains})
    balancer = balance_controller(robot, config)
    v = np.zeros(robot.nv)
    v[1] = 0.1  # the base sideways (its frame is level here)
    com = com_of(robot, q)
    J_com = pin.jacobianCenterOfMass(robot.model, robot.model.createData(), q)
    com_velocity = J_com @ v
    command = balancer.update(BalancerState(q, v, (True, True), com * np.array([1.0, 1.0, 0.0]), com), 0.01)
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    ground = np.mean([data.oMf[robot.frame_id(foot.sole)].translation[2] for foot in FEET])
    omega = np.sqrt(9.81 / (com[2] - ground))
    k_p = config.zmp_com.k_p[1]
    expected = -k_p * (1.0 + gains.dcm_gain / omega) * com_velocity[1] / omega if tracking else 0.0
    commanded = J_com @ commanded_motion(robot, chain, q, command)
    assert commanded[1] == pytest.approx(expected, abs=0.1 * 0.07)


@pytest.mark.parametrize("mode", ["momentum", "kinematic"])
def test_at_rest_on_target_the_weight_is_held_with_the_static_torques(kangaroo, mode):
    """Momentum mode's Garofalo torques and kinematic mode's quasi-static ones both equal the statics of the QP's
    wrench distribution, solved here on the spanning tree with the loop forces (eq. 23 to the outputs)."""
    robot, chain, _ = kangaroo
    q, F, tau_statics, weight = static_stance(robot, chain, ("left_sole", "right_sole"))
    balancer = balance_controller(robot, BalancerConfig(mode=mode, feet=FEET))
    command = balancer.update(BalancerState(q, np.zeros(robot.nv), (True, True), None, com_of(robot, q)), 0.002)
    assert command.status.qp_status == "solved"
    assert command.wrenches[:, 2].sum() == pytest.approx(weight, rel=1e-6)
    # The torques hold the robot: equal to the statics of the same wrench distribution (eq. 23 to outputs).
    data = robot.model.createData()
    pin.computeJointJacobians(robot.model, data, q)
    pin.updateFramePlacements(robot.model, data)
    J_c = np.vstack([pin.getFrameJacobian(robot.model, data, robot.frame_id(s), pin.LOCAL)
                     for s in ("left_sole", "right_sole")])
    g = pin.rnea(robot.model, data, q, np.zeros(robot.nv), np.zeros(robot.nv))
    S = np.zeros((robot.nv, len(robot.actuated_v)))
    S[robot.actuated_v, np.arange(len(robot.actuated_v))] = 1.0
    tau = np.linalg.lstsq(np.hstack([S, chain.constraint_jacobian(q).T]), g - J_c.T @ command.wrenches.reshape(-1),
                          rcond=None)[0][:len(robot.actuated_v)]
    np.testing.assert_allclose(command.effort, chain.output_torques(q, tau), rtol=1e-5, atol=1e-4)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mode=st.sampled_from(["kinematic", "momentum", "viip"]),
       offset=st.tuples(*[st.floats(-5.0, 5.0)] * 3), zmp=st.tuples(*[st.floats(-5.0, 5.0)] * 2),
       contacts=st.sampled_from([(True, True), (True, False), (False, True), (False, False)]),
       steps=st.integers(1, 30))
def test_commands_never_exceed_the_urdf_limits(kangaroo, mode, offset, zmp, contacts, steps):
    robot, _, q = kangaroo
    balancer = balance_controller(robot, BalancerConfig(mode=mode, feet=FEET))
    lower, upper = robot.position_limits(robot.output_names)
    velocity_limit, effort_limit = robot.velocity_limits(robot.output_names), robot.effort_limits(robot.output_names)
    state = BalancerState(q, np.zeros(robot.nv), contacts, np.r_[zmp, 0.0], com_of(robot, q) + np.array(offset))
    for _ in range(steps):
        command = balancer.update(state, 0.05)
        assert np.all(np.isfinite(command.position)) and np.all(np.isfinite(command.effort))
        assert np.all(command.position >= lower) and np.all(command.position <= upper)
        assert np.all(np.abs(command.velocity) <= velocity_limit)
        assert np.all(np.abs(command.effort) <= effort_limit)


def test_c_busy_hand_reaches_its_target_pose_while_the_com_stays(kangaroo):
    """Mahru I, kinematic mode, left arm C-busy towards a pose 3 cm ahead: applying the commands (the
    support sole held by the base) brings the hand there while the CoM keeps its reference. The arm starts
    away from its planar posture, where two pitch joints could not move the hand in x–z at fixed pitch."""
    from humanoid_balance.control.embedded_motion import C_BUSY, Section
    from support.model_fixtures import REPO
    from humanoid_balance.model import load_robot

    robot = load_robot(REPO / "urdf" / "mahru.urdf", floating_base=True)
    leg = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")
    arm = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_yaw", "wrist_roll")
    feet = tuple(Foot(f"{s}_foot", f"{s}_sole", tuple(f"{s}_{j}" for j in leg)) for s in ("left", "right"))
    hand = Section("left_arm", tuple(f"left_{j}" for j in arm), "left_hand", C_BUSY)
    balancer = balance_controller(robot, BalancerConfig(mode="kinematic", feet=feet), [hand])
    q = pin.neutral(robot.model)
    for name, value in (("hip_pitch", -0.4), ("knee", 0.8), ("ankle_pitch", -0.4)):
        for side in ("left", "right"):
            q[robot.joint_q_index(f"{side}_{name}")] = value
    for name, value in (("shoulder_roll", 0.5), ("shoulder_yaw", 0.5), ("elbow", -1.0), ("wrist_yaw", 0.3)):
        q[robot.joint_q_index(f"left_{name}")] = value
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    target = data.oMf[robot.frame_id("left_hand")].copy()
    target.translation = target.translation + np.array([0.03, 0.0, 0.0])
    com_reference = com_of(robot, q)
    dt = 0.01
    for _ in range(200):
        state = BalancerState(q, np.zeros(robot.nv), (True, True), com_of(robot, q), com_reference, {},
                              {"left_arm": target})
        outputs = balancer.update(state, dt).velocity
        pin.computeJointJacobians(robot.model, data, q)
        pin.updateFramePlacements(robot.model, data)
        J_foot = pin.getFrameJacobian(robot.model, data, robot.frame_id("left_sole"), pin.LOCAL_WORLD_ALIGNED)
        base = -np.linalg.solve(J_foot[:, :6], J_foot[:, 6:] @ outputs)
        q = pin.integrate(robot.model, q, np.r_[base, outputs] * dt)
    pin.framesForwardKinematics(robot.model, data, q)
    assert np.linalg.norm(data.oMf[robot.frame_id("left_hand")].translation - target.translation) < 2e-3
    np.testing.assert_allclose(com_of(robot, q)[:2], com_reference[:2], atol=2e-3)


def whole_body_velocity(robot, chain, q, outputs, sole="left_sole", sole_twist=np.zeros(6)):
    """ν = T [ν_b; q̇_o] of commanded output rates, the base found from one sole's commanded twist (world-aligned)
    with pinocchio's frame Jacobian, and T the loops' output map."""
    T = chain.output_velocity_map(q)
    data = robot.model.createData()
    pin.computeJointJacobians(robot.model, data, q)
    pin.updateFramePlacements(robot.model, data)
    J = pin.getFrameJacobian(robot.model, data, robot.frame_id(sole), pin.LOCAL_WORLD_ALIGNED) @ T
    base = np.linalg.solve(J[:, :6], sole_twist - J[:, 6:] @ outputs)
    return T @ np.r_[base, outputs], data


@pytest.mark.parametrize("phase", ["liftoff", "standing"])
def test_viip_lift_off_pushes_without_turning_the_whole_body(kangaroo, phase):
    """Resolved momentum control during lift-off: the COG rising at 0.3 m/s with both feet on the floor and zero
    centroidal angular momentum (pinocchio's centroidal momentum of the whole-body velocity). Standing, the trunk
    is held upright instead, and legs extending under an upright trunk do turn the body."""
    robot, chain, q = kangaroo
    flat = ViipGains(sole_level_gain=0.0)  # (this crouch tilts the soles)
    balancer = balance_controller(robot, BalancerConfig(mode="viip", feet=FEET, gains={"viip": flat}))
    state = BalancerState(q, np.zeros(robot.nv), (True, True), com_of(robot, q), com_of(robot, q))
    balancer.update(state, 0.002)
    balancer.schedule.name, balancer.srv = phase, np.array([0.0, 0.0, 0.3])  # mid-push
    nu, data = whole_body_velocity(robot, chain, q, balancer.update(state, 0.002).velocity)
    momentum = pin.computeCentroidalMomentum(robot.model, data, q, nu)
    assert momentum.linear[2] / robot.total_mass == pytest.approx(balancer.srv[2], rel=1e-6)
    angular = np.linalg.norm(momentum.angular)
    assert angular < 1e-8 if phase == "liftoff" else angular > 0.5


def test_viip_turns_tilted_soles_flat_onto_the_floor(kangaroo):
    """A robot standing pitched 3° forward and rolled 2°, its soles with it: each sole in contact is commanded to
    turn back at sole_level_gain times its tilt (roll and pitch, world axes) without sliding; the left sole's twist
    gives the base, the right sole's is checked with pinocchio's Jacobian."""
    robot, chain, q = kangaroo
    q = q.copy()
    tilt = pin.rpy.rpyToMatrix(np.radians(2), np.radians(3), 0.0)
    q[3:7] = pin.Quaternion(tilt).coeffs()
    balancer = balance_controller(robot, BalancerConfig(mode="viip", feet=FEET,
                                                        gains={"viip": ViipGains(sole_level_gain=10.0)}))
    state = BalancerState(q, np.zeros(robot.nv), (True, True), com_of(robot, q), com_of(robot, q))
    outputs = balancer.update(state, 0.002).velocity
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    twists = []
    for sole in ("left_sole", "right_sole"):
        R = data.oMf[robot.frame_id(sole)].rotation
        twist = np.zeros(6)
        twist[3:5] = -10.0 * (R @ pin.log3(R))[:2]
        twists.append(twist)
    assert np.linalg.norm(twists[0][3:]) > 0.5  # 10/s × 3.6°
    nu, data = whole_body_velocity(robot, chain, q, outputs, "left_sole", twists[0])
    J_right = pin.getFrameJacobian(robot.model, data, robot.frame_id("right_sole"), pin.LOCAL_WORLD_ALIGNED)
    np.testing.assert_allclose(J_right @ nu, twists[1], atol=1e-8)


def test_viip_in_flight_the_cog_keeps_its_horizontal_velocity(kangaroo):
    """Aerial phase: gravity alone acts on the COG, so its horizontal velocity is the one it left with, whatever
    the estimate says (a base moving at 0.2 m/s sideways and forwards here); its vertical one follows the estimate
    (J_com v, with pinocchio), which the landing spring takes its speed from."""
    robot, chain, q = kangaroo
    balancer = balance_controller(robot, BalancerConfig(mode="viip", feet=FEET))
    state = BalancerState(q, np.zeros(robot.nv), (True, True), com_of(robot, q), com_of(robot, q))
    balancer.update(state, 0.002)
    balancer.schedule.name, balancer.schedule.airborne = "aerial", True
    balancer.srv = np.array([0.05, 0.0, 0.4])
    v = np.zeros(robot.nv)
    v[:3] = [0.2, 0.2, 0.3]  # base twist, base frame (level base): still rising, no touchdown near
    balancer.update(BalancerState(q, v, (False, False), None, com_of(robot, q)), 0.002)
    J_com = pin.jacobianCenterOfMass(robot.model, robot.model.createData(), q)
    np.testing.assert_allclose(balancer.srv, [0.05, 0.0, (J_com @ v)[2]], atol=1e-12)


def test_requests_the_robot_cannot_do_now_are_refused_with_the_reason(kangaroo):
    """A jump outside viip mode, on one foot or while one is under way; a mode change during a jump. A mode change
    the robot can make is a new controller of the mode, and the same mode the same controller."""
    from humanoid_balance.control.balancer import Refused, change_mode
    from humanoid_balance.control.modes.kinematic import KinematicBalance

    robot, chain, q = kangaroo
    kinematic = balance_controller(robot, BalancerConfig(mode="kinematic", feet=FEET))
    with pytest.raises(Refused, match="mode 'kinematic' does not jump"):
        kinematic.jump()
    viip = balance_controller(robot, BalancerConfig(mode="viip", feet=FEET))
    viip.update(BalancerState(q, np.zeros(robot.nv), (True, False), com_of(robot, q), com_of(robot, q)), 0.002)
    with pytest.raises(Refused, match="not standing on every foot"):
        viip.jump()
    viip.update(BalancerState(q, np.zeros(robot.nv), (True, True), com_of(robot, q), com_of(robot, q)), 0.002)
    standing = change_mode(viip, "kinematic")  # standing: allowed
    assert isinstance(standing, KinematicBalance) and standing.config.mode == "kinematic"
    assert viip.config.mode == "viip" and change_mode(viip, "viip") is viip  # nothing shared changed
    viip.jump()
    assert viip.schedule.name == "stoop"
    with pytest.raises(Refused, match="a jump is under way"):
        viip.jump()
    with pytest.raises(Refused, match="the mode stays 'viip'"):
        change_mode(viip, "momentum")
    with pytest.raises(ValueError, match="mode must be one of"):
        change_mode(viip, "walk")


def test_the_kinematic_mode_takes_the_robot_as_rolling_when_a_foot_is_up_or_a_cop_is_near_an_edge(kangaroo):
    """Its soles level beyond the smaller deadband (control.foot_damping) while a foot has left the floor, or a stance
    sole's distributed or measured CoP lies within ROLLING_EDGE (15 %) of an edge: kangaroo_like's soles span x from
    -0.08 to 0.14 m, so a CoP at x = 0.03 m (the middle) or 0.09 m (where CoM errors put it standing) is not, and one
    at 0.12 m is at the toes."""
    robot, _, _ = kangaroo
    kinematic = balance_controller(robot, BalancerConfig(mode="kinematic", feet=FEET))

    def at(x, force=250.0):
        return np.array([0.0, 0.0, force, 0.0, -x * force, 0.0])  # [f; τ] in the sole frame: the CoP at (x, 0)

    middle, toes = [at(0.03), at(0.03)], [at(0.03), at(0.12)]
    assert not kinematic._rolling((0, 1), middle, middle)
    assert not kinematic._rolling((0, 1), [at(0.09), at(0.09)], middle)
    assert not kinematic._rolling((0, 1), middle, [None, None])  # nothing measured: the distribution's CoPs decide
    assert kinematic._rolling((0,), middle, middle)               # the right foot has left the floor
    assert kinematic._rolling((0, 1), toes, middle)               # asked to press on its toes
    assert kinematic._rolling((0, 1), middle, toes)               # pressing on them
