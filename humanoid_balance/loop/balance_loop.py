"""The balance loop: one control tick of the suite as one call, without ROS (pink_balancer's ``cycle``).

    Observation ─> RobotStateEstimator ─> ContactEstimator ─> BalanceStage ─> MappingStage ─> Cycle
    (encoders, IMU,    every joint,          foot wrenches,       joint command     actuator
     efforts / F/T)    floating base         phases, ZMP          (outputs)         command

A tick runs the four stages in this order, each once. What one stage tells another within the loop is data handed
on here, not a topic: the contact phases of the tick before carry the base estimate (as contact/<foot>/state does),
the feet the balancer's last command lifted are aerial for the contact estimate (balance/<foot>/lifted), and this
tick's ZMP, phases and sole wrenches go to the balancer (zmp, contact/<foot>/state, contact/<foot>/wrench). The four
nodes run the same stage objects each on its own topic (across processes the feedback then arrives a message later);
balance_stack runs one :meth:`BalanceLoop.cycle` per joint_states; the bench's closed loop is a BalanceLoop and the
embedded plant. Units: SI.
"""
from typing import NamedTuple, Optional

import numpy as np

from humanoid_balance.control.balancer import BALANCE_MODES, BalancerConfig, Foot
from humanoid_balance.control.embedded_motion import C_BUSY, J_BUSY, Section
from humanoid_balance.control.zmp_com import ZmpComGains
from humanoid_balance.estimation import ImuSample, RobotStateEstimator
from humanoid_balance.estimation.contact_state import ACTUATOR_FORCES, ContactEstimator
from humanoid_balance.loop.balance_stage import BalanceStage
from humanoid_balance.loop.mapping_stage import MappingStage
from humanoid_balance.mapping.actuator_map import ActuatorMap
from humanoid_balance.model import load_robot
from humanoid_balance.model.robot_config import check_robot_config

__all__ = ["BalanceLoop", "Observation", "Cycle", "balance_feet", "limb_sections"]


class Observation(NamedTuple):
    """What the robot's sensors give for one tick."""

    time: float                      # [s]
    position: np.ndarray             # actuated joints' relative encoders, robot.actuated_names order [m or rad]
    velocity: Optional[np.ndarray]   # ... their rates (None: finite differences)
    imu: ImuSample                   # orientation, rate and (optionally) specific force
    effort: Optional[np.ndarray] = None  # actuated efforts [N or N·m] (contacts from actuator forces)
    foot_wrenches: Optional[tuple] = None  # per foot, (frame, wrench (6,)) from its F/T sensor or None (ft_sensors)


class Cycle(NamedTuple):
    """What one tick computed, stage by stage (what the nodes publish)."""

    state: object     # the RobotState: every joint and the base (estimated_joint_states, odom)
    q: np.ndarray     # the floating-base configuration the tick computed on
    v: np.ndarray     # ... and velocity (base twist in the base frame)
    contact: object   # the ContactEstimate (contact/<foot>/*, zmp)
    command: object   # the balancer's JointCommand (balance/joint_command, balance/*); None without a balance stage
    mapped: object    # the MappingStage's Mapped actuator command (actuator_commands); None without a mapping stage


def balance_feet(robot_config):
    """The balancer's Foot of each foot of a RobotConfig (name, sole, leg joints, sole rectangle)."""
    return tuple(Foot(name, sole, robot_config.leg_joints[name], robot_config.rectangle(k))
                 for k, (name, sole) in enumerate(zip(robot_config.feet, robot_config.soles)))


def limb_sections(robot_config, cartesian_limbs=()):
    """The embedded-motion Section of each busy limb of a RobotConfig: J-busy (joint trajectories), but C-busy
    (end-frame poses) for those in ``cartesian_limbs``."""
    return [Section(limb, robot_config.limb_joints[limb], robot_config.limb_end_frames[limb],
                    C_BUSY if limb in cartesian_limbs else J_BUSY) for limb in robot_config.busy_limbs]


class BalanceLoop:
    """The four stages of the suite in order (see the module).

    Args:
        estimator: the RobotStateEstimator (fixed-base model).
        contact: the ContactEstimator (floating-base model).
        balance: the BalanceStage (None: the loop estimates only).
        mapping: the MappingStage (None: the loop stops at the joint command).
    """

    def __init__(self, estimator, contact, balance, mapping):
        self.estimator, self.contact, self.balance, self.mapping = estimator, contact, balance, mapping
        self.phases = None   # the feet's contact phases of the last tick, for the base (None: not all known)
        self.lifted = None   # the feet the balancer's last command lifted, for the contact estimate (None: none)

    @classmethod
    def from_config(cls, robot_config, mode="kinematic", sections=(), impedance=None, compliance_compensation=None,
                    sample_rate=500.0, **config):
        """The loop of a RobotConfig with its defaults, contacts from actuator forces: the balancer in ``mode`` with
        the limbs' ``sections`` (:func:`limb_sections`) and extra BalancerConfig fields ``config`` (``zmp_com``
        and ``support_margin`` default to the robot's); the mapper sends the joint impedance of the robot's output
        impedance with ``impedance``, and advances position targets by the drives' deflection with
        ``compliance_compensation`` (each None: as the mode needs, control.balancer.BALANCE_MODES)."""
        robot = load_robot(robot_config.urdf_file, robot_config.loops, floating_base=True)
        check_robot_config(robot_config, robot)
        fixed_base = load_robot(robot_config.urdf_file, robot_config.loops)
        estimator = RobotStateEstimator(fixed_base, robot_config.soles)
        contact = ContactEstimator(robot, robot_config.soles, mode=ACTUATOR_FORCES, sample_rate=sample_rate,
                                   cutoff=robot_config.cutoff_frequency,
                                   rectangles=robot_config.sole_rectangles or None,
                                   imu_frame=robot_config.imu_frame or None)
        config.setdefault("zmp_com", ZmpComGains(np.full(2, robot_config.k_p), np.full(2, robot_config.k_c)))
        config.setdefault("support_margin", robot_config.support_margin)
        balance = BalanceStage(robot, BalancerConfig(mode=mode, feet=balance_feet(robot_config), **config), sections)
        if impedance is None:
            impedance = BALANCE_MODES[mode].impedance
        if compliance_compensation is None:
            compliance_compensation = BALANCE_MODES[mode].compliance_compensation
        actuator_map = ActuatorMap(robot, impedance=(robot_config.impedance_stiffness, robot_config.impedance_damping)
                                   if impedance else None,
                                   drive_compliance=(robot_config.drive_stiffness, robot_config.drive_damping)
                                   if compliance_compensation else None)
        return cls(estimator, contact, balance, MappingStage(actuator_map))

    @property
    def robot(self):
        """The floating-base RobotModel the balance and the mapping work on."""
        return self.balance.controller.robot

    def cycle(self, observation, dt=None):
        """One tick on ``observation``; ``dt`` [s] since the last (None: from the stamps)."""
        state = self.estimator.update(observation.position, observation.velocity, observation.time,
                                      observation.imu, self.phases)
        q, v = state.floating()
        contact = self.contact.update(q, actuator_efforts=observation.effort,
                                      sensor_wrenches=observation.foot_wrenches, time=observation.time,
                                      specific_force=observation.imu.specific_force, lifted=self.lifted)
        self.phases = contact.phases()
        balance = self.balance
        if balance is None:  # estimation only (balance_stack while its balancer is inactive)
            return Cycle(state, q, v, contact, None, None)
        for foot, estimate in enumerate(contact.feet):
            balance.observe_phase(foot, estimate.state)
        command = balance.update(q, v, observation.time, contact.zmp, dt,
                                 tuple(foot.wrench for foot in contact.feet))
        self.lifted = command.lifted or None
        mapped = None if self.mapping is None else self.mapping.update(command.position, command.velocity,
                                                                       command.effort)
        return Cycle(state, q, v, contact, command, mapped)
