"""centroidal_balancer in its own process, over DDS: lifecycle, commands, refused gains, stale inputs."""
import re
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import PointStamped
from lifecycle_msgs.msg import Transition
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from support.ros_probe import NodeSession
from sensor_msgs.msg import JointState
from std_msgs.msg import Int8

from humanoid_balance.resources import executable

pytestmark = pytest.mark.dds
EXECUTABLE = str(executable("centroidal_balancer"))
DIAGNOSTIC = "centroidal_balancer: balance"


@pytest.fixture(scope="module")
def kangaroo(kangaroo):
    """kangaroo_like in a crouch whose CoM lies over its soles."""
    robot, chain = kangaroo
    q = robot.reference_q.copy()
    for target in np.linspace(0, -0.02, 6)[1:]:
        q[[robot.joint_q_index("left_knee_actuator"), robot.joint_q_index("right_knee_actuator")]] = target
        q = chain.solve_passive(q).q
    return robot, q


class Session(NodeSession):
    def __init__(self, robot, q, parameters=()):
        super().__init__(EXECUTABLE, parameters, "balancer_probe")
        self.robot, self.q = robot, q
        self.joints = self.probe.publisher(JointState, "estimated_joint_states", sensor=False)
        self.odom = self.probe.publisher(Odometry, "odom", sensor=False)
        self.zmp = self.probe.publisher(PointStamped, "zmp", sensor=False)
        self.states = [self.probe.publisher(Int8, f"contact/{f}/state", sensor=False) for f in ("left_foot", "right_foot")]
        self.commands = self.probe.record(JointState, "balance/joint_command")
        self.com = self.probe.record(PointStamped, "balance/com")
        self.time = 3000.0
        self.phase = 1  # contact/<foot>/state sent: 1 contact, 0 aerial

    def tick(self):
        self.time += 0.005
        stamp_sec, stamp_nsec = int(self.time), int((self.time % 1) * 1e9)
        odom = Odometry()
        odom.header.stamp.sec, odom.header.stamp.nanosec = stamp_sec, stamp_nsec
        odom.pose.pose.position.z = 0.8
        odom.pose.pose.orientation.w = 1.0
        self.odom.publish(odom)
        for publisher in self.states:
            publisher.publish(Int8(data=self.phase))
        zmp = PointStamped()  # under the base: without a recent zmp the kinematic mode holds its posture
        zmp.header.stamp.sec, zmp.header.stamp.nanosec, zmp.header.frame_id = stamp_sec, stamp_nsec, "odom"
        self.zmp.publish(zmp)
        message = JointState(name=list(self.robot.joint_names), position=[float(x) for x in self.q],
                             velocity=[0.0] * len(self.q))
        message.header.stamp.sec, message.header.stamp.nanosec = stamp_sec, stamp_nsec
        self.joints.publish(message)

    def run(self, condition, timeout=20.0, feed=True):
        return super().run(condition, self.tick if feed else None, timeout)

    def change_state(self, transition):
        return self.probe.change_state("/centroidal_balancer", transition)

    def move_com_reference_until(self, offset, diagnosed, timeout=10.0):
        """Once commands and balance/com flow, send balance/com_reference ``offset`` [m] away from the CoM the node
        reports, again each tick (the first may go out before the subscription has matched), until the node's
        /diagnostics message satisfies ``diagnosed``."""
        reference = self.probe.publisher(PointStamped, "balance/com_reference", sensor=False)
        assert self.run(lambda: len(self.commands) > 5 and self.com, timeout=20.0), self.report()
        com = self.com[-1].point
        target = PointStamped()
        target.header.frame_id = "odom"
        target.point.x, target.point.y, target.point.z = com.x + offset[0], com.y + offset[1], com.z + offset[2]

        def done():
            reference.publish(target)
            status = self.probe.diagnostics.get(DIAGNOSTIC)
            return status is not None and diagnosed(status.message)

        assert self.run(done, timeout=timeout), self.report()


def test_lifecycle_commands_only_while_active_and_within_limits(kangaroo):
    robot, q = kangaroo
    session = Session(robot, q, ["-p", "autostart:=false"])
    try:
        assert not session.run(lambda: len(session.commands) > 0, timeout=2.0)  # unconfigured: silent
        assert session.change_state(Transition.TRANSITION_CONFIGURE), session.report()
        assert not session.run(lambda: len(session.commands) > 0, timeout=1.0)  # inactive: still silent
        assert session.change_state(Transition.TRANSITION_ACTIVATE), session.report()
        assert session.run(lambda: len(session.commands) > 20), session.report()
        command = session.commands[-1]
        assert list(command.name) == list(robot.output_names)
        lower, upper = robot.position_limits(robot.output_names)
        position = np.array(command.position)
        assert np.all(np.isfinite(position)) and np.all(position >= lower) and np.all(position <= upper)
        assert np.all(np.abs(command.effort) <= robot.effort_limits(robot.output_names))
        assert session.com and session.com[-1].header.frame_id == "odom"
        assert session.change_state(Transition.TRANSITION_DEACTIVATE)
        count = len(session.commands)
        session.run(lambda: False, timeout=1.0)
        assert len(session.commands) <= count + 2  # at most what was already in flight
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_gain_change_breaking_the_iss_conditions_is_refused(kangaroo):
    robot, q = kangaroo
    session = Session(robot, q)
    try:
        assert session.run(lambda: len(session.commands) > 5), session.report()
        request = SetParameters.Request(parameters=[Parameter(
            name="k_c", value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=0.5))])
        result = session.probe.call(SetParameters, "/centroidal_balancer/set_parameters", request).results[0]
        assert not result.successful
        assert "must exceed ω_n" in result.reason
        request.parameters[0].value.double_value = 5.5
        assert session.probe.call(SetParameters, "/centroidal_balancer/set_parameters", request).results[0].successful
    finally:
        session.stop()


def test_a_mode_change_at_run_time_is_a_new_controller_and_a_bad_mode_is_refused(kangaroo):
    """`ros2 param set /centroidal_balancer mode momentum` while balancing: the node goes on in momentum mode (its
    diagnostics and the status it reports say so, its commands keep flowing within the limits); a mode that does not
    exist is refused with the list of modes, and the node stays in its mode."""
    robot, q = kangaroo
    session = Session(robot, q)

    def set_mode(mode):
        request = SetParameters.Request(parameters=[Parameter(
            name="mode", value=ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=mode))])
        return session.probe.call(SetParameters, "/centroidal_balancer/set_parameters", request).results[0]

    def reports(mode):
        status = session.probe.diagnostics.get(DIAGNOSTIC)
        return status is not None and f"({mode})" in status.message and \
            {pair.key: pair.value for pair in status.values}.get("mode") == mode

    try:
        assert session.run(lambda: len(session.commands) > 5 and reports("kinematic")), session.report()
        assert set_mode("momentum").successful
        count = len(session.commands)
        assert session.run(lambda: reports("momentum") and len(session.commands) > count + 20), session.report()
        assert np.all(np.abs(session.commands[-1].effort) <= robot.effort_limits(robot.output_names))
        refused = set_mode("walk")
        assert not refused.successful and "mode must be one of kinematic, momentum, viip" in refused.reason
        assert session.run(lambda: reports("momentum"), timeout=3.0), session.report()
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_stale_inputs_hold_the_posture_and_recover(kangaroo):
    robot, q = kangaroo
    session = Session(robot, q)
    try:
        assert session.run(lambda: len(session.commands) > 5), session.report()

        def holding():
            status = session.probe.diagnostics.get(DIAGNOSTIC)
            return status is not None and status.message == "inputs stale: holding posture"

        assert session.run(holding, timeout=5.0, feed=False)
        assert np.allclose(session.commands[-1].velocity, 0.0)
        # the hold carries the stamp of the state it holds, so the mapper takes the next real command after it
        hold = session.commands[-1].header.stamp
        assert hold.sec + 1e-9 * hold.nanosec == pytest.approx(session.time, abs=1e-6)

        def balancing():
            status = session.probe.diagnostics.get(DIAGNOSTIC)
            return status is not None and status.message.startswith("balancing")

        assert session.run(balancing, timeout=5.0)
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_mahru_configuration_from_the_readme_comes_up(kangaroo):
    config = Path(__file__).resolve().parents[2] / "config"
    session = Session(*kangaroo, ["--params-file", str(config / "centroidal_balancer.yaml"), "--params-file",
                                  str(config / "robots" / "mahru.yaml")])
    try:
        assert session.run(lambda: DIAGNOSTIC in session.probe.diagnostics, timeout=15.0, feed=False), session.report()
        assert session.probe.diagnostics[DIAGNOSTIC].message == "waiting for /estimated_joint_states and /odom"
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_commands_a_robot_does_not_follow_restart_from_its_measured_posture(kangaroo):
    """The probe's robot never moves, whatever the commands: under a CoM reference 5 cm away the node's commands would
    run away from it; with max_tracking_error they stay within it of the measured joints, and /diagnostics says the
    robot does not follow."""
    robot, q = kangaroo
    session = Session(robot, q, ["-p", "max_tracking_error:=0.05"])
    try:
        session.move_com_reference_until(
            (0.0, 0.05, 0.0), lambda message: message.startswith("the robot does not follow the commands"))
        measured = np.array([q[robot.joint_q_index(name)] for name in robot.output_names])
        deviations = [np.abs(np.array(command.position) - measured).max() for command in session.commands]
        assert max(deviations) <= 0.05 + 1e-9 and min(deviations[5:]) == 0.0
        assert int(session.probe.diagnostic_values(DIAGNOSTIC)["restarts from the measured posture"]) >= 1
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_commands_reaching_the_actuators_strokes_are_diagnosed_with_the_joints_at_a_limit(kangaroo):
    """A CoM reference 30 cm above the stance, out of the legs' reach, on a robot that never moves (the lead of the
    commands on it allowed up to 1.5 rad): the commands extend the legs until actuators reach their stroke;
    /diagnostics names the joints at a limit and gives most of the 30 cm as out of reach. (Whether the strokes are
    kept, through the loops, is test_joint_limits': here the robot's configuration, about which they are linearised,
    stays 0.7 rad behind the commands.) Meanwhile it says what it limits: the height asked and the one granted, which
    differ, and the reference on its way to the granted height, where it is now."""
    robot, q = kangaroo
    session = Session(robot, q, ["-p", "max_tracking_error:=1.5"])
    said = []
    try:
        session.move_com_reference_until(
            (0.0, 0.0, 0.3), lambda message: said.append(message) or ("at a limit: " in message and "_actuator" in
                                                                      message), timeout=15.0)
        values = session.probe.diagnostic_values(DIAGNOSTIC)
        assert int(values["updates limited by joint limits"]) > 0 and float(values["CoM height out of reach [m]"]) > 0.2
        assert any("limited: com_reference approached at the speed and acceleration limits: granted (" in message
                   and ", on its way there, now at (" in message for message in said), said
        heights = [re.search(r"height out of the legs' reach: asked ([^,]+), granted ([^;,]+)", message)
                   for message in said]
        assert any(heights) and all(float(h[1]) > float(h[2]) for h in heights if h), said
        knee = session.commands[-1].position[list(session.commands[-1].name).index("left_knee")]
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr
    assert knee < q[robot.joint_q_index("left_knee")] - 0.3, "the legs should have extended"


def test_references_while_no_foot_is_in_contact_are_refused(kangaroo):
    """In the air nothing can be balanced towards: a CoM reference is rejected (no_contact), counted in /diagnostics,
    and the node goes on."""
    robot, q = kangaroo
    session = Session(robot, q)
    try:
        assert session.run(lambda: len(session.commands) > 5), session.report()
        session.phase = 0
        reference = session.probe.publisher(PointStamped, "balance/com_reference", sensor=False)
        target = PointStamped()
        target.header.frame_id = "odom"

        def refused():
            reference.publish(target)
            values = session.probe.diagnostic_values(DIAGNOSTIC) or {}
            return int(values.get("rejected: no_contact", 0)) > 0

        assert session.run(refused, timeout=15.0), session.report()
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr
