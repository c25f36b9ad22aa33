"""loop_closure_mapper: serial-equivalent joint commands → linear-actuator commands (lifecycle node).

    balance/joint_command (JointState: outputs, position/velocity/effort) ─> ActuatorMap.update
        ─> actuator_commands (std_msgs/Float64MultiArray in the `actuated` order, always full length and NaN-free:
           the field chosen by `command_interface` — a ros2_control forward_command_controller's shape — or, for
           `impedance`, five rows of it: position, velocity, effort, stiffness, damping),
           actuator_commands/<field> (one Float64MultiArray per field, with `per_interface_topics`: one
           forward_command_controller per command interface), actuator_states (JointState with names: position,
           velocity, effort), /diagnostics

Joint impedance: the outputs' stiffness and damping (`impedance_stiffness`, `impedance_damping`, per output kind,
changeable at run time) become per-actuator gains through the loops (mapping/joint_impedance.py), bounded by
`max_stiffness` and `max_damping` per actuator kind. Position drives of the robot's `drive_stiffness` and
`drive_damping`: with `compliance_compensation` the position command is advanced by the drives' deflection under
the command's effort and velocity (mapping/actuator_map.py), which a dynamic motion such as the VIIP jump needs.
Near a singularity (cond(P·J_m) > max_condition) or when the outputs cannot be realised, the last safe command is
held and reported; limits clamp and are counted. No balance/joint_command for `command_timeout`: the last safe
posture is held with zero velocity and zero feed-forward effort, never a stale torque.
Stamps: out-of-line stamps (backwards, or more than max_stamp_lead ahead of the node's clock) are rejected and
not adopted; a sustained jump of the source's clock is followed (nodes/stamp_policy.py).
"""
import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from humanoid_balance.mapping import COMMAND_FIELDS, IMPEDANCE_FIELDS, ActuatorMap
from humanoid_balance.loop import MappingStage
from humanoid_balance.model import ModelError, load_robot
from humanoid_balance.nodes.diagnostics import Diagnostics
from humanoid_balance.nodes.entry import autostarted, run
from humanoid_balance.nodes.input_guard import InputGuard, advertise, subscribe, timer
from humanoid_balance.nodes.parameters import declare_robot, describe
from humanoid_balance.nodes.qos import LATEST_QOS, RELIABLE_QOS
from humanoid_balance.nodes.messages import Float64ArrayWriter, JointStateReader, JointStateWriter, RejectedMessage
from humanoid_balance.nodes.timing import CallbackTiming, RateMeter

INTERFACES = tuple(COMMAND_FIELDS)
GAIN_PARAMETERS = ("impedance_stiffness", "impedance_damping", "max_stiffness", "max_damping")
LIMIT_TOLERANCE = 1e-6  # a commanded output this far outside its URDF limits is refused [m, rad]


class LoopClosureMapperNode(LifecycleNode):
    def __init__(self, hub=None, **node_options):
        super().__init__("loop_closure_mapper", **node_options)
        self.hub = hub  # balance_stack's Composition (nodes/composition.py), None: every topic over DDS
        self.robot_config = declare_robot(self, run_time=("impedance_stiffness", "impedance_damping"))
        self.declare_parameter("command_interface", "position",
                               describe(f"sent on actuator_commands: {' | '.join(INTERFACES)}"))
        self.declare_parameter("max_stiffness", [1e6, 1e4], describe(
            "largest actuator stiffness [N/m, N·m/rad] (prismatic, revolute)"))
        self.declare_parameter("max_damping", [1e4, 1e2], describe(
            "largest actuator damping [N·s/m, N·m·s/rad] (prismatic, revolute)"))
        self.declare_parameter("per_interface_topics", False, describe(
            "also publish each field on actuator_commands/<field> (one forward_command_controller each)", True))
        self.declare_parameter("command_timeout", 0.1, describe(
            "no balance/joint_command for this long: hold the posture with zero feed-forward [s]", True))
        self.declare_parameter("max_condition", 200.0, describe("refuse above this cond(P·J_m) (singularity)", True))
        self.declare_parameter("efforts_as_motor_torques", False,
                               describe("ball-screw efforts as motor torques [N·m] (eq. 47) instead of forces [N]",
                                        True))
        self.declare_parameter("compliance_compensation", False, describe(
            "advance position commands by the drives' deflection (τ + D θ̇) / K, K and D the robot's drive_stiffness "
            "and drive_damping (position interface only)", True))
        self.declare_parameter("autostart", True, describe("configure and activate at start-up", True))
        self.core = None   # the ActuatorMap, once configured
        self.stage = None  # ... in the MappingStage (humanoid_balance.loop) that holds the last safe command
        self.configuration_error = None  # why the last configuration was refused
        self.guard = InputGuard(self, "balance/joint_command", "command_timeout")
        self.add_on_set_parameters_callback(self.on_set_parameters)

    def on_configure(self, state):
        value = lambda name: self.get_parameter(name).value  # noqa: E731
        try:
            self.robot = load_robot(self.robot_config.urdf_file, self.robot_config.loops)
            compensation = value("compliance_compensation")
            self.interface = checked_interface(value("command_interface"), value("efforts_as_motor_torques"),
                                               compensation)
            self.core = ActuatorMap(self.robot, max_condition=value("max_condition"),
                                    efforts_as_motor_torques=value("efforts_as_motor_torques"),
                                    impedance=(value("impedance_stiffness"), value("impedance_damping")),
                                    max_gains=(value("max_stiffness"), value("max_damping")),
                                    drive_compliance=(value("drive_stiffness"), value("drive_damping"))
                                    if compensation else None)
            self.stage = MappingStage(self.core)
        except (ModelError, ValueError) as error:
            self.configuration_error = str(error)
            self.get_logger().error(f"configuration refused: {error}")
            return TransitionCallbackReturn.FAILURE
        self.reader = JointStateReader("balance/joint_command", self.robot.output_names, only_known=True)
        actuators = len(self.robot.actuated_names)
        self.commands = {interface: Float64ArrayWriter(actuators, fields if len(fields) > 1 else None)
                         for interface, fields in COMMAND_FIELDS.items()}
        self.states = JointStateWriter(self.robot.actuated_names)
        self.zeros = np.zeros(len(self.robot.output_names))
        lower, upper = self.robot.position_limits(self.robot.output_names)
        self.lower, self.upper = lower - LIMIT_TOLERANCE, upper + LIMIT_TOLERANCE
        self.command_timeout = value("command_timeout")
        self.holds = 0                 # timer ticks that held the posture for want of commands
        self.last_stamp = None         # stamp of the last good balance/joint_command since the configuration
        self.rate = RateMeter()
        self.timing = CallbackTiming()
        self.problem = None
        self.condition = float("nan")
        subscribe(self, JointState, "balance/joint_command", self.on_command, LATEST_QOS)
        self.command_publisher = advertise(self, Float64MultiArray, "actuator_commands", RELIABLE_QOS)
        self.state_publisher = advertise(self, JointState, "actuator_states", RELIABLE_QOS)
        self.field_outputs = {  # field → (publisher, message writer), with per_interface_topics
            field: (advertise(self, Float64MultiArray, f"actuator_commands/{field}", RELIABLE_QOS),
                    Float64ArrayWriter(actuators))
            for field in (IMPEDANCE_FIELDS if value("per_interface_topics") else ())}
        self.diagnostics = Diagnostics(self, "mapping")
        timer(self, 1.0, self.publish_diagnostics)
        timer(self, 0.25 * self.command_timeout, self.check_commands)
        return TransitionCallbackReturn.SUCCESS

    def on_set_parameters(self, parameters):
        """Refuse a command interface or gains the map cannot take, with the reason; the node keeps its own."""
        values = {parameter.name: parameter.value for parameter in parameters}
        current = lambda name: values.get(name, self.get_parameter(name).value)  # noqa: E731
        try:
            if "command_interface" in values:
                interface = checked_interface(values["command_interface"], current("efforts_as_motor_torques"),
                                              current("compliance_compensation"))
            for name in GAIN_PARAMETERS:
                if name in values and (len(values[name]) != 2 or not all(np.isfinite(values[name]))
                                       or min(values[name]) < 0.0):
                    raise ValueError(f"{name} must be two finite values ≥ 0 (prismatic, revolute), got "
                                     f"{list(values[name])}")
            if self.core is not None and any(name in values for name in GAIN_PARAMETERS):
                self.core.set_impedance(current("impedance_stiffness"), current("impedance_damping"))
                self.core.set_gain_limits(current("max_stiffness"), current("max_damping"))
        except ValueError as error:
            return SetParametersResult(successful=False, reason=str(error))
        if "command_interface" in values and self.core is not None:
            self.interface = interface
        return SetParametersResult(successful=True)

    def on_command(self, message):
        timing = self.timing.begin()
        self.guard.check_stamp("balance/joint_command", message.header.stamp)
        positions, velocities, efforts, _ = self.reader.read(message)
        outside = (positions < self.lower) | (positions > self.upper)
        if outside.any():
            joint = outside.argmax()
            raise RejectedMessage("outside_limits", f"balance/joint_command: {self.robot.output_names[joint]} at "
                                  f"{positions[joint]:.4g} is outside its URDF limits")
        timing.lap()
        mapped = self.stage.update(positions, self.zeros if velocities is None else velocities,
                                   self.zeros if efforts is None else efforts)
        timing.lap()
        self.adopt(message.header.stamp, mapped)
        timing.lap()

    def adopt(self, stamp, mapped):
        """The tick's Mapped actuator command for the joint command stamped ``stamp``: published (the last safe one
        when refused, with the reason in diagnostics)."""
        self.last_stamp = stamp
        command, refused = mapped
        if refused is not None:
            self.problem = f"holding the last safe command: {refused}"
            self.guard.log.warning("refused", self.problem)
            if command is not None:
                self.publish(stamp, command)
            return
        self.problem = None
        self.condition = command.condition_number
        if command.clamped:
            self.guard.log.warning("clamped", f"clamped to limits: {', '.join(command.clamped)}")
        self.publish(stamp, command)
        self.rate.tick()

    def stale(self):
        """No good balance/joint_command for command_timeout on the node's clock (a plant in lockstep is never
        late); the age is the InputGuard's."""
        age = self.guard.input_age()
        return self.last_stamp is not None and age is not None and age > self.command_timeout

    def check_commands(self):
        """Stale commands: hold the last safe posture with zero velocity and zero feed-forward effort."""
        if self.stage.last_safe is None or not self.stale():
            return
        self.holds += 1
        # stamped as the command it holds, so never ahead of the next real command's stamp
        self.publish(self.last_stamp, self.stage.held())

    def publish(self, stamp, command):
        fields = COMMAND_FIELDS[self.interface]
        values = [getattr(command, field) for field in fields]
        self.command_publisher.publish(self.commands[self.interface].fill(values if len(values) > 1 else values[0]))
        for field, value in zip(fields, values):
            if field in self.field_outputs:
                publisher, writer = self.field_outputs[field]
                publisher.publish(writer.fill(value))
        if self.state_publisher.wanted():  # for people and plots: only when someone listens
            self.state_publisher.publish(self.states.fill(stamp, command.position, command.velocity, command.effort))

    def publish_diagnostics(self):
        if self.core is None:
            return
        stage = self.stage
        values = {"update rate [Hz]": self.rate.hz, "cond(P·J_m)": self.condition, "refused updates": stage.refusals,
                  "clamped values": stage.clamps, "command interface": self.interface,
                  "posture holds (no balance/joint_command)": self.holds}
        if self.interface == "impedance" and stage.last_safe is not None:
            values.update({"actuator stiffness min / max": f"{stage.last_safe.stiffness.min():.4g} / "
                                                            f"{stage.last_safe.stiffness.max():.4g}",
                           "stiffness coupling dropped (per-actuator gains)": self.core.coupling()})
        values.update(self.timing.figures())
        values.update(self.guard.figures())
        if self.problem is not None:
            self.diagnostics.publish("WARN", self.problem, values)
        elif self.stale():
            self.diagnostics.publish("WARN", f"{self.resolve_topic_name('balance/joint_command')} stale: holding the "
                                     "posture with zero feed-forward", values)
        elif stage.last_safe is None:
            self.diagnostics.publish("WARN", f"waiting for {self.resolve_topic_name('balance/joint_command')}", values)
        else:
            self.diagnostics.publish("OK", "mapping", values)


def checked_interface(interface, efforts_as_motor_torques, compliance_compensation=False):
    """The command interface, or ValueError naming the parameter and the choices."""
    if interface not in INTERFACES:
        raise ValueError(f"parameter command_interface: '{interface}' is not one of {', '.join(INTERFACES)}")
    if interface == "impedance" and efforts_as_motor_torques:
        raise ValueError("parameter command_interface: impedance gains are in actuator units (N/m for ball screws); "
                         "it cannot be combined with efforts_as_motor_torques")
    if compliance_compensation and interface != "position":
        raise ValueError(f"parameter compliance_compensation: it advances position targets of stiff drives, so it "
                         f"needs command_interface position, not '{interface}'")
    return interface


FACTORY = autostarted(LoopClosureMapperNode)
"""What builds this node (the demo and balance_stack build it too)."""


def main(args=None):
    return run(FACTORY, "loop_closure_mapper", args)
