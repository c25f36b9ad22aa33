"""``humanoid-balance``: the suite's command-line tool."""
import argparse
import os
import sys
from pathlib import Path

import numpy as np

from humanoid_balance import __version__
from humanoid_balance.bench import EXPERIMENTS
from humanoid_balance.demo.scenario import SCENARIOS
from humanoid_balance.nodes import REAL_TIME_RATE
from humanoid_balance.resources import DEFAULT_ROBOT, model_file


COMPARED = ("stepping-modes", "both")
"""demo --mode's choice that runs every mode that steps (control.balancer.STEPPING_MODES) in turn; its older name."""


class DemoModes:
    """demo --mode's choices: the balance modes (control.balancer.MODES) and :data:`COMPARED`, imported only when a
    --mode is given or the help shown (the controllers load pinocchio, a second the other commands need not wait)."""

    def __iter__(self):
        from humanoid_balance.control.balancer import MODES
        return iter((*MODES, *COMPARED))

    def __contains__(self, mode):
        return mode in tuple(self)


def check_model(urdf, loops, samples=50, seed=0, feet=(), package_dirs=(), out=None):
    """Load, validate and close the loops; with ``feet`` (foot links), find each sole and leg as init would; print
    a summary (to ``out``, default stdout). Returns the process exit code."""
    out = out or sys.stdout
    from humanoid_balance.model import (Centroidal, ClosedChain, ClosureError, ModelFileError,
                                        SingularConfigurationError, close_loops, load_robot)
    from humanoid_balance.authoring.robot_setup import find_flat_feet
    from humanoid_balance.authoring.sdf_import import is_sdf

    try:
        urdf = model_file(urdf)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if is_sdf(urdf):
        print(f"error: {urdf} is an SDF model; convert it first with `humanoid-balance import-sdf {urdf} --output "
              "DIR`, then check DIR/<model>.urdf with DIR/<model>.loops.yaml", file=sys.stderr)
        return 1
    try:
        robot = load_robot(urdf, loops, floating_base=True)
        chain = ClosedChain(robot)
        flat = find_flat_feet(urdf, robot, feet, package_dirs, chain) if feet else None
        soles, legs = (flat.soles, flat.legs) if feet else ((), ())
    except ModelFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    residual = np.linalg.norm(chain.residual(robot.reference_q))
    reference_condition = chain.condition_number(robot.reference_q)
    lower, upper = robot.position_limits(robot.actuated_names)
    rng = np.random.default_rng(seed)
    worst_condition, worst_residual, failures = reference_condition, residual, []
    for _ in range(samples if chain.m else 0):
        try:
            solution = close_loops(chain, rng.uniform(lower, upper))  # continued from the reference if far from it
        except (ClosureError, SingularConfigurationError) as error:
            failures.append(str(error))
            continue
        worst_condition = max(worst_condition, solution.condition_number)
        worst_residual = max(worst_residual, solution.residual_norm)

    com = Centroidal(chain).com(robot.reference_q)
    rows = [
        ("URDF", str(urdf)),
        ("loop closures", str(loops) if loops else "none (serial robot)"),
        ("joints", f"{len(robot.joint_names)} (+ floating base)"),
        ("  actuated θ_a", f"{len(robot.actuated_names)}: {', '.join(robot.actuated_names)}"),
        ("  passive θ_u", str(len(robot.passive_names))),
        ("  outputs q", f"{len(robot.output_names)}: {', '.join(robot.output_names)}"),
        ("  measured passive", str(len(robot.measured_names))),
        ("loops", str(len(robot.spec.loops))),
        ("constraint rows", f"{chain.m} (= passive joints)"),
        ("total mass", f"{robot.total_mass:.3f} kg"),
        ("CoM at reference", "[" + ", ".join(f"{x:+.4f}" for x in com) + "] m (base frame)"),
        ("residual after closing", f"{residual:.2e}"),
        ("cond(J_l,u) at reference", f"{reference_condition:.3g}"),
        (f"worst over {samples} random strokes", f"cond {worst_condition:.3g}, residual {worst_residual:.2e}"
         if chain.m else "n/a"),
    ]
    for sole, leg in zip(soles, legs):
        r = sole.rectangle
        rows += [(f"foot {sole.foot_link}", f"sole {r.x_max - r.x_min:.3f} × {r.y_max - r.y_min:.3f} m, "
                  f"at {np.round(sole.placement.translation, 4)} m in the link frame "
                  f"({sole.points} collision points on it)"), ("  leg", ", ".join(leg))]
    if flat is not None and flat.stance is not None:
        rows.append(("feet", "not flat at the reference (tilted " + ", ".join(f"{np.degrees(t):.0f}°" for t in
                                                                            flat.tilt) + "); soles found where the "
                     "stance init writes lays them flat"))
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}", file=out)
    if failures:
        print(f"error: {len(failures)} of {samples} actuator samples could not be closed; first: {failures[0]}",
              file=sys.stderr)
        return 1
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="humanoid-balance", description="The humanoid_balance suite's command-line "
                                     "tool: configure a robot, run the demo and the benchmarks, check and import "
                                     "models.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check-model", help="load a URDF + loop-closure YAML, close the loops, summarise")
    check.add_argument("urdf", type=Path, help="URDF of the spanning tree, or the name of one of example-robot-data's "
                       "(e.g. talos_reduced.urdf)")
    check.add_argument("loops", type=Path, nargs="?", help="loop-closure YAML (omit for a serial robot)")
    check.add_argument("--samples", type=int, default=50, help="random actuator samples to close (default 50)")
    check.add_argument("--feet", nargs=2, default=(), metavar=("LEFT_LINK", "RIGHT_LINK"),
                       help="also find each foot's sole in its collision geometry and its leg, as init does")
    check.add_argument("--package-dirs", nargs="*", default=[], type=Path,
                       help="where package:// meshes are found (besides ROS_PACKAGE_PATH)")

    init = commands.add_parser("init", help="configure the suite for a robot: from its URDF and foot links, write a "
                               "folder with robot.yaml (every node, the demo and the launch files read it)")
    init.add_argument("urdf", type=Path, help="URDF of the robot (the spanning tree of a closed-chain robot), or the "
                      "name of one of example-robot-data's (e.g. talos_reduced.urdf; a wrong name lists them)")
    init.add_argument("--loops", type=Path, help="loop-closure YAML of a closed-chain robot")
    init.add_argument("--feet", nargs=2, required=True, metavar=("LEFT_LINK", "RIGHT_LINK"),
                      help="the links of the left and right foot")
    init.add_argument("--output", type=Path, help="folder to write (default ./<robot name>)")
    init.add_argument("--package-dirs", nargs="*", default=[], type=Path,
                      help="where package:// meshes are found (besides ROS_PACKAGE_PATH)")
    init.add_argument("--sole", nargs=6, action="append", default=[],
                      metavar=("LINK", "Z", "X_MIN", "X_MAX", "Y_MIN", "Y_MAX"),
                      help="a foot's sole, instead of finding it in the foot's geometry: its plane Z [m] above the "
                           "link's origin (negative: below) in the URDF's reference posture, and the rectangle "
                           "around the point under the origin [m], x forward; once per foot")
    init.add_argument("--stance", nargs="+", default=[], metavar="JOINT=VALUE",
                      help="the standing configuration the plant starts in [rad, m], instead of searching one")
    init.add_argument("--limbs", nargs="+", default=[], metavar="NAME[=JOINT,JOINT,...]",
                      help="the limbs that follow joint trajectories (busy_limbs, topic balance/<limb>/trajectory): "
                           "candidates init lists by name, or any chain by its joints")
    init.add_argument("--cartesian-limbs", nargs="+", default=[], metavar="NAME[=JOINT,JOINT,...]",
                      help="the limbs whose end follows target poses, e.g. hands (cartesian_limbs, topic "
                           "balance/<limb>/pose): candidates init lists by name, or any chain by its joints")

    demo = commands.add_parser("demo", help=f"balance a robot (default {DEFAULT_ROBOT}) in MuJoCo through the whole "
                               "suite: pushes, dancing arms, or jumps; writes a report")
    demo.add_argument("--scenario", choices=tuple(SCENARIOS), default="full",
                      help="full: 14 s (default); short: 6.5 s, as in CI; jump: three jumps in a row, 2 s apart, "
                           "in viip mode (7.5 s); step: a lateral push the feet alone do not hold, caught by a "
                           "recovery step (6 s)")
    demo.add_argument("--output", type=Path, default=Path("demo_report"),
                      help="report folder: PNG plots and metrics.json (default ./demo_report)")
    demo.add_argument("--video", type=Path,
                      help="also render the run offscreen to this .gif or .mp4 (MP4 needs ffmpeg)")
    recording = demo.add_mutually_exclusive_group()
    recording.add_argument("--record", type=Path, metavar="DIR",
                           help="record every topic of the node graph, on simulated time, into this rosbag2 directory "
                                "(MCAP storage; DIR.mcap and metadata.yaml inside; 'x.mcap' stands for the directory "
                                "x; with --mode stepping-modes, one per mode: DIR_<mode>). Default: recording "
                                "in the report folder")
    recording.add_argument("--no-record", action="store_true", help="do not record the topics")
    demo.add_argument("--real-time", action="store_true",
                      help="run the plant free against the wall clock instead of in lockstep: nothing waits for the "
                           "controller, as on a robot")
    demo.add_argument("--robot", default=DEFAULT_ROBOT,
                      help="a directory written by `humanoid-balance init`, or a bundled robot "
                           f"(default {DEFAULT_ROBOT})")
    demo.add_argument("--mode", choices=DemoModes(),
                      help="the balance mode (default kinematic; the jump scenario's own for --scenario jump), "
                           "on the drives it needs (control/balancer.py's BALANCE_MODES: momentum "
                           "on the actuators' joint impedance, as a torque-controlled robot); stepping-modes (or "
                           "both): every mode that steps, one after the other on the same pushes, compared")
    demo.add_argument("--rate", type=float, default=REAL_TIME_RATE,
                      help=f"control rate with --real-time [Hz] (default {REAL_TIME_RATE:g}); lower it if the "
                           "summary's actuator command rate falls short of it (the machine cannot keep up)")
    bench = commands.add_parser("bench", help="run the papers' experiments in the embedded simulation; print the "
                                "table and, run whole, write BENCHMARKS.md")
    bench.add_argument("experiments", nargs="*", metavar="EXPERIMENT",
                       help="some of: " + ", ".join(EXPERIMENTS) + " (default: all)")
    bench.add_argument("--smoke", action="store_true", help="short runs, as in CI")
    bench.add_argument("--output", type=Path,
                       help="Markdown file to write (default ./BENCHMARKS.md when every experiment runs; a run of "
                            "some writes nothing without it, so that it never replaces a whole table with a part)")
    bench.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    bench.add_argument("--robot", help="run every experiment on this robot instead of the one its paper used: a "
                       "directory written by `humanoid-balance init`, or a bundled robot; rows that do not apply "
                       "say why")
    bench.add_argument("--record", type=Path, metavar="DIR",
                       help="record each simulated run into DIR, one rosbag2 (MCAP) directory per run: push, dance, "
                            "jump, wrench and cores as the closed loop's ticks turned into the nodes' messages on "
                            "their topics; nodes_push and step with every topic of the node graph. Not recorded: "
                            "dds (a recorder would change the DDS load it measures), estimator and inertia (no "
                            "simulation)")
    sdf = commands.add_parser("import-sdf", help="turn an SDF model with closed chains into DIR/<model>.urdf (the "
                              "spanning tree) and DIR/<model>.loops.yaml (its loop closures); report what changed "
                              "and the problems found")
    sdf.add_argument("sdf", type=Path, help="the SDF file (its first <model>), or the name of one of "
                     "example-robot-data's (e.g. cassie_v2.sdf)")
    sdf.add_argument("--output", type=Path, required=True, metavar="DIR", help="folder to write the two files to")
    sdf.add_argument("--package-dirs", nargs="+", default=[], metavar="DIR",
                     help="folders where model:// and package:// mesh URIs are looked up (also searched: the SDF's "
                          "parent folders and GZ_SIM_RESOURCE_PATH, GAZEBO_MODEL_PATH, SDF_PATH, ROS_PACKAGE_PATH)")
    sdf.add_argument("--actuated", nargs="+", metavar="JOINT",
                     help="motor-driven joints, in actuator-command order. SDF has no actuators, so by default: "
                          "every joint on no loop; the loop joints with an effort limit > 0 that are not spring "
                          "joints; then, while the loops leave passive joints undetermined, loop joints nearest the "
                          "root first (between equals, the one moving a link with collision geometry). The choice "
                          "and the rule are printed")
    sdf.add_argument("--outputs", nargs="+", metavar="JOINT",
                     help="serial-equivalent output joints, one per actuated joint in the same order (default: each "
                          "actuated joint is its own output)")
    sdf.add_argument("--measured", nargs="*", metavar="JOINT",
                     help="passive joints with absolute encoders (default: enough passive loop joints for the initial "
                          "calibration to determine every loop joint, those with position limits first)")
    sdf.add_argument("--loop-axes", nargs="+", default=[], metavar="LOOP=AXES", type=_loop_axes,
                     help="constrain these axes of a loop (named after its cut joint), e.g. knee_rod=x,y, instead of "
                          "the ones the importer finds; for a loop the SDF over-constrains")
    sdf.add_argument("--keep-springs", action="store_true",
                     help="keep spring joints (SDF spring_stiffness > 0) as joints, to be listed in --actuated; by "
                          "default they are locked at their assembly value")
    docs = commands.add_parser("docs", help="build every node on the bundled robot and write the reference of their "
                               "parameters and topics, from their own declarations")
    docs.add_argument("--output", type=Path, default=Path("docs/parameters.md"), metavar="FILE",
                      help="Markdown file to write (default docs/parameters.md: run it from the repository's root)")
    return parser


def _loop_axes(text):
    """``LOOP=AXES`` of ``import-sdf --loop-axes`` → (loop, [axes])."""
    name, _, axes = text.partition("=")
    axes = [axis.strip() for axis in axes.split(",") if axis.strip()]
    if not name or not axes:
        raise argparse.ArgumentTypeError(f"{text!r}: write LOOP=AXES, e.g. knee_rod=x,y")
    return name, axes


def import_sdf(sdf, output, package_dirs=(), actuated=None, outputs=None, measured=None, loop_axes=(),
               keep_springs=False, out=None):
    """SDF with closed chains → URDF + loop-closure YAML; print what changed and the problems found. Returns the
    process exit code (1: the file cannot be imported, said in one line)."""
    from humanoid_balance.authoring.sdf_import import SdfImportError
    from humanoid_balance.authoring.sdf_import import import_sdf as convert

    try:
        result = convert(model_file(sdf, ".sdf"), output, actuated=actuated, outputs=outputs, measured=measured,
                         loop_axes=dict(loop_axes), package_dirs=package_dirs, keep_springs=keep_springs)
    except (FileNotFoundError, SdfImportError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for line in result.report():
        print(line, file=out or sys.stdout)
    return 0


def bench(experiments, smoke, output, strict, robot=None, record=None):
    """The benchmark table; returns the exit code (1: an experiment failed to run, the robot cannot be loaded, or
    a target missed under --strict)."""
    unknown = [name for name in experiments if name not in EXPERIMENTS]
    if unknown:
        print(f"error: unknown experiment(s) {unknown}; choose from {list(EXPERIMENTS)}", file=sys.stderr)
        return 2
    from humanoid_balance.bench import run_benchmarks
    from humanoid_balance.model import ModelError, load_robot
    from humanoid_balance.model.robot_config import check_robot_config, load_robot_config
    from humanoid_balance.resources import robot_config_file

    if robot is not None:
        try:
            config = load_robot_config(robot_config_file(robot))
            check_robot_config(config, load_robot(config.urdf_file, config.loops, floating_base=True), robot)
        except (ModelError, ValueError, OSError) as error:
            print(f"humanoid-balance bench: error: --robot {robot}: {error}", file=sys.stderr)
            return 1
    if output is None and not experiments:
        output = Path("BENCHMARKS.md")
    command = " ".join(["humanoid-balance bench", *experiments] + ([f"--robot {robot}"] if robot else []))
    results = run_benchmarks(experiments or list(EXPERIMENTS), smoke=smoke, output=output, command=command,
                             robot=robot, record=record)
    crashed = any(r.measured.startswith("error:") for r in results)
    missed = [f"{r.experiment}: {r.quantity}" for r in results if r.met is False]
    written = f"wrote {output}" if output is not None else "nothing written (some experiments only: --output FILE)"
    print(f"\n{len(results) - len(missed)} of {len(results)} rows meet their target or only report; {written}")
    if record is not None:
        runs = sorted(path.name for path in record.glob("*/metadata.yaml"))
        print(f"recorded {len(runs)} simulated runs into {record} (rosbag2, MCAP)")
    return 1 if crashed or (strict and missed) else 0


def init(urdf, feet, output, loops=None, package_dirs=(), soles=(), stance=(), limbs=(), cartesian_limbs=()):
    """``humanoid-balance init``; returns the exit code (1 with one line naming what is wrong, or what is missing
    from the folder it wrote and the option that gives it)."""
    from humanoid_balance.model import ModelError
    from humanoid_balance.authoring.robot_init import init_robot

    try:
        init_robot(model_file(urdf), feet, output, loops, package_dirs, soles, stance, limbs, cartesian_limbs)
    except (ModelError, ValueError, OSError) as error:
        print(f"humanoid-balance init: error: {error}", file=sys.stderr)
        return 1
    return 0


def demo(scenario, output, video=None, real_time_rate=None, robot=DEFAULT_ROBOT, mode=None, record=True):
    """The closed-loop demo; returns the exit code (0: no fall, ZMP inside the support polygon or every jump
    landed, nodes OK). ``mode``: the scenario's own (viip for jumps) or kinematic when None; ``stepping-modes`` (or
    ``both``) runs every mode that steps (control.balancer.STEPPING_MODES) into ``output``/<mode> and compares them.
    ``record``: True (into the report folder), False, or a rosbag2 directory."""
    if video is not None:
        os.environ.setdefault("MUJOCO_GL", "egl")  # headless rendering, before MuJoCo loads
        if video.suffix.lower() not in (".gif", ".mp4"):
            print(f"error: --video {video}: give a .gif or .mp4 file name", file=sys.stderr)
            return 2
    from humanoid_balance.demo.report import comparison
    from humanoid_balance.demo.runner import run_demo, summary
    from humanoid_balance.nodes.entry import USER_MISTAKES
    from humanoid_balance.recording import bag_path

    needed = SCENARIOS[scenario].mode
    if needed and mode not in (None, needed):
        print(f"humanoid-balance demo: error: --scenario {scenario} runs in {needed} mode, not --mode {mode}",
              file=sys.stderr)
        return 2
    mode = mode or needed or "kinematic"
    compared = mode in COMPARED
    if compared:
        from humanoid_balance.control.balancer import STEPPING_MODES
    modes = STEPPING_MODES if compared else (mode,)
    codes, runs = [], {}
    for each in modes:
        folder = output / each if compared else output
        recording = folder / "recording" if record is True else record or None
        if recording and compared and record is not True:
            recording = bag_path(recording).with_name(f"{bag_path(recording).name}_{each}")
        try:
            code, figures, paths = run_demo(SCENARIOS[scenario], folder, video, real_time_rate=real_time_rate,
                                            robot=robot, mode=each, record=recording)
        except USER_MISTAKES as error:
            print(f"humanoid-balance demo: error: {error}", file=sys.stderr)
            return 1
        codes.append(code)
        if figures is None:
            return code
        summary(figures, paths)
        runs[each] = figures
    if len(runs) > 1:
        print(comparison(runs, output))
    return max(codes)


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "check-model":
        return check_model(args.urdf, args.loops, samples=args.samples, feet=args.feet,
                           package_dirs=args.package_dirs)
    if args.command == "init":
        return init(args.urdf, args.feet, args.output or Path(args.urdf.stem), args.loops, args.package_dirs,
                    args.sole, args.stance, args.limbs, args.cartesian_limbs)
    if args.command == "demo":
        if args.rate <= 0.0:
            parser.error(f"--rate {args.rate:g}: give a positive control rate in Hz")
        return demo(args.scenario, args.output, args.video, args.rate if args.real_time else None, args.robot,
                    args.mode, False if args.no_record else args.record or True)
    if args.command == "bench":
        return bench(args.experiments, args.smoke, args.output, args.strict, args.robot, args.record)
    if args.command == "import-sdf":
        return import_sdf(args.sdf, args.output, args.package_dirs, args.actuated, args.outputs, args.measured,
                          args.loop_axes, args.keep_springs)
    if args.command == "docs":
        if not args.output.parent.is_dir():
            parser.error(f"--output {args.output}: no folder {args.output.parent}")
        from humanoid_balance.nodes.reference import write_reference
        write_reference(args.output)
        print(f"wrote {args.output}")
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
