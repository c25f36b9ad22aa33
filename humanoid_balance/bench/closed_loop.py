"""The suite's cores in one Python loop around the embedded plant, without ROS (benchmark experiments 1–3, 5).

Each control tick is one :meth:`BalanceLoop.cycle` (humanoid_balance.loop), the four nodes' stages in order, on the
plant's sensors (contacts from actuator forces); its actuator command goes to the plant's drives. Leaving DDS out makes the loop deterministic and the physics the only
thing measured; experiment 7 measures the same chain over DDS. Ground truth comes from the plant. Each tick
advances the bench session's progress and, with ``bench --record``, is recorded as the nodes' messages
(loop_recording.py). Units: SI.
"""
import functools
from pathlib import Path
from typing import NamedTuple

import numpy as np

from humanoid_balance.bench.session import Session
from humanoid_balance.control.balancer import balance_mode
from humanoid_balance.control.joint_trajectory import LimbTrajectory
from humanoid_balance.estimation import ImuSample
from humanoid_balance.loop import BalanceLoop, Observation, limb_sections
from humanoid_balance.model import load_robot
from humanoid_balance.model.robot_config import load_robot_config
from humanoid_balance.resources import DEFAULT_ROBOT, robot_config_file
from humanoid_balance.sim import Simulation
from humanoid_balance.sim.perturbation import NOMINAL

__all__ = ["FALL_DROP", "Sample", "Signals", "ClosedLoop", "robot_config"]

FALL_DROP = 0.15   # a base this far below its start has fallen [m]


def robot_config(robot=DEFAULT_ROBOT):
    """The :class:`RobotConfig` of a bundled robot's name or of a directory written by ``humanoid-balance init``."""
    return load_robot_config(robot_config_file(robot))


@functools.lru_cache
def robot_mass(robot):
    """The total mass [kg] of a bundled robot or robot folder, loaded once for all the pushes of a bisection."""
    config = robot_config(robot)
    return load_robot(config.urdf_file, config.loops).total_mass


class Sample(NamedTuple):
    """One control tick: ground truth from the plant and what the suite estimated and commanded."""

    time: float               # [s]
    com: np.ndarray           # ground-truth CoM, world [m]
    base_height: float        # [m]
    soles: np.ndarray         # (feet, 3) ground-truth sole frame positions, world [m]
    sole_forces: np.ndarray   # (feet, 3) ground-truth contact forces, world [N]
    true_zmp: np.ndarray      # ground-truth ZMP of the floor contacts, world [m]
    zmp: np.ndarray           # estimated ZMP, world [m] (nan when unknown)
    estimated_wrenches: np.ndarray  # (feet, 6) estimated sole wrenches, sole frames [N, N·m] (nan when unknown)
    q: np.ndarray             # the estimated configuration the command was computed from
    efforts: np.ndarray       # measured actuator efforts, robot.actuated_names order [N, N·m]


class Signals(NamedTuple):
    """What each stage of one tick produced, for a recording of the run."""

    time: float               # [s]
    sensors: tuple            # (position, velocity, effort) of the actuated joints the loop read
    imu: tuple                # (quaternion xyzw, gyro [rad/s])
    state: object             # the state estimator's RobotState
    contact: object           # the contact estimator's ContactEstimate
    command: object           # the balancer's JointCommand
    actuators: object         # the mapper's ActuatorCommand, None when it refused
    truth: object             # the plant's GroundTruth


class ClosedLoop:
    """Plant and suite on one robot.

    Args:
        robot: its :class:`RobotConfig` (files, feet, soles, legs, limbs, stance, drive gains).
        mode: the balancer's mode (control.balancer.MODES).
        arms: make the configuration's busy limbs J-busy sections, following what :meth:`follow` gives them, but
            those in ``cartesian_limbs``: C-busy, following their target pose in :attr:`poses`.
        impedance: send position, velocity, effort and the gains the mapper derives from the configuration's
            output impedance through the plant's joint impedance (a torque-controlled robot) instead of position
            targets to stiff drives; None: as the mode needs (its command_interface, control.balancer.BALANCE_MODES).
        compliance_compensation: the mapper advances the position targets by the drives' deflection under the
            command's efforts (the configuration's drive gains); default: in viip mode, whose jump is dynamic.
        reference: joint → starting value for the plant (see :class:`Simulation`).
        period: control period [s]; the plant steps its own timestep in between.
        perturbation: how the plant differs from the robot's files and its sensors lie (a PlantPerturbation).
        session: the bench Session the run shows its progress in and is recorded by (None: neither).
        config: extra :class:`BalancerConfig` fields (``zmp_com`` defaults to the robot's k_p and k_c).
    """

    def __init__(self, robot, mode="kinematic", arms=False, impedance=None, compliance_compensation=None,
                 reference=None, period=0.002, cartesian_limbs=(), perturbation=NOMINAL, session=None, **config):
        self.config = robot
        self.sim = Simulation.from_config(robot, reference=reference or {}, perturbation=perturbation)
        self.impedance = balance_mode(mode).impedance if impedance is None else impedance
        self.loop = BalanceLoop.from_config(robot, mode, limb_sections(robot, cartesian_limbs) if arms else (),
                                            impedance=self.impedance, compliance_compensation=compliance_compensation,
                                            sample_rate=1.0 / period, **config)
        self.robot = self.loop.robot
        self.soles = robot.soles
        self.period = period
        self.steps = max(1, round(period / self.sim.model.opt.timestep))
        self.actuated = list(self.robot.actuated_names)
        self.to_plant = np.array([self.actuated.index(name) for name in self.sim.actuators])
        self.com_reference = None  # the CoM of the first tick, world [m]: com_offset moves the reference from it
        self.poses = self.loop.balance.poses  # C-busy limb → its target pose (pin.SE3, world frame)
        self.start_height = self.sim.ground_truth().base_position[2]
        self.base_body = robot.base_frame or self.robot.root_link  # where pushes land
        self.signals = None        # the last tick's Signals
        self.session = run = session or Session()
        run.progress.begin_run()
        path = run.recording_path(f"{mode}_{'impedance' if self.impedance else 'position'}")
        self.recording = None
        if path is not None:
            from humanoid_balance.bench.loop_recording import LoopRecorder   # ROS messages only when recording

            self.recording = run.opened(LoopRecorder(path, self, {
                "recorded_by": f"humanoid-balance bench {run.experiment}", "robot": Path(robot.urdf_file).stem,
                "mode": mode, "plant": "closed loop in one Python loop, lockstep"}))

    @property
    def balancer(self):
        """The balance mode's controller (it changes with the mode)."""
        return self.loop.balance.controller

    @property
    def refusals(self):
        """Commands the mapper could not realise."""
        return self.loop.mapping.refusals

    def push(self, force, duration, body=None):
        """Push ``body`` (default: the base) with a world-frame ``force`` [N] for ``duration`` [s]."""
        body = body or self.base_body
        self.sim.push(body, force, duration=duration)
        if self.recording is not None:
            self.recording.push(self.sim.time, body, force)

    def follow(self, limb, times, velocities, start=None):
        """Have a busy limb follow joint ``velocities`` (k, n) [rad/s] at ``times`` (k,) [s] from ``start`` [s of
        simulated time; default: now], as balance/<limb>/trajectory does through the nodes."""
        self.loop.balance.trajectories[limb] = LimbTrajectory(self.sim.time if start is None else start,
                                                              np.asarray(times, float),
                                                              velocities=np.asarray(velocities, float))

    def tick(self, com_offset=(0.0, 0.0, 0.0)):
        """Step the plant one control period, run the suite on its sensors, send the command; returns a
        :class:`Sample`. ``com_offset``: added to the CoM reference, which is the CoM of the first tick [m]."""
        sim, balance = self.sim, self.loop.balance
        sim.step(self.steps)
        position, velocity, effort = sim.joint_states(self.actuated)
        quaternion, gyro, accelerometer = sim.imu()
        if self.com_reference is not None:
            balance.com_reference = self.com_reference + com_offset
        cycle = self.loop.cycle(Observation(sim.time, position, velocity, ImuSample(quaternion, gyro, accelerometer),
                                            effort), self.period)
        if self.com_reference is None:
            self.com_reference = balance.com_reference.copy()
        actuators = None if cycle.mapped.refused else cycle.mapped.command
        if actuators is not None:
            if self.impedance:
                sim.set_impedance_command(*(values[self.to_plant] for values in
                                            (actuators.position, actuators.velocity, actuators.effort,
                                             actuators.stiffness, actuators.damping)))
            else:
                sim.set_command("position", actuators.position[self.to_plant])
        truth = sim.ground_truth()
        contact = cycle.contact
        self.signals = Signals(sim.time, (position, velocity, effort), (quaternion, gyro), cycle.state, contact,
                               cycle.command, actuators, truth)
        self.session.progress.update(sim.time)
        if self.recording is not None:
            self.recording.write(self.signals)
        wrenches = np.array([np.full(6, np.nan) if foot.wrench is None else foot.wrench for foot in contact.feet])
        return Sample(sim.time, truth.com, float(truth.base_position[2]), sim.data.xpos[sim.sole_bodies].copy(),
                      truth.sole_forces, truth.zmp, np.full(3, np.nan) if contact.zmp is None else contact.zmp,
                      wrenches, cycle.q, effort)

    def fallen(self, sample):
        return sample.base_height < self.start_height - FALL_DROP
