"""loop_closure_mapper: serial-equivalent joint commands → linear-actuator commands (lifecycle node).

    balance/joint_command (JointState: outputs, position/velocity/effort) ─> ActuatorMap.update
        ─> actuator_commands (std_msgs/Float64MultiArray in the `actuated` order: the field chosen by
           `command_interface`, always full length and NaN-free — a ros2_control forward_command_controller's
           shape), actuator_states (JointState with names, for people and plots), /diagnostics

Near a singularity (cond(P·J_m) > max_condition) or when the outputs cannot be realised, the last safe
command is held and reported; limits clamp and are counted.
"""
import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from humanoid_balance.mapping import ActuatorMap
from humanoid_balance.model import ClosureError, ModelError, SingularConfigurationError, load_robot
from humanoid_balance.nodes.common import (LATEST_QOS, RELIABLE_QOS, Diagnostics, InputGuard, autostarted,
                                           declare_robot, describe, run, subscribe, timer)
from humanoid_balance.nodes.messages import Float64ArrayWriter, JointStateReader, JointStateWriter
from humanoid_balance.nodes.timing import CallbackTiming, RateMeter

INTERFACES = ("position", "velocity", "effort")


class LoopClosureMapperNode(LifecycleNode):
    def __init__(self, **node_options):
        super().__init__("loop_closure_mapper", **node_options)
        self.robot_config = declare_robot(self)
        self.declare_parameter("command_interface", "position",
                               describe(f"field sent on actuator_commands: {' | '.join(INTERFACES)}"))
        self.declare_parameter("max_condition", 200.0, describe("refuse above this cond(P·J_m) (singularity)", True))
        self.declare_parameter("efforts_as_motor_torques", False,
                               describe("ball-screw efforts as motor torques [N·m] (eq. 47) instead of forces [N]",
                                        True))
        self.declare_parameter("autostart", True, describe("configure and activate at start-up", True))
        self.core = None
        self.configuration_error = None  # why the last configuration was refused
        self.guard = InputGuard(self)
        self.add_on_set_parameters_callback(self.on_set_parameters)

    def on_configure(self, state):
        value = lambda name: self.get_parameter(name).value  # noqa: E731
        try:
            self.robot = load_robot(self.robot_config.urdf_file, self.robot_config.loops)
            self.core = ActuatorMap(self.robot, max_condition=value("max_condition"),
                                    efforts_as_motor_torques=value("efforts_as_motor_torques"))
        except ModelError as error:
            self.configuration_error = str(error)
            self.get_logger().error(f"configuration refused: {error}")
            return TransitionCallbackReturn.FAILURE
        self.reader = JointStateReader("balance/joint_command", self.robot.output_names, only_known=True)
        self.commands = Float64ArrayWriter(len(self.robot.actuated_names))
        self.states = JointStateWriter(self.robot.actuated_names)
        self.interface = value("command_interface")
        self.zeros = np.zeros(len(self.robot.output_names))
        self.rate = RateMeter()
        self.timing = CallbackTiming()
        self.last_safe = None
        self.refusals = 0
        self.clamps = 0
        self.problem = None
        self.condition = float("nan")
        subscribe(self, JointState, "balance/joint_command", self.on_command, LATEST_QOS)
        self.command_publisher = self.create_lifecycle_publisher(Float64MultiArray, "actuator_commands", RELIABLE_QOS)
        self.state_publisher = self.create_lifecycle_publisher(JointState, "actuator_states", RELIABLE_QOS)
        self.diagnostics = Diagnostics(self, "mapping")
        timer(self, 1.0, self.publish_diagnostics)
        return TransitionCallbackReturn.SUCCESS

    def on_set_parameters(self, parameters):
        for parameter in parameters:
            if parameter.name == "command_interface":
                if parameter.value not in INTERFACES:
                    return SetParametersResult(successful=False, reason=f"command_interface must be one of "
                                               f"{INTERFACES}, got '{parameter.value}'")
                if self.core is not None:
                    self.interface = parameter.value
        return SetParametersResult(successful=True)

    def on_command(self, message):
        timing = self.timing.begin()
        self.guard.check_stamp("balance/joint_command", message.header.stamp)
        positions, velocities, efforts, _ = self.reader.read(message)
        timing.lap()
        try:
            command = self.core.update(positions, self.zeros if velocities is None else velocities,
                                       self.zeros if efforts is None else efforts)
        except (ClosureError, SingularConfigurationError) as error:
            self.refusals += 1
            self.problem = f"holding the last safe command: {error}"
            self.guard.log.warning("refused", self.problem)
            if self.last_safe is not None:
                self.publish(message.header.stamp, self.last_safe)
            return
        self.problem = None
        self.condition = command.condition_number
        self.clamps += len(command.clamped)
        if command.clamped:
            self.guard.log.warning("clamped", f"clamped to limits: {', '.join(command.clamped)}")
        self.last_safe = command
        timing.lap()
        self.publish(message.header.stamp, command)
        timing.lap()
        self.rate.tick()

    def publish(self, stamp, command):
        self.command_publisher.publish(self.commands.fill(getattr(command, self.interface)))
        if self.state_publisher.get_subscription_count():  # for people and plots: only when someone listens
            self.state_publisher.publish(self.states.fill(stamp, command.position, command.velocity, command.effort))

    def publish_diagnostics(self):
        if self.core is None:
            return
        values = {"update rate [Hz]": self.rate.hz, "cond(P·J_m)": self.condition, "refused updates": self.refusals,
                  "clamped values": self.clamps, "command interface": self.interface}
        values.update(self.timing.figures())
        values.update(self.guard.figures())
        if self.problem is not None:
            self.diagnostics.publish("WARN", self.problem, values)
        elif self.last_safe is None:
            self.diagnostics.publish("WARN", "waiting for balance/joint_command", values)
        else:
            self.diagnostics.publish("OK", "mapping", values)


def main(args=None):
    return run(autostarted(LoopClosureMapperNode), "loop_closure_mapper", args)
