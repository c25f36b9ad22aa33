"""loop_closure_mapper in its own process, over DDS: the actuator command, its interface parameter, bad input,
the hold at a singularity, and the joint-impedance command with its run-time gains and its stale-input hold."""
import math

import numpy as np
import pytest
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from humanoid_balance.resources import executable
from support.model_fixtures import closed_configuration
from support.ros_probe import NodeSession

pytestmark = pytest.mark.dds
EXECUTABLE = str(executable("loop_closure_mapper"))
DIAGNOSTIC = "loop_closure_mapper: mapping"


@pytest.fixture(scope="module")
def kangaroo(kangaroo):
    robot, chain = kangaroo
    return robot, closed_configuration(robot, chain, np.random.default_rng(61), fraction=0.3)


class Session(NodeSession):
    def __init__(self, robot, ros_args=()):
        super().__init__(EXECUTABLE, ros_args, probe_name="mapper_probe")
        self.robot = robot
        self.joint_command = self.probe.publisher(JointState, "balance/joint_command", sensor=False)
        self.commands = self.probe.record(Float64MultiArray, "actuator_commands")
        self.states = self.probe.record(JointState, "actuator_states")
        self.time = 4000.0

    def send(self, positions, velocities=None, names=None, efforts=None):
        self.time += 0.005
        names = list(names or self.robot.output_names)
        message = JointState(name=names, position=[float(x) for x in positions],
                             velocity=[float(x) for x in (np.zeros(len(names)) if velocities is None else velocities)],
                             effort=[] if efforts is None else [float(x) for x in efforts])
        message.header.stamp.sec, message.header.stamp.nanosec = int(self.time), int((self.time % 1) * 1e9)
        self.joint_command.publish(message)

    def set(self, name, value):
        request = SetParameters.Request(parameters=[Parameter(
            name=name, value=ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=value))])
        return self.probe.call(SetParameters, "/loop_closure_mapper/set_parameters", request).results[0]

    def set_doubles(self, name, values):
        request = SetParameters.Request(parameters=[Parameter(
            name=name, value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=values))])
        return self.probe.call(SetParameters, "/loop_closure_mapper/set_parameters", request).results[0]



def test_actuator_commands_in_actuated_order_and_interface_switch(kangaroo):
    robot, truth = kangaroo
    session = Session(robot)
    outputs = truth[robot.output_q]
    rates = np.linspace(-0.2, 0.2, len(outputs))
    # Commands arrive as a motion from the reference posture, as from the balancer.
    path = [robot.reference_q[robot.output_q] + s * (outputs - robot.reference_q[robot.output_q])
            for s in np.linspace(0.0, 1.0, 20)]
    progress = iter(path)

    def tick():
        session.send(next(progress, outputs), rates)

    try:
        assert session.run(lambda: len(session.commands) > 30, tick), session.report()
        data = np.array(session.commands[-1].data)
        assert data.shape == (len(robot.actuated_names),) and np.all(np.isfinite(data))
        np.testing.assert_allclose(data, truth[robot.actuated_q], atol=1e-9)
        assert list(session.states[-1].name) == list(robot.actuated_names)
        assert not session.set("command_interface", "torque").successful
        assert session.set("command_interface", "velocity").successful
        count = len(session.commands)
        assert session.run(lambda: len(session.commands) > count + 10, tick)
        np.testing.assert_allclose(session.commands[-1].data, session.states[-1].velocity, atol=1e-12)
        assert np.abs(session.commands[-1].data).max() > 0.0
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_bad_commands_are_rejected_and_the_last_good_one_kept(kangaroo):
    robot, _ = kangaroo
    session = Session(robot)
    reference = robot.reference_q[robot.output_q]
    try:
        assert session.run(lambda: len(session.commands) > 5, lambda: session.send(reference))
        good = list(session.commands[-1].data)
        nan = reference.copy()
        nan[0] = math.nan
        bad_commands = {  # the mapper keeps only the latest command: one bad one at a time, each counted
            "rejected: not_finite": lambda: session.send(nan),
            "rejected: missing_joints": lambda: session.send(reference[1:], names=robot.output_names[1:]),
            "rejected: unknown_joints": lambda: session.send(np.r_[reference, 0.0],
                                                             names=[*robot.output_names, "tail"]),
        }
        for key, send in bad_commands.items():
            send()

            def counted():
                return (session.probe.diagnostic_values(DIAGNOSTIC) or {}).get(key) == "1"

            assert session.probe.spin_until(counted, 10.0), (key, session.probe.diagnostic_values(DIAGNOSTIC))
        np.testing.assert_allclose(session.commands[-1].data, good)
        assert session.probe.diagnostic_values(DIAGNOSTIC)["publishers of balance/joint_command"] == "1"  # the probe
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_driving_towards_a_singularity_holds_the_last_safe_command(kangaroo):
    robot, _ = kangaroo
    session = Session(robot)
    outputs = robot.reference_q[robot.output_q].copy()
    knee = robot.output_names.index("left_knee")
    outputs[robot.output_names.index("left_ankle_pitch")] = 0.0  # held flat: the ankle linkage nears a toggle
    values = iter(np.linspace(0.0, 1.8, 120))

    def tick():
        outputs[knee] = next(values, 1.8)
        session.send(outputs)

    def holding():
        status = session.probe.diagnostics.get(DIAGNOSTIC)
        return status is not None and status.message.startswith("holding the last safe command")

    try:
        assert session.run(lambda: len(session.commands) > 5, lambda: session.send(outputs)), session.report()
        assert session.run(holding, tick, timeout=20.0), session.report()
        held = list(session.commands[-1].data)
        assert session.run(lambda: False, tick, timeout=0.5) is False
        np.testing.assert_allclose(session.commands[-1].data, held)
        assert all(np.all(np.isfinite(c.data)) for c in session.commands)
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr


def test_joint_impedance_command_its_gains_at_run_time_and_the_stale_hold(kangaroo):
    """command_interface impedance: five rows (position, velocity, effort, stiffness, damping), also one topic per
    field. The efforts pass the virtual-power check τ_aᵀ θ̇_a = τ_qᵀ q̇ (eqs. 22–23); doubling the outputs'
    revolute stiffness doubles every actuator's (all of kangaroo_like's outputs are revolute: K_a = Jᵀ K_q J);
    a negative gain is refused and the node keeps its own. Once balance/joint_command stops, the last posture is
    held with zero velocity and zero feed-forward effort, never a stale torque."""
    robot, truth = kangaroo
    fields = ("position", "velocity", "effort", "stiffness", "damping")
    session = Session(robot, ["-p", "command_interface:=impedance", "-p", "per_interface_topics:=true",
                              "-p", "command_timeout:=0.2"])
    per_field = {field: session.probe.record(Float64MultiArray, f"actuator_commands/{field}") for field in fields}
    outputs = truth[robot.output_q]
    rates = np.linspace(-0.2, 0.2, len(outputs))
    torques = np.linspace(-30.0, 30.0, len(outputs))
    n = len(robot.actuated_names)
    path = iter([robot.reference_q[robot.output_q] + s * (outputs - robot.reference_q[robot.output_q])
                 for s in np.linspace(0.0, 1.0, 20)])

    def tick():
        session.send(next(path, outputs), rates, efforts=torques)

    def rows():
        return np.array(session.commands[-1].data).reshape(len(fields), n)

    try:
        assert session.run(lambda: len(session.commands) > 30, tick), session.report()
        layout = session.commands[-1].layout.dim
        assert [d.label for d in layout] == [",".join(fields), "actuators"] and [d.size for d in layout] == [5, n]
        position, velocity, effort, stiffness, damping = rows()
        np.testing.assert_allclose(position, truth[robot.actuated_q], atol=1e-9)
        assert effort @ velocity == pytest.approx(torques @ rates, rel=1e-9)  # virtual power
        assert np.all(stiffness > 0.0) and np.all(damping > 0.0)
        assert session.probe.spin_until(lambda: all(per_field.values()), 5.0)
        np.testing.assert_allclose(per_field["stiffness"][-1].data, stiffness)

        assert session.set_doubles("impedance_stiffness", [20000.0, 100.0]).successful
        assert session.run(lambda: np.allclose(rows()[3], 2.0 * stiffness, rtol=1e-6), tick, timeout=5.0), rows()[3]
        refused = session.set_doubles("impedance_damping", [200.0, -3.0])
        assert not refused.successful and "impedance_damping" in refused.reason
        np.testing.assert_allclose(rows()[4], damping, rtol=1e-6)

        held = len(session.commands)
        assert session.probe.spin_until(lambda: len(session.commands) > held + 3, 3.0)  # no commands sent now
        position_held, velocity_held, effort_held, _, _ = rows()
        np.testing.assert_allclose(position_held, position, atol=1e-9)
        assert not velocity_held.any() and not effort_held.any()
        def reports_stale():
            status = session.probe.diagnostics.get(DIAGNOSTIC)
            return status is not None and "stale" in status.message

        assert session.probe.spin_until(reports_stale, 3.0), session.probe.diagnostics.get(DIAGNOSTIC)
    finally:
        returncode, _, stderr = session.stop()
    assert returncode == 0, stderr
