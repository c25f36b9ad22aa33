"""state_estimator in its own process, over DDS: passive joints, calibration service, bad input."""
import importlib.util
import math
from itertools import count
from pathlib import Path

import numpy as np
import yaml
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Int8
from std_srvs.srv import Trigger

from humanoid_balance.estimation.contact_wrench import AERIAL, CONTACT
from humanoid_balance.model import ClosedChain
from humanoid_balance.nodes.messages import stamp_seconds
from humanoid_balance.resources import executable
from support.model_fixtures import closed_configuration
from support.ros_probe import NodeSession
from support.ros_processes import start

pytestmark = pytest.mark.dds
EXECUTABLE = str(executable("state_estimator"))
DIAGNOSTIC = "state_estimator: estimation"


@pytest.fixture(scope="module")
def kangaroo(kangaroo):
    robot, chain = kangaroo
    truth = closed_configuration(robot, chain, np.random.default_rng(31), fraction=0.5)
    return robot, truth


class Session(NodeSession):
    """The node under test plus a probe that feeds it joint_states and imu."""

    def __init__(self, offsets_file, robot, extra_parameters=()):
        super().__init__(EXECUTABLE, ["-p", f"offsets_file:={offsets_file}", *extra_parameters],
                         "state_estimator_probe")
        self.robot = robot
        self.joint_states = self.probe.publisher(JointState, "joint_states")
        self.imu = self.probe.publisher(Imu, "imu")
        self.estimated = self.probe.record(JointState, "estimated_joint_states")
        self.odom = self.probe.record(Odometry, "odom")
        self.time = 1000.0

    def send(self, names, positions, velocities=None, stamp=None, acceleration=(0.0, 0.0, 9.81)):
        """joint_states, then an imu that is level and reads ``acceleration`` [m/s²] (None: not provided)."""
        message = JointState(name=list(names), position=[float(p) for p in positions])
        if velocities is not None:
            message.velocity = [float(v) for v in velocities]
        self.time += 0.005
        seconds = self.time if stamp is None else stamp
        message.header.stamp.sec, message.header.stamp.nanosec = int(seconds), int((seconds % 1) * 1e9)
        self.joint_states.publish(message)
        imu = Imu()
        imu.header.stamp.sec, imu.header.stamp.nanosec = int(self.time), int((self.time % 1) * 1e9)
        imu.orientation.w = 1.0
        if acceleration is None:
            imu.linear_acceleration_covariance[0] = -1.0  # REP-145: not provided
        else:
            imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z = acceleration
        self.imu.publish(imu)

    def stream(self, names, positions, count_more, timeout=30.0):
        """Send until ``count_more`` more estimated_joint_states have arrived, and an odom (its reader may match
        later than estimated_joint_states')."""
        target = len(self.estimated) + count_more
        assert self.probe.spin_until(lambda: len(self.estimated) >= target and self.odom, timeout,
                                     on_tick=lambda: self.send(names, positions, np.zeros(len(names))),
                                     period=0.005), f"no estimated_joint_states or odom; {self.report()}"

    def stream_past(self, names, positions, count_more, timeout=30.0):
        """Stream until ``count_more`` estimates of the samples sent from now on have arrived: not those of samples
        sent before, still in flight to the probe when the node changed (a busy machine delays a few)."""
        first = self.time + 0.005 - 1e-6  # the stamp of the next sample sent [s]
        assert self.probe.spin_until(
            lambda: sum(stamp_seconds(m.header.stamp) >= first for m in self.estimated) >= count_more, timeout,
            on_tick=lambda: self.send(names, positions, np.zeros(len(names))), period=0.005), \
            f"no estimated_joint_states of the samples sent since; {self.report()}"



def joint_readings(robot, q, names):
    return [q[robot.joint_q_index(name)] for name in names]


def test_publishes_passive_joints_of_the_closed_loops(tmp_path, kangaroo):
    robot, truth = kangaroo
    session = Session(tmp_path / "offsets.yaml", robot)
    try:
        # Reversed order plus an unrelated joint: the node must index by name and ignore extras.
        names = list(reversed(robot.actuated_names)) + ["some_other_joint"]
        positions = joint_readings(robot, truth, reversed(robot.actuated_names)) + [0.3]
        session.stream(names, positions, 20)
        last = session.estimated[-1]
        assert list(last.name) == list(robot.joint_names)
        estimate = np.array(last.position)
        np.testing.assert_allclose(estimate[robot.passive_q], truth[robot.passive_q], atol=1e-6)
        np.testing.assert_allclose(estimate[robot.actuated_q], truth[robot.actuated_q], atol=1e-9)
        assert session.odom and session.odom[-1].header.frame_id == "odom"
        assert session.odom[-1].child_frame_id == "base_link"
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_the_base_is_ballistic_while_contact_phases_say_aerial_and_lands_without_a_jump(tmp_path, kangaroo):
    """Joint readings that never change, an imu without linear_acceleration, and contact/<foot>/state (the contact
    estimator's phases) going from contact to aerial and back: in the air odom's height follows free fall,
    z(t) = z_0 − g t²/2 (the fitted curvature is −g/2); back in contact the base is anchored where the estimate put
    it and stays there. Without the phases the soles' kinematics, which do not change, would have held the base
    still throughout."""
    robot, truth = kangaroo
    session = Session(tmp_path / "offsets.yaml", robot)
    phases = [session.probe.publisher(Int8, f"contact/{foot}/state", sensor=False)
              for foot in ("left_foot", "right_foot")]
    names, positions = robot.actuated_names, joint_readings(robot, truth, robot.actuated_names)
    phase = [CONTACT]

    def tick():
        for publisher in phases:
            publisher.publish(Int8(data=phase[0]))
        session.send(names, positions, np.zeros(len(names)), acceleration=None)

    def heights(count):
        start = len(session.odom)
        assert session.probe.spin_until(lambda: len(session.odom) >= start + count, 30.0, on_tick=tick,
                                        period=0.005), session.report()
        return np.array([(stamp_seconds(m.header.stamp), m.pose.pose.position.z) for m in session.odom[start:]])

    try:
        standing = heights(40)[-10:]
        assert np.ptp(standing[:, 1]) < 1e-9
        phase[0] = AERIAL
        flight = heights(40)
        flying = flight[flight[:, 1] < standing[-1, 1] - 1e-6]
        assert len(flying) >= 20, flight
        t = flying[:, 0] - flying[0, 0]
        curvature = np.polyfit(t, flying[:, 1], 2)[0]
        assert curvature == pytest.approx(-9.81 / 2, rel=0.05)
        phase[0] = CONTACT
        landed = heights(80)
        # once the contact phases have reached the node (a loaded machine delays them), the base stays put
        moving = np.flatnonzero(np.abs(landed[:, 1] - landed[-1, 1]) > 1e-9)
        after = landed[moving[-1] + 1 if len(moving) else 0:, 1]
        assert len(after) >= 20, landed
        samples = np.concatenate([flight, landed])
        touchdown = samples[np.flatnonzero(np.abs(samples[:, 1] - after[0]) < 1e-9)[0]]
        fall = np.polyfit(t, flying[:, 1], 2)
        # anchored where the free fall had brought the estimate (not back at the soles' standing height); a sample
        # the node skipped makes one Euler step of the fall longer, hence the few millimetres
        assert after[0] == pytest.approx(np.polyval(fall, touchdown[0] - flying[0, 0]), abs=0.005)
        assert standing[-1, 1] - after[0] > 0.05
        assert session.probe.spin_until(lambda: (session.probe.diagnostic_values(DIAGNOSTIC) or {}).get(
            "contacts from") == "contact/<foot>/state", 5.0, on_tick=tick, period=0.005)
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_the_accelerometer_enters_the_base_estimate_with_its_time_constants(tmp_path, kangaroo):
    """Feet that hold the base still and an accelerometer with a bias b along x: the kinematic-inertial estimate
    (estimation/floating_base.py) settles at its steady state with the node's position_time_constant τ_p and
    velocity_time_constant τ_v, sampled every dt (α = dt / τ): v* = b τ_v (1 − α_v) ahead in velocity and
    p* = (v* + b dt / 2) τ_p (1 − α_p) in position; 1.8 mm and 0.04 m/s here at dt = 5 ms, 1.6 mm if the node
    takes every other sample."""
    robot, truth = kangaroo
    tau_p, tau_v, bias = 0.05, 0.2, 0.2
    session = Session(tmp_path / "offsets.yaml", robot, ["-p", f"position_time_constant:={tau_p}",
                                                         "-p", f"velocity_time_constant:={tau_v}"])
    names, positions = robot.actuated_names, joint_readings(robot, truth, robot.actuated_names)
    try:
        session.stream(names, positions, 5)
        start = session.odom[-1].pose.pose.position.x
        biased = lambda: session.send(names, positions, np.zeros(len(names)), acceleration=(bias, 0.0, 9.81))  # noqa
        assert session.probe.spin_until(lambda: len(session.odom) > 600, 60.0, period=0.005, on_tick=biased), \
            session.report()
        settled, dt = session.odom[-1], 0.005  # Session.send's stamps

        def steady(dt):
            velocity = bias * tau_v * (1.0 - dt / tau_v)
            return velocity, (velocity + bias * dt / 2) * tau_p * (1.0 - dt / tau_p)
        (velocity, position), (slower_velocity, slower_position) = steady(dt), steady(2 * dt)
        # every sample, or every other one where a loaded machine makes the node skip samples (best effort, depth 1)
        assert slower_velocity * 0.999 <= settled.twist.twist.linear.x <= velocity * 1.001
        assert slower_position * 0.999 <= settled.pose.pose.position.x - start <= position * 1.001
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_starts_with_the_shipped_parameter_file_and_reports_diagnostics(tmp_path, kangaroo):
    robot, _ = kangaroo
    parameters = Path(__file__).resolve().parents[2] / "config" / "state_estimator.yaml"
    session = Session(tmp_path / "offsets.yaml", robot, ["--params-file", str(parameters)])
    try:
        assert session.probe.spin_until(lambda: DIAGNOSTIC in session.probe.diagnostics, 15.0)
        assert session.probe.diagnostics[DIAGNOSTIC].message == "waiting for /joint_states"
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_bad_input_is_rejected_counted_and_the_last_good_state_kept(tmp_path, kangaroo):
    robot, truth = kangaroo
    session = Session(tmp_path / "offsets.yaml", robot)
    names = list(robot.actuated_names)
    good = joint_readings(robot, truth, names)
    try:
        session.stream(names, good, 5)
        bad_nan = list(good)
        bad_nan[0] = math.nan

        bad_inputs = {
            "not_finite": lambda: session.send(names, bad_nan),
            "missing_joints": lambda: session.send(names[1:], good[1:]),
            "length_mismatch": lambda: session.send(names, good, velocities=[0.0]),
            "stamp_backwards": lambda: session.send(names, good, stamp=1.0),
        }

        def uncounted():
            values = session.probe.diagnostic_values(DIAGNOSTIC) or {}
            return [reason for reason in bad_inputs if int(values.get(f"rejected: {reason}", 0)) < 1]

        ticks = count()

        def send_bad():
            # joint_states is best effort with a depth of 1: one bad message per tick, or a busy node would only
            # take the last of a burst; cycle through the kinds not counted yet
            pending = uncounted()
            if pending:
                bad_inputs[pending[next(ticks) % len(pending)]]()

        assert session.probe.spin_until(lambda: not uncounted(), 20.0, on_tick=send_bad, period=0.05), \
            f"never counted: {uncounted()}; {session.report()}"
        tf2_installed = importlib.util.find_spec("tf2_ros") is not None
        assert session.probe.diagnostic_values(DIAGNOSTIC)["TF odom → base_link"] == (
            "broadcasting" if tf2_installed else "off (tf2_ros is not installed)")
        session.stream(names, good, 5)  # still alive, still right
        np.testing.assert_allclose(np.array(session.estimated[-1].position)[robot.passive_q],
                                   truth[robot.passive_q], atol=1e-6)
        assert all(np.all(np.isfinite(m.position)) for m in session.estimated)
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_a_far_future_stamp_is_not_adopted_and_a_clock_jump_is_followed(tmp_path, kangaroo):
    """One stamp in 2038 must not make the valid stream after it look old (it used to: every later message was
    rejected as stamp_backwards until a restart); a source clock that restarts from 10 s is followed after
    clock_jump_messages stamps; diagnostics turn ERROR when joint_states stops and say why."""
    robot, truth = kangaroo
    session = Session(tmp_path / "offsets.yaml", robot, ["-p", "clock_jump_messages:=10"])
    names = list(robot.actuated_names)
    good = joint_readings(robot, truth, names)

    def figure(key):
        return float((session.probe.diagnostic_values(DIAGNOSTIC) or {}).get(key, "nan"))

    try:
        session.stream(names, good, 5)
        session.send(names, good, stamp=2.0 ** 31 - 1)
        assert session.probe.spin_until(lambda: figure("rejected: stamp_future") == 1.0, 5.0)
        session.stream(names, good, 20, timeout=1.0)  # recovers at once: the far-future stamp was not adopted

        session.time = 10.0  # the source restarts its clock: stamps 990 s back, going forward again
        session.stream(names, good, 5, timeout=5.0)
        # on joint_states and on imu; a busy node skips samples of either (best effort, depth 1), so the stream goes
        # on until each has taken its clock_jump_messages stamps
        assert session.probe.spin_until(lambda: figure("clock jumps followed") == 2.0, 10.0, period=0.005,
                                        on_tick=lambda: session.send(names, good, np.zeros(len(names)))), \
            session.report()
        assert figure("rejected: stamp_backwards") == 18.0  # on each, the tenth stamp of the run is followed
        assert session.estimated[-1].header.stamp.sec < 20  # the estimates carry the new clock

        def stale():
            status = session.probe.diagnostics.get(DIAGNOSTIC)
            return (status is not None and status.level == DiagnosticStatus.ERROR
                    and status.message.startswith("no good joint_states"))

        assert session.probe.spin_until(stale, 5.0), session.probe.diagnostics.get(DIAGNOSTIC)
        assert figure("last good joint_states [s ago]") > 0.5
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_calibration_service_saves_offsets_that_a_restart_reuses(tmp_path, kangaroo):
    robot, truth = kangaroo
    rng = np.random.default_rng(32)
    on_a_loop = ClosedChain(robot).relative_support[:, robot.actuated_v].any(axis=0)  # direct drives: absolute
    offsets = rng.uniform(-0.004, 0.004, len(robot.actuated_names)) * on_a_loop  # relative ball-screw encoders [m]
    raw = np.array(joint_readings(robot, truth, robot.actuated_names)) - offsets
    names = list(robot.actuated_names) + list(robot.measured_names)
    readings = list(raw) + joint_readings(robot, truth, robot.measured_names)
    offsets_file = tmp_path / "offsets.yaml"

    session = Session(offsets_file, robot)
    try:
        session.stream(names, readings, 3)
        assert session.probe.spin_until(lambda: DIAGNOSTIC in session.probe.diagnostics, 5.0)
        assert session.probe.diagnostic_values(DIAGNOSTIC)["actuator offsets"] == (
            f"none: {offsets_file} does not exist (relative encoders read as absolute)")
        response = session.probe.call(Trigger, "/state_estimator/calibrate", Trigger.Request())
        assert response.success, response.message
        assert "saved to" in response.message
        session.stream_past(names, readings, 10)
        np.testing.assert_allclose(np.array(session.estimated[-1].position), truth, atol=1e-6)
    finally:
        session.stop()
    assert offsets_file.is_file()

    restarted = Session(offsets_file, robot)
    try:
        restarted.stream(names, readings, 10)
        np.testing.assert_allclose(np.array(restarted.estimated[-1].position), truth, atol=1e-6)
    finally:
        restarted.stop()


def test_calibration_that_does_not_converge_keeps_previous_offsets(tmp_path, kangaroo):
    robot, truth = kangaroo
    names = list(robot.actuated_names) + list(robot.measured_names)
    readings = joint_readings(robot, truth, robot.actuated_names) + [x + 0.3 for x in
                                                                     joint_readings(robot, truth, robot.measured_names)]
    session = Session(tmp_path / "offsets.yaml", robot, ["-p", "calibration_max_iterations:=1"])
    try:
        session.stream(names, readings, 3)
        response = session.probe.call(Trigger, "/state_estimator/calibrate", Trigger.Request())
        assert not response.success
        assert "did not converge: ‖e‖ = " in response.message and "previous offsets kept" in response.message
        assert not (tmp_path / "offsets.yaml").exists()
    finally:
        session.stop()


def test_unusable_robot_file_is_a_one_line_error_not_a_traceback(tmp_path):
    process = start([EXECUTABLE], ros_args=["-p", f"urdf_file:={tmp_path / 'missing.urdf'}"])
    _, stderr = process.communicate(timeout=60)  # exits by itself
    assert process.returncode == 1
    assert stderr.strip() == f"state_estimator: error: {tmp_path / 'missing.urdf'}: no such file"


def calibration_readings(robot, truth, seed):
    """(names, readings, offsets) of relative ball-screw encoders with random offsets plus the absolute ones."""
    on_a_loop = ClosedChain(robot).relative_support[:, robot.actuated_v].any(axis=0)
    offsets = np.random.default_rng(seed).uniform(-0.004, 0.004, len(robot.actuated_names)) * on_a_loop
    raw = np.array(joint_readings(robot, truth, robot.actuated_names)) - offsets
    names = list(robot.actuated_names) + list(robot.measured_names)
    return names, list(raw) + joint_readings(robot, truth, robot.measured_names), offsets


def test_an_unusable_offsets_file_is_reported_left_alone_and_kept_by_a_calibration(tmp_path, kangaroo):
    """A corrupt offsets file: the node starts uncalibrated and says why (log and diagnostics), never rewrites the
    file by itself, and a calibration keeps it byte for byte as offsets.yaml.previous."""
    robot, truth = kangaroo
    names, readings, _ = calibration_readings(robot, truth, 33)
    offsets_file = tmp_path / "offsets.yaml"
    offsets_file.write_text("actuator_offsets: [unclosed\n")
    original = offsets_file.read_bytes()
    session = Session(offsets_file, robot)
    try:
        session.stream(names, readings, 5)

        def reported():
            status = session.probe.diagnostics.get(DIAGNOSTIC)
            return status is not None and status.level == DiagnosticStatus.WARN and \
                "actuator offsets not loaded" in status.message and str(offsets_file) in status.message

        assert session.probe.spin_until(reported, 5.0, on_tick=lambda: session.send(names, readings),
                                        period=0.005), session.probe.diagnostics.get(DIAGNOSTIC)
        assert offsets_file.read_bytes() == original
        response = session.probe.call(Trigger, "/state_estimator/calibrate", Trigger.Request())
        assert response.success, response.message
        session.stream_past(names, readings, 10)
        np.testing.assert_allclose(np.array(session.estimated[-1].position), truth, atol=1e-6)
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0 and "Traceback" not in stderr, stderr
    assert "actuator offsets not loaded" in stderr and str(offsets_file) in stderr
    assert (tmp_path / "offsets.yaml.previous").read_bytes() == original
    assert set(yaml.safe_load(offsets_file.read_text())["actuator_offsets"]) == set(robot.actuated_names)


@pytest.mark.parametrize("where", ["read-only file", "folder that cannot exist"])
def test_a_calibration_that_cannot_be_saved_says_so_and_the_node_keeps_estimating(tmp_path, kangaroo, where):
    """The calibrated offsets are used until the node stops; a good read-only file is not touched."""
    robot, truth = kangaroo
    names, readings, _ = calibration_readings(robot, truth, 34)
    if where == "read-only file":
        offsets_file = tmp_path / "offsets.yaml"
        offsets_file.write_text(yaml.safe_dump({"actuator_offsets": {name: 0.0 for name in robot.actuated_names}}))
        offsets_file.chmod(0o444)
        original = offsets_file.read_bytes()
    else:
        (tmp_path / "a_file").write_text("")
        offsets_file = tmp_path / "a_file" / "offsets.yaml"  # its folder is a regular file: nobody can create it
    session = Session(offsets_file, robot)
    try:
        session.stream(names, readings, 5)
        uncalibrated = np.array(session.estimated[-1].position)
        assert np.abs(uncalibrated - truth).max() > 1e-4  # the offsets matter
        response = session.probe.call(Trigger, "/state_estimator/calibrate", Trigger.Request())
        assert not response.success
        assert f"but not saved to {offsets_file}" in response.message and "in use until the node stops" in \
            response.message, response.message
        session.stream(names, readings, 10)
        np.testing.assert_allclose(np.array(session.estimated[-1].position), truth, atol=1e-6)
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0 and "Traceback" not in stderr, stderr
    if where == "read-only file":
        assert offsets_file.read_bytes() == original
        assert not (tmp_path / "offsets.yaml.previous").exists()
    else:
        assert not offsets_file.parent.is_dir()
