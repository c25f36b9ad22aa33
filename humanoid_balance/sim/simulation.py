"""Fixed-step MuJoCo simulation of the robot: actuator drives, push disturbances, sensors, ground truth.

The actuators are driven like ros2_control's forward_command_controller targets: ``position`` commands go
through a stiff PD drive, ``velocity`` through a damping drive, ``effort`` directly — each as MuJoCo actuator
gain and bias (force = gain·ctrl + bias₀ + bias₁·q + bias₂·q̇), integrated implicitly and force-limited. The
``impedance`` interface takes all three at once with each actuator's gains, as a torque-controlled robot's joint
impedance does: force = K (q_d − q) + D (q̇_d − q̇) + τ_ff. A
:class:`~humanoid_balance.sim.perturbation.PlantPerturbation` makes the plant differ from the robot's files and its sensors lie (masses, centres of mass, noise, biases, a tilted
IMU, late commands) or stands it on an inclined floor; the ground truth stays true, in the floor's frame.
Units: SI; quaternions are (x, y, z, w).
"""
from collections import deque
from typing import NamedTuple

import mujoco
import numpy as np
import pinocchio as pin

from humanoid_balance.mapping.joint_impedance import COMMAND_FIELDS, IMPEDANCE_FIELDS
from humanoid_balance.model import load_robot
from humanoid_balance.sim.model import build_mujoco_model
from humanoid_balance.sim.perturbation import NOMINAL, signs

__all__ = ["Simulation", "GroundTruth", "INTERFACES"]

NOSLIP_ITERATIONS = 5  # on an inclined floor: MuJoCo's no-slip pass, which keeps the soles from creeping downhill

INTERFACES = tuple(COMMAND_FIELDS)
"""Command interfaces: one value per actuator for the first three; ``impedance`` takes five (IMPEDANCE_FIELDS)."""


class GroundTruth(NamedTuple):
    time: float                   # [s]
    base_position: np.ndarray     # world [m]
    base_quaternion: np.ndarray   # (x, y, z, w)
    base_linear_velocity: np.ndarray   # world [m/s]
    base_angular_velocity: np.ndarray  # base frame [rad/s]
    com: np.ndarray               # world [m]
    com_velocity: np.ndarray      # world [m/s]
    sole_forces: np.ndarray       # (feet, 3) world-frame contact force on each sole [N]
    linear_momentum: np.ndarray   # world [kg·m/s]
    angular_momentum: np.ndarray  # about the CoM, world axes [kg·m²/s]
    zmp: np.ndarray               # centre of pressure of all floor contacts, world [m] (nan in the air)
    sole_wrenches: np.ndarray = None   # (feet, 6) contact wrench [f; τ] on each sole, its sole frame, about its
                                       # origin [N, N·m] (to compare with contact/<foot>/wrench and desired_wrench)
    sole_rotations: np.ndarray = None  # (feet, 3, 3) each sole frame's orientation in the world
    sole_positions: np.ndarray = None  # (feet, 3) each sole frame's origin in the world [m]


def _xyzw(wxyz):
    return np.array([wxyz[1], wxyz[2], wxyz[3], wxyz[0]])


class Simulation:
    """The embedded plant.

    Args:
        soles: sole links (contact, optional F/T sensors).
        stiffness, damping: (prismatic, revolute) position drive gains: [N/m, N·m/rad] and [N·s/m, N·m·s/rad].
            Ball-screw drives are stiff; a direct-drive arm joint at ball-screw gains would chatter against its
            torque limit.
        reference: joint name → starting value [rad or m], overriding the robot's reference configuration (e.g.
            bent knees for a serial robot, whose reference is its zero configuration).
        sole_rectangles, package_dirs: see :func:`build_mujoco_model`.
        perturbation: how the plant differs from the files and its sensors lie (a PlantPerturbation).
    Attributes:
        warnings: collision geometry the plant dropped or added, one line each.
        notices: geometry read otherwise than the URDF's collision elements say (a foot's visual geometry, a
            converted mesh), one line each.
    """

    def __init__(self, urdf_path, loops_path=None, soles=(), force_torque_sensors=False,
                 timestep=0.0005, friction=1.0, stiffness=(2e5, 1e4), damping=(2e3, 100.0),
                 reference=None, sole_rectangles=None, package_dirs=(), perturbation=NOMINAL):
        robot = load_robot(urdf_path, loops_path)
        self.model, _, self.warnings, self.notices = build_mujoco_model(
            robot, soles, friction, force_torque_sensors, timestep, sole_rectangles=sole_rectangles,
            package_dirs=package_dirs)
        self.perturbation = perturbation
        self.perturbed = perturbation != NOMINAL  # the sensors lie (checked on every reading)
        self.pending_commands = deque()  # commands not applied yet (command_delay)
        self.rng = np.random.default_rng(perturbation.perturbation_seed)
        self._perturb_model()
        self.floor_rotation = None  # the floor in a gravity-aligned frame, when inclined (3, 3)
        if perturbation.floor_roll or perturbation.floor_pitch:
            self.floor_rotation = pin.rpy.rpyToMatrix(perturbation.floor_roll, perturbation.floor_pitch, 0.0)
            self.model.opt.gravity[:] = self.floor_rotation.T @ self.model.opt.gravity
            self.model.opt.noslip_iterations = NOSLIP_ITERATIONS
        self.data = mujoco.MjData(self.model)
        self.soles = tuple(soles)
        self.sole_bodies = [self.model.body(sole).id for sole in self.soles]
        # the rigid body carrying each sole (sole link and the links welded to it), whichever link has the geometry
        self.foot_welds = np.array([int(self.model.body_weldid[body]) for body in self.sole_bodies], dtype=int)
        self.geom_welds = self.model.body_weldid[self.model.geom_bodyid]  # each geom's rigid body
        self.floor = self.model.geom("floor").id
        self.actuators = [self.model.actuator(i).name for i in range(self.model.nu)]
        self.actuator_qpos = np.array([self.model.joint(name).qposadr[0] for name in self.actuators])
        self.reference = {name: float(robot.reference_q[robot.joint_q_index(name)]) for name in robot.joint_names}
        unknown = sorted(set(reference or {}) - set(self.reference))
        if unknown:
            raise ValueError(f"reference: {unknown} are not joints of {urdf_path}")
        self.reference.update(reference or {})
        revolute = np.array([self.model.jnt_type[self.model.actuator_trnid[i, 0]] == mujoco.mjtJoint.mjJNT_HINGE
                             for i in range(self.model.nu)], dtype=int)
        self.stiffness, self.damping = np.take(stiffness, revolute), np.take(damping, revolute)
        self.interface = None
        self.push_until, self.push_body = -1.0, None
        self._joint_index_cache = {}  # joint names → their qpos, qvel and actuator indices
        self._imu_sensors = tuple(self._sensor(name) for name in ("imu_orientation", "imu_gyro", "imu_accelerometer"))
        self._reading_velocity, self._steps_since_reading = np.zeros(3), 0  # the root's at the last imu() [m/s]
        self._foot_sensors = {}       # sole → (F/T frame, force and torque slices of sensordata)
        self._perturb_sensors()
        self.reset()

    def reset(self, height=None):
        """The robot's reference configuration (loops closed), the lowest sole resting on the floor (or the
        base at ``height`` [m]), every drive holding its position."""
        mujoco.mj_resetData(self.model, self.data)
        for name, value in self.reference.items():
            self.data.qpos[self.model.joint(name).qposadr[0]] = value
        mujoco.mj_forward(self.model, self.data)
        if height is None:
            soles = self.data.xpos[self.sole_bodies][:, 2]
            height = self.data.qpos[2] - soles.min() + 1e-4
        self.data.qpos[2] = height
        mujoco.mj_forward(self.model, self.data)
        self.pending_commands.clear()
        self._apply_command("position", self.data.qpos[self.actuator_qpos])
        self._reading_velocity[:], self._steps_since_reading = self.data.qvel[:3], 0

    def _perturb_model(self):
        """Each body's mass and inertia scaled by 1 ± mass_error, its CoM moved ± com_error per axis (see
        PlantPerturbation)."""
        perturbation, model = self.perturbation, self.model
        bodies = np.flatnonzero(model.body_mass > 0.0)
        if perturbation.mass_error:
            factors = 1.0 + perturbation.mass_error * signs(self.rng, len(bodies))
            model.body_mass[bodies] *= factors
            model.body_inertia[bodies] *= factors[:, None]
        if perturbation.com_error:
            model.body_ipos[bodies] += perturbation.com_error * signs(self.rng, (len(bodies), 3))
        if perturbation.mass_error or perturbation.com_error:
            mujoco.mj_setConst(model, mujoco.MjData(model))  # subtree masses

    def _perturb_sensors(self):
        """The constant part of the sensors' lies: the encoders' and IMU's biases, the effort offsets, the IMU's
        mounting tilt about a horizontal axis drawn once."""
        perturbation, model = self.perturbation, self.model
        self.position_bias = perturbation.position_bias * signs(self.rng, model.nq)     # by qpos address
        self.gyro_bias = perturbation.gyro_bias * signs(self.rng, 3)
        self.accelerometer_bias = perturbation.accelerometer_bias * signs(self.rng, 3)
        limits = np.where(model.actuator_forcelimited, model.actuator_forcerange[:, 1], 0.0)
        self.effort_scale = perturbation.effort_noise * limits
        self.effort_offset = perturbation.effort_offset * limits * signs(self.rng, model.nu)
        heading = self.rng.uniform(0.0, 2.0 * np.pi)
        axis = np.array([np.cos(heading), np.sin(heading), 0.0])
        self.imu_tilt = pin.AngleAxis(perturbation.imu_tilt, axis).toRotationMatrix()  # the IMU's frame in the root's

    @classmethod
    def from_config(cls, config, **options):
        """The plant of a :class:`~humanoid_balance.model.robot_config.RobotConfig`: its files, soles, stance and
        drive gains; ``options`` go to the constructor (e.g. ``timestep``, ``force_torque_sensors``)."""
        return cls(config.urdf_file, config.loops, config.soles, stiffness=config.drive_stiffness,
                   damping=config.drive_damping,
                   reference={**config.stance, **options.pop("reference", {})},
                   sole_rectangles=config.sole_rectangles or None, **options)

    @property
    def root_body(self):
        """The body of the free joint (the URDF's root link), where pushes on the base land."""
        return self.model.body(int(self.model.jnt_bodyid[0])).name

    @property
    def mass(self):
        """The robot's total mass [kg]."""
        return float(self.model.body_subtreemass[int(self.model.jnt_bodyid[0])])

    @property
    def time(self):
        return float(self.data.time)

    def set_command(self, interface, values):
        """Targets for every actuator, in ``self.actuators`` order (``position`` | ``velocity`` | ``effort``), or
        for ``impedance`` the (5, n) rows of IMPEDANCE_FIELDS (see :meth:`set_impedance_command`); applied
        ``command_delay`` commands later."""
        if interface not in INTERFACES:
            raise ValueError(f"interface must be one of {INTERFACES}, got '{interface}'")
        if interface == "impedance":
            values = np.asarray(values, dtype=float)
            if values.size != len(IMPEDANCE_FIELDS) * len(self.actuators):
                raise ValueError(f"{values.size} values for the impedance of {len(self.actuators)} actuators: give "
                                 f"{len(IMPEDANCE_FIELDS)} rows ({', '.join(IMPEDANCE_FIELDS)}) of {len(self.actuators)}")
            self.set_impedance_command(*values.reshape(len(IMPEDANCE_FIELDS), -1))
            return
        self._delayed(self._apply_command, interface, self._per_actuator(values))

    def _delayed(self, apply, *arguments):
        """Apply a command now, or the one ``command_delay`` commands before it."""
        if not self.perturbation.command_delay:
            apply(*arguments)
            return
        self.pending_commands.append((apply, tuple(np.array(a) if isinstance(a, np.ndarray) else a
                                                   for a in arguments)))
        while len(self.pending_commands) > self.perturbation.command_delay:
            oldest, earlier = self.pending_commands.popleft()
            oldest(*earlier)

    def _apply_command(self, interface, values):
        if interface != self.interface:
            zero, one = np.zeros(len(self.actuators)), np.ones(len(self.actuators))
            gain, bias = {"position": (self.stiffness, [zero, -self.stiffness, -self.damping]),
                          "velocity": (self.damping, [zero, zero, -self.damping]),
                          "effort": (one, [zero, zero, zero])}[interface]
            self.model.actuator_gainprm[:, 0] = gain
            self.model.actuator_biasprm[:, :3] = np.column_stack(bias)
            self.interface = interface
        self.data.ctrl[:] = values

    def set_impedance_command(self, position, velocity, effort, stiffness, damping):
        """Joint impedance for every actuator: force = K (q_d − q) + D (q̇_d − q̇) + τ_ff, clipped to the force
        limit; per actuator K [N/m, N·m/rad], D [N·s/m, N·m·s/rad], τ_ff [N, N·m]; applied ``command_delay``
        commands later."""
        self._delayed(self._apply_impedance, *(self._per_actuator(values) for values in
                                               (position, velocity, effort, stiffness, damping)))

    def _apply_impedance(self, position, velocity, effort, stiffness, damping):
        bias = self.model.actuator_biasprm
        self.model.actuator_gainprm[:, 0] = stiffness
        np.multiply(damping, velocity, out=bias[:, 0])
        bias[:, 0] += effort
        np.negative(stiffness, out=bias[:, 1])
        np.negative(damping, out=bias[:, 2])
        self.interface = "impedance"
        self.data.ctrl[:] = position

    def _per_actuator(self, values):
        values = np.asarray(values, dtype=float)
        if values.shape != (len(self.actuators),):
            raise ValueError(f"{len(values)} values for {len(self.actuators)} actuators")
        return values

    def push(self, body, force, torque=(0.0, 0.0, 0.0), duration=0.1):
        """Apply a world-frame wrench [N, N·m] at ``body``'s centre of mass for ``duration`` [s]."""
        self.data.xfrc_applied[:] = 0.0
        self.push_body = self.model.body(body).id
        self.data.xfrc_applied[self.push_body] = np.r_[force, torque]
        self.push_until = self.time + duration

    def step(self, count=1):
        for _ in range(count):
            if self.push_body is not None and self.time >= self.push_until:
                self.data.xfrc_applied[self.push_body] = 0.0
                self.push_body = None
            mujoco.mj_step(self.model, self.data)
        self._steps_since_reading += count

    # -- sensors --------------------------------------------------------------------------------------
    def joint_states(self, names):
        """Positions, velocities and efforts (actuator forces; 0 for passive joints) of the named joints, as the
        encoders and the drives report them (with the perturbation's noise, biases and offsets)."""
        qpos, qvel, actuator = self._joint_indices(tuple(names))
        efforts = np.zeros(len(actuator))
        driven = actuator >= 0
        efforts[driven] = self.data.actuator_force[actuator[driven]]
        positions, velocities = self.data.qpos[qpos], self.data.qvel[qvel]
        perturbation = self.perturbation
        if not self.perturbed:
            return positions, velocities, efforts
        positions = positions + self.position_bias[qpos] + self.rng.normal(scale=perturbation.position_noise,
                                                                           size=len(qpos))
        velocities = velocities + self.rng.normal(scale=perturbation.velocity_noise, size=len(qvel))
        efforts[driven] += self.effort_offset[actuator[driven]] + self.effort_scale[actuator[driven]] * \
            self.rng.normal(size=int(driven.sum()))
        return positions, velocities, efforts

    def _joint_indices(self, names):
        """qpos and qvel addresses and actuator index (−1: passive) of named joints, looked up once per list."""
        if names not in self._joint_index_cache:
            joints = [self.model.joint(name) for name in names]
            self._joint_index_cache[names] = (np.array([j.qposadr[0] for j in joints]),
                                              np.array([j.dofadr[0] for j in joints]),
                                              np.array([self.actuators.index(n) if n in self.actuators else -1
                                                        for n in names]))
        return self._joint_index_cache[names]

    def _sensor(self, name):
        """The slice of ``data.sensordata`` holding a named sensor."""
        sensor = self.model.sensor(name)
        return slice(int(sensor.adr[0]), int(sensor.adr[0] + sensor.dim[0]))

    def imu(self):
        """(quaternion xyzw of the IMU in the world (gravity-aligned, on an inclined floor too), gyro [rad/s] and
        accelerometer [m/s²] in the IMU frame).

        The accelerometer is the mean specific force since the last reading, as an IMU's anti-aliasing filter and
        its delta-velocity output make it: the root's (the IMU's) realised change of velocity over the period, less
        gravity, in the IMU frame at the reading, so that it integrates to the base's motion. A stiff robot's drives
        shake its base at high frequency, and one instantaneous sample per control period swings by g where the
        period's mean does not; and MuJoCo's accelerometer sensor reads the explicit dynamics' acceleration, which
        the implicit integrator's damping of stiff drives does not realise: with the arms dancing at 100 Hz its mean
        disagreed with the base's change of velocity by 3 m/s², and the base estimate drifted 5 cm in 0.15 s. Read
        before any step, it is that sensor's."""
        data = self.data.sensordata
        orientation, gyro, accelerometer = self._imu_sensors
        if self._steps_since_reading:
            velocity = self.data.qvel[:3]
            world = (velocity - self._reading_velocity) / (self._steps_since_reading * self.model.opt.timestep) \
                - self.model.opt.gravity
            acceleration = np.zeros(3)
            inverse = np.zeros(4)
            mujoco.mju_negQuat(inverse, self.data.qpos[3:7])
            mujoco.mju_rotVecQuat(acceleration, world, inverse)
            self._reading_velocity[:], self._steps_since_reading = velocity, 0
        else:
            acceleration = data[accelerometer].copy()
        quaternion, angular_velocity = _xyzw(data[orientation]), data[gyro].copy()
        if self.floor_rotation is not None:  # the attitude against gravity, not against the floor
            x, y, z, w = quaternion
            attitude = self.floor_rotation @ pin.Quaternion(w, x, y, z).toRotationMatrix()
            quaternion = np.array(pin.Quaternion(attitude).coeffs())
        perturbation = self.perturbation
        if not self.perturbed:
            return quaternion, angular_velocity, acceleration
        tilt = self.imu_tilt  # the IMU's frame: the root link's, turned by its mounting
        x, y, z, w = quaternion
        mounted = pin.Quaternion(pin.Quaternion(w, x, y, z).toRotationMatrix() @ tilt).coeffs()  # (x, y, z, w)
        angular_velocity = tilt.T @ angular_velocity + self.gyro_bias + \
            self.rng.normal(scale=perturbation.gyro_noise, size=3)
        acceleration = tilt.T @ acceleration + self.accelerometer_bias + \
            self.rng.normal(scale=perturbation.accelerometer_noise, size=3)
        return np.array(mounted), angular_velocity, acceleration

    def foot_wrench(self, sole):
        """(frame, [f; τ]) of the force/torque sensor above ``sole``: the wrench the foot exerts on the ankle
        side, in the foot link's frame (the frame named), as a foot F/T sensor reports it [N, N·m]."""
        if sole not in self._foot_sensors:
            frame = self.model.body(int(self.model.body(sole).parentid[0])).name
            self._foot_sensors[sole] = (frame, self._sensor(f"{sole}_force"), self._sensor(f"{sole}_torque"))
        frame, force, torque = self._foot_sensors[sole]
        return frame, -np.concatenate([self.data.sensordata[force], self.data.sensordata[torque]])

    def ground_truth(self):
        """Base pose and twist, CoM, sole contact forces and the ZMP (Σ pᵢ fᵢ / Σ fᵢ over the floor contacts: on
        a flat floor the point where the contact moments have no horizontal part), all at the current state
        (MuJoCo's own buffers lag one step behind after mj_step, so the forward pass is recomputed here)."""
        mujoco.mj_forward(self.model, self.data)
        mujoco.mj_subtreeVel(self.model, self.data)
        root = int(self.model.jnt_bodyid[0])
        sole_forces = np.zeros((len(self.soles), 3))
        sole_torques = np.zeros((len(self.soles), 3))  # about each sole's origin, world axes
        sole_origins = self.data.xpos[self.sole_bodies]
        wrench = np.zeros(6)
        pressure, normal_force = np.zeros(3), 0.0
        welds = self.geom_welds
        for i in range(self.data.ncon):
            contact = self.data.contact[i]
            bodies = (welds[contact.geom1], welds[contact.geom2])
            mujoco.mj_contactForce(self.model, self.data, i, wrench)
            if self.floor in (contact.geom1, contact.geom2):  # its normal force is vertical
                pressure += wrench[0] * contact.pos
                normal_force += wrench[0]
            for foot, body in enumerate(self.foot_welds):
                if body in bodies:
                    frame = contact.frame.reshape(3, 3).T  # contact frame → world
                    sign = 1.0 if bodies[1] == body else -1.0
                    force = sign * (frame @ wrench[:3])
                    sole_forces[foot] += force
                    sole_torques[foot] += np.cross(contact.pos - sole_origins[foot], force) + sign * (frame @ wrench[3:])
        com_velocity = self.data.subtree_linvel[root].copy()
        rotations = self.data.xmat[self.sole_bodies].reshape(-1, 3, 3).copy()
        return GroundTruth(self.time, self.data.qpos[:3].copy(), _xyzw(self.data.qpos[3:7]),
                           self.data.qvel[:3].copy(), self.data.qvel[3:6].copy(),
                           self.data.subtree_com[root].copy(), com_velocity, sole_forces,
                           self.model.body_subtreemass[root] * com_velocity, self.data.subtree_angmom[root].copy(),
                           pressure / normal_force if normal_force > 0.0 else np.full(3, np.nan),
                           np.concatenate([np.einsum("kji,kj->ki", rotations, sole_forces),
                                           np.einsum("kji,kj->ki", rotations, sole_torques)], axis=1), rotations,
                           sole_origins.copy())
