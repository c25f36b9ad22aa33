"""The actuators' strokes and the joints' ranges in the balancer's velocity resolution (control/joint_limits), on
kangaroo_like: the motion it keeps, closed through the loops by the mapper's nonlinear solution, leaves no actuator
beyond its stroke where the plain resolution would; it is the optimum of its QP (scipy's SLSQP on the same problem);
the soles and the CoM's horizontal motion are kept. In the closed loop with the embedded MuJoCo plant, a CoM
reference higher than the knee actuators' stroke allows, by 4 cm or by 20 cm (kinematic mode), 10 cm (viip): the
robot stands at the height it can reach, its CoM where it was (the rise the limits stop is not asked for again);
without the limits the integrated commands run into the strokes and it falls."""
import numpy as np
import pinocchio as pin
import pytest
from scipy.optimize import minimize

from humanoid_balance.bench.closed_loop import ClosedLoop, robot_config
from humanoid_balance.control.embedded_motion import BASE, C_BUSY, EmbeddedMotionResolver, Section
from humanoid_balance.control.joint_limits import JointLimits
from humanoid_balance.mapping.actuator_map import ActuatorMap
from humanoid_balance.model.kinematics import WholeBodyKinematics
from support.model_fixtures import load

JOINTS = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")
SOLES = ("left_sole", "right_sole")
DT = 0.05  # [s] one slow tick: the resolved motion crosses the knee actuators' stroke within it


@pytest.fixture(scope="module")
def stretched():
    """kangaroo_like with its knee actuators 1 cm from the end of their stroke (legs nearly straight), and the
    resolution of a CoM raised at 0.6 m/s with the base held level: ν_o* and the kinematics it came from."""
    robot, chain = load("kangaroo_like", floating_base=True)
    q = robot.reference_q.copy()
    knees = [robot.joint_q_index(f"{side}_knee_actuator") for side in ("left", "right")]
    for target in np.linspace(q[knees[0]], -0.01, 6)[1:]:
        q[knees] = target
        q = chain.solve_passive(q).q
    kinematics = WholeBodyKinematics(chain)
    resolver = EmbeddedMotionResolver(robot, [
        Section("left_foot", tuple(f"left_{j}" for j in JOINTS), "left_sole", BASE),
        Section("right_foot", tuple(f"right_{j}" for j in JOINTS), "right_sole", C_BUSY)], kinematics)
    velocity = resolver.resolve(q, np.array([0.0, 0.0, 0.6]), np.zeros(3)).output_velocity
    kinematics.update(q)
    return robot, q, kinematics, velocity


def tasks_of(robot, kinematics):
    return lambda: (kinematics.J_com @ kinematics.T, [kinematics.frame_jacobian(robot.frame_id(s)) for s in SOLES])


def strokes_reached(robot, q, outputs):
    """How far beyond its stroke each actuator that is not an output ends [m] (negative: inside), the loops closed
    for ``outputs`` by the mapper's Newton solution from ``q``."""
    mapper = ActuatorMap(robot)
    mapper.q = q.copy()
    positions, _ = mapper.positions(outputs)
    lower, upper = robot.position_limits(robot.actuated_names)
    beyond = np.maximum(positions - upper, lower - positions)
    return {name: beyond[i] for i, name in enumerate(robot.actuated_names) if name not in robot.output_names}


def test_the_kept_motion_leaves_every_actuator_within_its_stroke(stretched):
    robot, q, kinematics, velocity = stretched
    limits = JointLimits(robot)
    command = q[robot.output_q].copy()
    motion = limits.apply(velocity, kinematics.T, q, command, DT, tasks_of(robot, kinematics))
    unlimited = strokes_reached(robot, q, command + DT * velocity[6:])
    assert max(unlimited.values()) > 0.003, "the case should take an actuator beyond its stroke"
    assert motion.status == "limited" and "left_knee_actuator" in motion.limited
    kept = strokes_reached(robot, q, command + DT * motion.velocity[6:])
    margin = 0.02 * 0.128  # the knee actuator's stroke is 0.128 m
    assert max(kept.values()) < -margin / 2, kept  # within the stroke, up to the linearisation's error
    lower, upper = robot.position_limits(robot.output_names)
    reached = command + DT * motion.velocity[6:]
    assert np.all((reached >= lower - 1e-9) & (reached <= upper + 1e-9))


def test_the_kept_motion_holds_the_soles_and_the_com_horizontal_motion(stretched):
    robot, q, kinematics, velocity = stretched
    motion = JointLimits(robot).apply(velocity, kinematics.T, q, q[robot.output_q].copy(), DT,
                                      tasks_of(robot, kinematics)).velocity
    for sole in SOLES:
        J = kinematics.frame_jacobian(robot.frame_id(sole))
        np.testing.assert_allclose(J @ motion, J @ velocity, atol=1e-9)
    com_rate = kinematics.J_com @ kinematics.T @ motion
    assert np.abs(com_rate[:2]).max() < 2e-3  # [m/s] the resolution asked none; the height gives way
    assert 0.0 < com_rate[2] < 0.6


def test_the_kept_motion_is_the_optimum_of_its_qp(stretched):
    """The same problem, written from the module's equations with pinocchio's Jacobians, solved by SLSQP."""
    robot, q, kinematics, velocity = stretched
    margin, weight = 0.02, 1e4
    command = q[robot.output_q].copy()
    motion = JointLimits(robot, margin, weight).apply(velocity, kinematics.T, q, command, DT,
                                                       tasks_of(robot, kinematics)).velocity
    data = robot.model.createData()
    pin.computeJointJacobians(robot.model, data, q)
    pin.updateFramePlacements(robot.model, data)
    T = kinematics.T
    J_xy = pin.jacobianCenterOfMass(robot.model, data, q)[:2] @ T
    soles = np.vstack([pin.getFrameJacobian(robot.model, data, robot.frame_id(s), pin.LOCAL_WORLD_ALIGNED) @ T
                       for s in SOLES])
    strokes = [n for n in robot.actuated_names if n not in robot.output_names]
    rows = np.vstack([T[[robot.joint_v_index(n) for n in strokes]], np.eye(T.shape[1])[6:]])
    positions = np.r_[q[[robot.joint_q_index(n) for n in strokes]], command]
    lower, upper = (np.r_[bound[:len(strokes)], bound[len(strokes):]] for bound in
                    robot.position_limits(strokes + list(robot.output_names)))
    span = (upper - lower)[:len(strokes)]
    lower[:len(strokes)] += margin * span
    upper[:len(strokes)] -= margin * span

    P = weight * J_xy.T @ J_xy + np.eye(len(velocity))  # in δ = ν − ν*
    reached = positions + DT * rows @ velocity
    constraints = [{"type": "eq", "fun": lambda delta: soles @ delta, "jac": lambda delta: soles},
                   {"type": "ineq", "fun": lambda delta: upper - reached - DT * rows @ delta,
                    "jac": lambda delta: -DT * rows},
                   {"type": "ineq", "fun": lambda delta: reached + DT * rows @ delta - lower,
                    "jac": lambda delta: DT * rows}]
    reference = minimize(lambda delta: 0.5 * delta @ P @ delta, np.zeros(len(velocity)), jac=lambda delta: P @ delta,
                         constraints=constraints, method="SLSQP", options={"ftol": 1e-12, "maxiter": 500})
    assert reference.success, reference.message
    np.testing.assert_allclose(motion, velocity + reference.x, atol=1e-5)


def test_a_command_beyond_a_limit_may_stay_or_come_back_never_go_further(stretched):
    robot, q, kinematics, _ = stretched
    limits = JointLimits(robot)
    knee = robot.output_names.index("left_knee")
    command = q[robot.output_q].copy()
    command[knee] = -0.01  # beyond the knee's lower limit, 0
    rates = {}
    for rate in (-0.5, 0.0, 0.5):
        velocity = np.zeros(6 + len(robot.output_names))
        velocity[6 + knee] = rate
        motion = limits.apply(velocity, kinematics.T, q, command, DT, tasks_of(robot, kinematics))
        rates[rate] = motion.velocity[6 + knee]
    assert rates[-0.5] > -1e-9          # further out: stopped
    assert rates[0.0] == 0.0            # staying: kept
    assert rates[0.5] == pytest.approx(0.5)  # coming back: kept


def test_no_tick_no_limit(stretched):
    robot, q, kinematics, velocity = stretched
    motion = JointLimits(robot).apply(velocity, kinematics.T, q, q[robot.output_q].copy(), 0.0, None)
    assert motion.status == "free" and motion.velocity is velocity


def stand_under_a_raised_com_reference(respect_limits, rise, mode="kinematic", seconds=4.0):
    """kangaroo_like in the closed loop, its CoM reference raised by ``rise`` over the first second (beyond what
    its knee actuators' stroke allows): base heights [m], the horizontal CoM's largest departure from its start [m],
    the position limits the mapper had to clamp, the balancer."""
    loop = ClosedLoop(robot_config("kangaroo_like"), mode=mode, respect_limits=respect_limits)
    heights, coms, clamped = [], [], set()
    for k in range(int(seconds / loop.period)):
        sample = loop.tick(com_offset=(0.0, 0.0, rise * min(1.0, k * loop.period)))
        heights.append(sample.base_height)
        coms.append(sample.com[:2])
        if loop.signals.actuators is not None:
            clamped |= {name for name in loop.signals.actuators.clamped if name.endswith("position")}
    departure = float(np.linalg.norm(np.array(coms) - coms[0], axis=1).max())
    return np.array(heights), departure, clamped, loop.balancer


@pytest.mark.parametrize("respect_limits, rise, mode", [(True, 0.04, "kinematic"), (True, 0.2, "kinematic"),
                                                        (True, 0.1, "viip"), (False, 0.04, "kinematic")])
def test_a_com_reference_beyond_the_strokes_is_met_as_far_as_they_allow(respect_limits, rise, mode):
    heights, departure, clamped, balancer = stand_under_a_raised_com_reference(respect_limits, rise, mode)
    if respect_limits:
        assert heights.min() > heights[0] - 0.02 and heights[-1] > heights[0] + 0.02, "it should stand, raised"
        assert departure < 0.02, f"the CoM left its place over the feet by {departure:.3f} m"
        assert not clamped, f"the mapper clamped {clamped}: the balancer asked beyond a stroke"
        assert balancer.limited > 0
        assert balancer.height_cap is not None  # the rest of the rise is not asked for (the legs would lock)
    else:  # the reference: the same loop, the resolution clamped output by output afterwards
        assert heights[-1] < heights[0] - 0.3, "without the limits the robot was expected to fall"
