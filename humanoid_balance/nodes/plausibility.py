"""A node's plausibility checks on the state it reads (estimation.plausibility, issue 54 item 1): the parameters that
bound a reading (defaults from the robot's model), the gates of its inputs, a reading beyond them rejected as
``implausible`` (counted, the last good state kept), and a disagreement that persisted taken over with a warning and
a count in /diagnostics — never silently."""
from typing import NamedTuple, Optional

import numpy as np
import pinocchio as pin

from humanoid_balance.estimation.plausibility import (PERSISTENCE, MotionGate, RangeGate, base_bounds,
                                                      joint_speed_bounds, pose_difference, rotation_difference,
                                                      weight_ratio)
from humanoid_balance.nodes.messages import RejectedMessage
from humanoid_balance.nodes.parameters import describe

__all__ = ["Gate", "Plausibility", "PARAMETERS", "declare"]

BASE_COMPONENTS = ("the base's x", "the base's y", "the base's z", "the base's attitude")
BASE_UNITS = ("m", "m", "m", "rad")


class Gate(NamedTuple):
    """An input's MotionGate (and RangeGate, if its readings have a range) and what its components are called in a
    rejection, with their units."""

    motion: MotionGate
    names: tuple
    units: tuple
    range: Optional[RangeGate] = None


PARAMETERS = {  # name → (default, description); a base bound of 0: from the robot's model
    "max_joint_speed_ratio": (1.5, "a joint reading that moved more than this many times its URDF velocity limit "
                                   "since the last accepted one (plus joint_step_tolerance) is implausible"),
    "joint_step_tolerance": (0.05, "what a joint reading may move on top of its speed limit [rad or m]"),
    "joint_range_tolerance": (0.2, "a joint reading that moved further beyond its URDF range (by more than "
                                    "joint_step_tolerance since the last accepted one) is implausible [rad or m]"),
    "max_base_speed": (0.0, "a base position that moved faster since the last accepted one is implausible [m/s] "
                            "(0: the speed of a fall from the standing CoM height, √(2 g h))"),
    "max_base_angular_speed": (0.0, "a base attitude that turned faster is implausible [rad/s] (0: max_base_speed "
                                    "about the feet, over the standing CoM height)"),
    "base_step_tolerance": (0.02, "what a base position may move on top of its speed bound [m]"),
    "attitude_step_tolerance": (0.05, "what a base attitude may turn on top of its angular speed bound [rad]"),
    "implausible_takeover_time": (PERSISTENCE, "implausible readings that agree with each other for this long [s of "
                                               "their stamps] are taken over (a reset, a relocalisation) and reported"),
    "max_contact_force_ratio": (6.0, "a contact force beyond this many times the robot's weight is implausible"),
}


def declare(node):
    """Declare the PARAMETERS on ``node`` (once: a lifecycle node declares them before it is configured, since a
    parameter declared in a transition is also a parameter change)."""
    for name, (default, text) in PARAMETERS.items():
        if not node.has_parameter(name):
            node.declare_parameter(name, default, describe(text, True))


def standing_com_height(robot, soles):
    """The CoM's height above the lowest of the ``soles`` (frame names) in the robot's reference posture [m]."""
    data = robot.model.createData()
    com = pin.centerOfMass(robot.model, data, robot.reference_q)
    pin.updateFramePlacements(robot.model, data)
    return float(com[2] - min(data.oMf[robot.model.getFrameId(sole)].translation[2] for sole in soles))


def rotation_matrix(quaternion_xyzw):
    """The rotation matrix of a unit quaternion (x, y, z, w)."""
    return pin.Quaternion(np.asarray(quaternion_xyzw, dtype=float)).toRotationMatrix()


class Plausibility:
    """The plausibility parameters of ``node`` (declared here unless :func:`declare` did) for ``robot`` standing on
    ``soles``, and its checks.

    Raises:
        ValueError: naming the parameter, for a bound that is not above 0 (a base bound of 0: from the model).
    """

    def __init__(self, node, robot, soles):
        self.node, self.robot, self.clock = node, robot, node.get_clock()
        declare(node)
        value = {name: node.get_parameter(name).value for name in PARAMETERS}
        for name, number in value.items():
            if not number >= 0.0 or (name != "max_base_speed" and name != "max_base_angular_speed" and number == 0.0):
                raise ValueError(f"parameter '{name}': {number} must be above 0")
        self.value = value
        speed, angular = base_bounds(robot, standing_com_height(robot, soles))
        self.base_speed = value["max_base_speed"] or speed
        self.base_angular_speed = value["max_base_angular_speed"] or angular
        self.taken_over = 0   # disagreements taken over, every input

    def joint_gate(self, names):
        """The Gate of the positions of the joints ``names``: their speed limits and their ranges."""
        units = np.where(self.robot.prismatic(names), "m", "rad")
        persistence = self.value["implausible_takeover_time"]
        return Gate(MotionGate(joint_speed_bounds(self.robot, names, self.value["max_joint_speed_ratio"]),
                               self.value["joint_step_tolerance"], persistence),
                    tuple(f"joint '{name}'" for name in names), tuple(units),
                    RangeGate(*self.robot.position_limits(names), self.value["joint_range_tolerance"],
                              self.value["joint_step_tolerance"], persistence))

    def base_gate(self):
        """The Gate of a base pose (position, rotation matrix): its position and its attitude."""
        speed, angular = self.base_speed, self.base_angular_speed
        return Gate(MotionGate([speed, speed, speed, angular], [self.value["base_step_tolerance"]] * 3
                               + [self.value["attitude_step_tolerance"]], self.value["implausible_takeover_time"],
                               pose_difference), BASE_COMPONENTS, BASE_UNITS)

    def attitude_gate(self, what):
        """The Gate of an attitude (rotation matrix) called ``what``: it turns at most as the base does."""
        return Gate(MotionGate(self.base_angular_speed, self.value["attitude_step_tolerance"],
                               self.value["implausible_takeover_time"], rotation_difference), (what,), ("rad",))

    def check(self, gate, value, time, topic):
        """Pass ``value`` stamped ``time`` [s] through ``gate`` (a Gate): its range, then its motion;
        RejectedMessage('implausible') naming the component when it is refused; a warning when it is taken over."""
        clock = self.clock.now().nanoseconds * 1e-9
        if gate.range is not None:
            self._judge(gate, gate.range.check(value, time, clock, gate.motion.value), topic,
                        "beyond its URDF range for {persistence} s: taken over, its range no longer checked (are the "
                        "URDF's limits right?)",
                        "jumped {step} {unit} beyond its URDF range since the last accepted reading")
        self._judge(gate, gate.motion.check(value, time, clock), topic,
                    "from the last accepted reading for {persistence} s: taken over (a reset or a relocalisation?)",
                    "moved {step} {unit} since the last accepted reading")

    def _judge(self, gate, verdict, topic, taken_over, refused):
        """Act on a GateVerdict of ``gate``: a warning ending in ``taken_over``, or RejectedMessage('implausible')
        saying the component was ``refused`` (templates of {step}, {unit} and {persistence})."""
        if verdict.accepted and not verdict.taken_over:
            return
        what, unit = gate.names[verdict.component], gate.units[verdict.component]
        persistence = self.value["implausible_takeover_time"]
        if verdict.taken_over:
            self.taken_over += 1
            self.node.get_logger().warning(f"{topic}: {what} {verdict.step:.3g} {unit} "
                                           + taken_over.format(persistence=persistence))
            return
        raise RejectedMessage("implausible", f"{topic}: {what} " + refused.format(step=f"{verdict.step:.3g}", unit=unit)
                              + f", {verdict.allowed:.3g} {unit} at most plausibly")

    def check_base(self, gate, position, quaternion_xyzw, time, topic):
        """A base pose (position [m], unit quaternion x, y, z, w) through its gate (:meth:`base_gate`)."""
        self.check(gate, (np.asarray(position, dtype=float), rotation_matrix(quaternion_xyzw)), time, topic)

    def check_attitude(self, gate, quaternion_xyzw, time, topic):
        """An attitude (unit quaternion x, y, z, w) through its gate (:meth:`attitude_gate`)."""
        self.check(gate, rotation_matrix(quaternion_xyzw), time, topic)

    def check_force(self, force, topic):
        """RejectedMessage('implausible') for a contact force [N] beyond max_contact_force_ratio times the weight."""
        ratio = weight_ratio(force, self.robot)
        if ratio > self.value["max_contact_force_ratio"]:
            raise RejectedMessage("implausible", f"{topic}: a force of {ratio:.3g} times the robot's weight (at most "
                                  f"{self.value['max_contact_force_ratio']:g} plausibly)")
