"""``humanoid-balance demo``: the embedded plant and the four suite nodes in one process, on one rclpy EventsExecutor.

The nodes are the same classes, with the same parameter files, that ``sim.launch.py`` starts, composed as
balance_stack composes them: each joint_states of the plant runs one BalanceLoop cycle of their stages
(nodes/composition.py), and each node publishes its topics to whoever subscribes (the director, a recorder, RViz). By default the plant
runs in lockstep on its own /clock: the closed loop sees one tick of delay whatever the machine, and runs are
reproducible. With ``real_time_rate`` the plant runs free against the wall clock at that control rate, as a robot
does, and nothing waits for the controller. A director node plays the scenario (pushes on sim/push, arm
trajectories on balance/<arm>/trajectory, jumps asked of centroidal_balancer/jump), publishes robot_description
(latched, as robot_state_publisher does) and records ground truth and estimates for the report. With ``record``,
a recorder node writes every topic of the graph, on the plant's clock, into a rosbag2 (MCAP) directory, with the
robot's /tf.
"""
import gc
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PolygonStamped, PoseStamped, Vector3Stamped, WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from rclpy.executors import ExternalShutdownException
from rclpy.experimental import EventsExecutor
from rclpy.node import Node
from std_msgs.msg import Int8, String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import Marker, MarkerArray

from humanoid_balance.deployment import (mode_parameters, simulation_parameters, suite_parameters,
                                         write_parameter_file)
from humanoid_balance.demo.report import Recording, metrics, summary_lines, write_report
from humanoid_balance.estimation.contact_wrench import center_of_pressure
from humanoid_balance.model.meshes import description_text
from humanoid_balance.model.soles import polygon_margin, sole_tilt
from humanoid_balance.nodes import BALANCE_NODES, PLANT, node_factory
from humanoid_balance.nodes.composition import Composition
from humanoid_balance.nodes.diagnostics import LEVEL_NAMES
from humanoid_balance.nodes.messages import stamp_seconds, trajectory_message, vector_values
from humanoid_balance.nodes.qos import RELIABLE_QOS, SENSOR_QOS
from humanoid_balance.progress import Progress
from humanoid_balance.recording import LATCHED_QOS, Bag, GraphRecorder, RobotTransforms, TransformRecorder
from humanoid_balance.resources import DEFAULT_ROBOT, robot_config_file

__all__ = ["run_demo", "SUITE"]

SEVERITY = ("OK", "WARN", "STALE", "ERROR")
SUITE = {name: node_factory(name) for name in (PLANT, *BALANCE_NODES)}
"""node name → what builds it, as sim.launch.py starts them."""
REPORT_OVERRIDES = {PLANT: {"ground_truth_rate": 0.0}}  # the report samples the ground truth at every tick
COP_FORCE = 1.0  # [N] a sole pressing less than this has no CoP in the report's figures


def build_suite(real_time_rate=None, robot=DEFAULT_ROBOT, mode="kinematic", parameters=None, scenario=None):
    """The five nodes by name, the four of the suite composed as in balance_stack, each with its parameters merged as
    the launch files merge them
    (:func:`humanoid_balance.deployment.suite_parameters`: its parameter file, the robot's configuration — a bundled
    robot's name or a directory written by ``humanoid-balance init`` —, then what the embedded plant needs, as
    sim.launch.py gives it (:func:`~humanoid_balance.deployment.simulation_parameters`: lockstep, or free-running at
    ``real_time_rate`` [Hz]; contacts from actuator forces), the report's, the balance mode's
    (:func:`~humanoid_balance.deployment.mode_parameters`), the ``scenario``'s
    (:meth:`~humanoid_balance.demo.scenario.Scenario.parameters`), and ``parameters``: node → {name: value})."""
    layers = (simulation_parameters(real_time_rate=real_time_rate), REPORT_OVERRIDES, mode_parameters(mode),
              scenario.parameters() if scenario else {}, parameters or {})
    parameters = suite_parameters(robot_config_file(robot), {
        name: {key: value for layer in layers for key, value in layer.get(name, {}).items()} for name in SUITE})
    stack = Composition()  # the four nodes as balance_stack runs them
    with tempfile.TemporaryDirectory(prefix="demo_") as folder:  # read as each node is built
        path = write_parameter_file(parameters, Path(folder) / "parameters.yaml")
        return {name: factory(cli_args=["--ros-args", "--params-file", str(path)],
                              **({"hub": stack} if name in BALANCE_NODES else {}))
                for name, factory in SUITE.items()}


class Director(Node):
    """Plays the scenario on simulated time and records what the report needs."""

    def __init__(self, scenario, feet, limbs, urdf, progress):
        """``limbs``: busy limb → (joints, swing) of those that dance; ``urdf``: the robot's URDF file, published
        on robot_description; ``progress``: a :class:`Progress`."""
        super().__init__("demo_director")
        self.scenario, self.feet, self.limbs, self.progress = scenario, feet, limbs, progress
        self.recording = Recording()
        self.pending_pushes = list(scenario.pushes)
        self.pending_jumps = list(scenario.jumps)
        self.jump_client = self.create_client(Trigger, "centroidal_balancer/jump")
        self.dance_sent = False
        self.now = 0.0
        self.latest = {"com": None, "margin": float("nan"), "forces": np.zeros(len(feet)), "tilts": np.zeros(len(feet)),
                       "soles": np.zeros(2 * len(feet))}
        self.linear_momentum = None
        self.commands = 0  # actuator_commands received, for the command rate
        self.arm_joints = [joint for joints, _ in limbs.values() for joint in joints]  # the dancers' joints
        self.arm_index = (None, None)  # (joint_states' names, where the arm joints are among them)
        if scenario.dance and limbs:
            self.recording.arm_swing = np.concatenate([np.asarray(swing, dtype=float) for _, swing in limbs.values()])
            self.recording.arm_joints = {limb: tuple(joints) for limb, (joints, _) in limbs.items()}
            self.create_subscription(JointState, "joint_states", self.on_joint_states, SENSOR_QOS)
        self.description_publisher = self.create_publisher(String, "robot_description", LATCHED_QOS)
        self.description_publisher.publish(String(data=description_text(urdf)))
        self.push_publisher = self.create_publisher(WrenchStamped, "sim/push", RELIABLE_QOS)
        self.arm_publishers = {limb: self.create_publisher(JointTrajectory, f"balance/{limb}/trajectory",
                                                           RELIABLE_QOS) for limb in limbs}
        self.create_subscription(Odometry, "sim/odom", self.on_odom, RELIABLE_QOS)
        self.create_subscription(PointStamped, "sim/com", self.on_com, RELIABLE_QOS)
        self.create_subscription(PointStamped, "zmp", self.on_zmp, RELIABLE_QOS)
        self.create_subscription(PolygonStamped, "support_polygon", self.on_polygon, RELIABLE_QOS)
        self.create_subscription(Vector3Stamped, "sim/linear_momentum", self.on_linear_momentum, RELIABLE_QOS)
        self.create_subscription(Vector3Stamped, "sim/angular_momentum", self.on_angular_momentum, RELIABLE_QOS)
        self.contact_states = np.full(len(feet), -1)
        for k, foot in enumerate(feet):
            self.create_subscription(WrenchStamped, f"sim/{foot}/contact_force",
                                     lambda message, k=k: self.on_contact_force(k, message), RELIABLE_QOS)
            self.create_subscription(Int8, f"contact/{foot}/state",
                                     lambda message, k=k: self.on_contact_state(k, message), RELIABLE_QOS)
            self.create_subscription(WrenchStamped, f"sim/{foot}/sole_wrench",
                                     lambda message, k=k: self.on_sole_wrench(k, message, "sole_cops"), RELIABLE_QOS)
            self.create_subscription(WrenchStamped, f"contact/{foot}/desired_wrench",
                                     lambda message, k=k: self.on_sole_wrench(k, message, "desired_cops"),
                                     RELIABLE_QOS)
            self.create_subscription(PoseStamped, f"sim/{foot}/sole_pose",
                                     lambda message, k=k: self.on_sole_pose(k, message), RELIABLE_QOS)
        self.create_subscription(DiagnosticArray, "/diagnostics", self.on_diagnostics, RELIABLE_QOS)
        if scenario.stepping:
            self.create_subscription(MarkerArray, "balance/markers", self.on_balance_markers, RELIABLE_QOS)
            self.create_subscription(MarkerArray, "contact/markers", self.on_contact_markers, RELIABLE_QOS)
        self.create_subscription(Float64MultiArray, "actuator_commands",
                                 lambda _: setattr(self, "commands", self.commands + 1), RELIABLE_QOS)

    @property
    def done(self):
        return self.now >= self.scenario.duration

    # -- the scenario, on the plant's ground-truth clock -----------------------------------------------
    def on_odom(self, message):
        self.now = stamp_seconds(message.header.stamp)
        position, attitude = message.pose.pose.position, message.pose.pose.orientation
        self.recording.add("base", self.now, position.z)
        self.recording.add("base_pose", self.now, position.x, position.y,
                           pin.rpy.matrixToRpy(pin.Quaternion(attitude.w, attitude.x, attitude.y,
                                                              attitude.z).matrix())[1])
        while self.pending_pushes and self.now >= self.pending_pushes[0].time:
            self.push(self.pending_pushes.pop(0), message.header.stamp)
        while self.pending_jumps and self.now >= self.pending_jumps[0]:
            self.jump(self.pending_jumps.pop(0))
        if not self.dance_sent and self.limbs and self.scenario.dance and self.now >= self.scenario.dance.start:
            self.dance(message.header.stamp)
        self.progress.update(self.now, lambda: self.status(message.pose.pose.position.z))

    def status(self, base_height):
        """The run in a few figures: base height [m], lateral CoM, ZMP margin, sole forces."""
        com = self.latest["com"]
        return (f"base {base_height:.3f} m, CoM y {com[1] * 1000 if com is not None else float('nan'):+6.1f} mm, "
                f"ZMP margin {self.latest['margin'] * 1000:5.1f} mm, soles "
                + " / ".join(f"{f:.0f}" for f in self.latest["forces"]) + " N")

    def push(self, push, stamp):
        message = WrenchStamped()
        message.header.stamp, message.header.frame_id = stamp, push.body
        message.wrench.force.x, message.wrench.force.y, message.wrench.force.z = map(float, push.force)
        self.push_publisher.publish(message)
        self.progress.line(f"[{self.now:5.1f} s] {push.label}: {np.linalg.norm(push.force):.0f} N on {push.body}")

    def jump(self, time):
        """Ask centroidal_balancer/jump; its answer is logged when it comes (the plant's clock goes on meanwhile)."""
        label = f"jump {self.scenario.jumps.index(time) + 1}"
        self.progress.line(f"[{self.now:5.1f} s] {label}: asking centroidal_balancer/jump")
        future = self.jump_client.call_async(Trigger.Request())
        future.add_done_callback(lambda done: None if done.result().success else self.progress.line(
            f"[{self.now:5.1f} s] {label} refused: {done.result().message}"))

    def dance(self, stamp):
        dance = self.scenario.dance
        for limb, (joints, swing) in self.limbs.items():
            times, _, velocities = dance.trajectory(swing)  # velocities only: from where the arm is
            self.arm_publishers[limb].publish(trajectory_message(joints, times, None, velocities, stamp))
        self.dance_sent = True
        self.progress.line(f"[{self.now:5.1f} s] dancing arms: {', '.join(self.limbs)} at {dance.frequency:g} Hz for "
                      f"{dance.duration:g} s")

    # -- recording --------------------------------------------------------------------------------------
    def on_com(self, message):
        p = message.point
        self.latest["com"] = (p.x, p.y, p.z)
        self.recording.add("com", stamp_seconds(message.header.stamp), p.x, p.y, p.z)

    def on_zmp(self, message):
        t, p = stamp_seconds(message.header.stamp), message.point
        self.recording.add("zmp", t, p.x, p.y)
        if len(self.recording.polygon) >= 3:
            self.latest["margin"] = polygon_margin((p.x, p.y), self.recording.polygon)
            self.recording.add("zmp_margin", t, self.latest["margin"])

    def on_joint_states(self, message):
        """The dancing arms' joints as the plant measures them: the angles they reached."""
        names = tuple(message.name)
        if self.arm_index[0] != names:
            self.arm_index = (names, [names.index(joint) for joint in self.arm_joints])
        self.recording.add("arms", stamp_seconds(message.header.stamp),
                           *np.asarray(message.position)[self.arm_index[1]])

    def on_polygon(self, message):
        polygon = np.array([[p.x, p.y, p.z] for p in message.polygon.points]).reshape(-1, 3)
        self.recording.polygon = polygon
        if len(polygon):
            self.recording.add("polygon_bounds", stamp_seconds(message.header.stamp), *polygon[:, :2].min(axis=0),
                               *polygon[:, :2].max(axis=0))
            if self.recording.standing_polygon is None and self.now >= self.scenario.settle:
                self.recording.standing_polygon = polygon

    def on_contact_force(self, k, message):
        self.latest["forces"][k] = message.wrench.force.z
        if k == len(self.feet) - 1:
            self.recording.add("foot_forces", stamp_seconds(message.header.stamp), *self.latest["forces"])

    def on_sole_wrench(self, k, message, channel):
        """A sole's wrench in its sole frame (the plant's ground truth, or the balancer's distributed one): its CoP
        (x, y) [m] and normal force [N]."""
        wrench = vector_values(message.wrench.force, message.wrench.torque)
        cop = center_of_pressure(wrench, COP_FORCE)
        self.recording.add(channel, stamp_seconds(message.header.stamp), k, *((math.nan,) * 2 if cop is None else cop),
                           wrench[2])

    def on_sole_pose(self, k, message):
        """A sole's tilt from the floor [rad] and where it stands, from the plant's ground truth (rows t, tilt of each
        foot; rows t, x and y of each foot [m])."""
        q, position = message.pose.orientation, message.pose.position
        normal = (2.0 * (q.x * q.z + q.w * q.y), 2.0 * (q.y * q.z - q.w * q.x), 1.0 - 2.0 * (q.x * q.x + q.y * q.y))
        self.latest["tilts"][k] = sole_tilt(normal)  # the third column of the quaternion's rotation
        self.latest["soles"][2 * k:2 * k + 2] = position.x, position.y
        if k == len(self.feet) - 1:
            stamp = stamp_seconds(message.header.stamp)
            self.recording.add("sole_tilts", stamp, *self.latest["tilts"])
            self.recording.add("sole_positions", stamp, *self.latest["soles"])

    def on_contact_state(self, k, message):
        """The contact estimator's phase of each foot (1 contact, 0 aerial, −1 unknown), when it changes."""
        if message.data != self.contact_states[k]:
            self.contact_states[k] = message.data
            self.recording.add("contact_states", self.now, *self.contact_states)

    def on_balance_markers(self, message):
        """The balancer's capture point and planned footstep, as RViz shows them."""
        for marker in message.markers:
            if marker.ns == "capture_point":
                self.recording.add("capture_point", stamp_seconds(marker.header.stamp), marker.pose.position.x,
                                   marker.pose.position.y)
            elif marker.ns == "footstep" and marker.action == Marker.ADD:
                self.recording.add("footsteps", stamp_seconds(marker.header.stamp), marker.pose.position.x,
                                   marker.pose.position.y)

    def on_contact_markers(self, message):
        """Where each sole is (the contact estimator's markers, in the feet's order): centre, yaw, length, width."""
        for marker in message.markers:
            if marker.ns == "soles":
                q = marker.pose.orientation
                yaw = np.arctan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
                self.recording.add("soles", stamp_seconds(marker.header.stamp), marker.id, marker.pose.position.x,
                                   marker.pose.position.y, yaw, marker.scale.x, marker.scale.y)

    def on_linear_momentum(self, message):
        self.linear_momentum = message.vector

    def on_angular_momentum(self, message):
        if self.linear_momentum is not None:
            p, k = self.linear_momentum, message.vector
            self.recording.add("momentum", stamp_seconds(message.header.stamp), p.x, p.y, p.z, k.x, k.y, k.z)

    def on_diagnostics(self, message):
        if self.now < self.scenario.settle + 1.0:
            return  # start-up warnings (no data yet) are not judged
        for status in message.status:
            node = status.name.split(":")[0]
            level = LEVEL_NAMES[status.level]
            worst = self.recording.diagnostics.get(node, ("OK", ""))
            if SEVERITY.index(level) >= SEVERITY.index(worst[0]):
                self.recording.diagnostics[node] = (level, status.message)


class Video:
    """Offscreen frames of the plant (MuJoCo EGL renderer), saved as GIF (Pillow) or MP4 (ffmpeg)."""

    def __init__(self, simulation, path, fps=25, size=(480, 360)):
        import mujoco

        self.mujoco, self.simulation, self.path, self.fps = mujoco, simulation, Path(path), fps
        if self.path.suffix.lower() not in (".gif", ".mp4"):
            raise ValueError(f"--video {path}: give a .gif or .mp4 file name")
        self.renderer = mujoco.Renderer(simulation.model, size[1], size[0])
        self.camera = mujoco.MjvCamera()
        self.camera.distance, self.camera.azimuth, self.camera.elevation = 2.4, -140.0, -10.0
        self.frames, self.next_time = [], 0.0

    def capture(self):
        if self.simulation.time < self.next_time:
            return
        self.next_time += 1.0 / self.fps
        self.camera.lookat[:] = self.simulation.data.qpos[:3] - [0.0, 0.0, 0.25]
        self.renderer.update_scene(self.simulation.data, self.camera)
        self.frames.append(self.renderer.render().copy())

    def save(self):
        if self.path.suffix.lower() == ".gif":
            from PIL import Image

            images = [Image.fromarray(frame) for frame in self.frames]
            images[0].save(self.path, save_all=True, append_images=images[1:], duration=int(1000 / self.fps), loop=0)
        else:
            import shutil
            import subprocess

            ffmpeg = shutil.which("ffmpeg")
            if ffmpeg is None:
                raise RuntimeError("an MP4 needs ffmpeg on the PATH; ask for a .gif instead")
            height, width, _ = self.frames[0].shape
            subprocess.run([ffmpeg, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s",
                            f"{width}x{height}", "-r", str(self.fps), "-i", "-", "-pix_fmt", "yuv420p",
                            str(self.path)], input=b"".join(f.tobytes() for f in self.frames), check=True)
        return self.path


def run_demo(scenario, output, video=None, wall_timeout=None, progress=None, real_time_rate=None,
             robot=DEFAULT_ROBOT, mode="kinematic", record=None, parameters=None):
    """Run ``scenario`` on ``robot`` (a bundled robot's name or a directory written by ``humanoid-balance init``)
    in balance ``mode`` (control.balancer.MODES); write the report folder ``output``; return (exit code, metrics,
    written paths).

    ``real_time_rate`` [Hz]: run the plant free against the wall clock at that control rate instead of in lockstep.
    ``record``: a rosbag2 directory to record every topic into (see :func:`start_recording`). ``progress``: a
    :class:`Progress` (default: a bar to stdout). ``parameters``: node → {name: value} on top of the rest.
    """
    progress = progress or Progress(scenario.duration)
    progress.begin_run()
    rclpy.init(args=["--ros-args", "--log-level", "warn"])
    nodes, recorder, executor = {}, None, None
    try:
        nodes = build_suite(real_time_rate, robot, mode, parameters, scenario)
        plant, config = nodes["mujoco_sim"], nodes["centroidal_balancer"].robot_config
        for warning in plant.sim.warnings:
            progress.line(f"warning: {warning}")
        for notice in plant.sim.notices:
            progress.line(f"note: {notice}")
        limbs = {limb: (config.limb_joints[limb], config.limb_swing[limb]) for limb in config.busy_limbs
                 if limb in config.limb_swing}
        if scenario.dance and not limbs:
            progress.line(f"note: {Path(config.urdf_file).stem} has no busy limb with a swing: no dancing arms")
        scenario = scenario.for_robot(plant.sim.mass, plant.sim.root_body, plant.push_duration, dancing=bool(limbs))
        director = nodes["demo_director"] = Director(scenario, plant.feet, limbs, config.urdf_file, progress)
        if record is not None:
            recorder = start_recording(record, config.urdf_file, {
                "recorded_by": "humanoid-balance demo", "scenario": scenario.name, "robot": str(robot), "mode": mode,
                "plant": f"free-running at {real_time_rate:g} Hz" if real_time_rate else "lockstep"})
        camera = Video(plant.sim, video) if video else None
        executor = EventsExecutor()  # 2.3 times the SingleThreadedExecutor's ticks per second in lockstep
        for node in nodes.values():
            executor.add_node(node)
        pace = (f"running free against the wall clock at {real_time_rate:g} Hz" if real_time_rate else "in lockstep")
        progress.line(f"humanoid_balance demo: {scenario.name} scenario on {Path(config.urdf_file).stem} in {mode} "
                      f"mode, {scenario.duration:g} s simulated, MuJoCo plant {pace} with state_estimator → "
                      "contact_estimator → centroidal_balancer → loop_closure_mapper")
        started = time.monotonic()
        limit = wall_timeout or 40.0 * scenario.duration + 60.0
        while not director.done:
            if time.monotonic() - started > limit:
                progress.line(f"stopped after {limit:.0f} s of wall time at {director.now:.1f} s simulated")
                break
            executor.spin_once(timeout_sec=0.1)
            if recorder is not None:
                recorder.poll()
            if camera is not None:
                camera.capture()
        progress.close()
        wall = time.monotonic() - started
        figures = metrics(director.recording, scenario, wall, plant.push_duration)
        figures["control"] = {"mode": mode,
                              "plant": f"free-running at {real_time_rate:g} Hz" if real_time_rate else "lockstep",
                              "actuator command rate achieved [Hz]": director.commands / wall}
        if recorder is not None:
            figures["recording"] = finish_recording(recorder)
        paths = write_report(output, director.recording, scenario, figures, director.feet)
        if recorder is not None:
            paths.append(recorder.bag.path)
        if camera is not None and camera.frames:
            paths.append(camera.save())
        return (0 if figures["success"] else 1), figures, paths
    except (KeyboardInterrupt, ExternalShutdownException):
        return 130, None, []
    finally:
        if recorder is not None:
            recorder.bag.close()   # a recording cut short is still a valid one
        if executor is not None:   # first: the nodes it holds are in use, and destroying them would wait
            executor.shutdown()
        for node in nodes.values():
            node.destroy_node()
        rclpy.try_shutdown()
        # A destroyed lifecycle node stays in the DDS graph, silent, until the reference cycles holding its rclpy
        # objects are collected (cf. ros2/rclpy#1710): collect them now, so that a caller holding nothing of the
        # run (a script, the CLI) keeps no ghost of its nodes beside the ones it starts next under the same names.
        nodes.clear()
        gc.collect()


def start_recording(path, urdf, description):
    """A :class:`GraphRecorder` of every topic into the rosbag2 directory ``path`` (``x.mcap``: the directory
    ``x``), stamped with the simulated time, plus /tf and /tf_static of the robot (``urdf``) from
    estimated_joint_states and odom; ``description`` (key → text) goes into the metadata."""
    recorder = GraphRecorder(Bag(path, description), use_sim_time=True)
    TransformRecorder(recorder, RobotTransforms(urdf))
    return recorder


def finish_recording(recorder):
    """Close the recording; what it holds: path, topics, messages, size, and any topic of the graph it missed."""
    missed = recorder.close()
    bag = recorder.bag
    if missed:
        recorder.node.get_logger().warning(f"not recorded: {', '.join(missed)}")
    return {"path": str(bag.path), "topics": len(bag.counts), "messages": sum(bag.counts.values()),
            "size [MB]": bag.file.stat().st_size / 1e6, "topics of the graph not recorded": missed}


def summary(figures, paths, out=sys.stdout):
    """The console summary: verdict, the headline figures, the files
    (:func:`~humanoid_balance.demo.report.summary_lines`)."""
    print("\n".join(summary_lines(figures, paths)), file=out)
