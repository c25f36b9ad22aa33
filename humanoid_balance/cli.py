"""``humanoid-balance``: the suite's command-line tool."""
import argparse
import os
import sys
from pathlib import Path

import numpy as np

from humanoid_balance import __version__
from humanoid_balance.bench import EXPERIMENTS
from humanoid_balance.resources import DEFAULT_ROBOT

REAL_TIME_RATE = 100.0  # demo --real-time control rate [Hz]


def check_model(urdf, loops, samples=50, seed=0, out=sys.stdout):
    """Load, validate and close the loops; print a summary. Returns the process exit code."""
    from humanoid_balance.model import (Centroidal, ClosedChain, ClosureError, ModelFileError,
                                        SingularConfigurationError, load_robot)

    try:
        robot = load_robot(urdf, loops, floating_base=True)
    except ModelFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    chain = ClosedChain(robot)
    residual = np.linalg.norm(chain.residual(robot.reference_q))
    reference_condition = chain.condition_number(robot.reference_q)
    lower, upper = robot.position_limits(robot.actuated_names)
    rng = np.random.default_rng(seed)
    worst_condition, worst_residual, failures = reference_condition, residual, []
    for _ in range(samples if chain.m else 0):
        q = robot.reference_q.copy()
        q[robot.actuated_q] = rng.uniform(lower, upper)
        try:
            solution = chain.solve_passive(q)
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
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}", file=out)
    if failures:
        print(f"error: {len(failures)} of {samples} actuator samples could not be closed; first: {failures[0]}",
              file=sys.stderr)
        return 1
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="humanoid-balance", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check-model", help="load a URDF + loop-closure YAML, close the loops, summarise")
    check.add_argument("urdf", type=Path, help="URDF of the spanning tree")
    check.add_argument("loops", type=Path, nargs="?", help="loop-closure YAML (omit for a serial robot)")
    check.add_argument("--samples", type=int, default=50, help="random actuator samples to close (default 50)")

    demo = commands.add_parser("demo", help=f"balance {DEFAULT_ROBOT} in MuJoCo through the whole suite: pushes, "
                               "dancing arms; writes a report")
    demo.add_argument("--scenario", choices=("full", "short"), default="full",
                      help="full: 14 s (default); short: 6.5 s, as in CI")
    demo.add_argument("--output", type=Path, default=Path("demo_report"),
                      help="report folder: PNG plots and metrics.json (default ./demo_report)")
    demo.add_argument("--video", type=Path, help="also render the run offscreen to this .gif or .mp4 (MP4 needs ffmpeg)")
    demo.add_argument("--real-time", action="store_true",
                      help="run the plant free against the wall clock instead of in lockstep: nothing waits for the "
                           "controller, as on a robot")
    demo.add_argument("--rate", type=float, default=REAL_TIME_RATE,
                      help=f"control rate with --real-time [Hz] (default {REAL_TIME_RATE:g}, which this 2-core "
                           "development machine sustains)")
    bench = commands.add_parser("bench", help="run the papers' experiments in the embedded simulation; print the "
                                "table and write BENCHMARKS.md")
    bench.add_argument("experiments", nargs="*", metavar="EXPERIMENT",
                       help="some of: " + ", ".join(EXPERIMENTS) + " (default: all)")
    bench.add_argument("--smoke", action="store_true", help="short runs, as in CI")
    bench.add_argument("--output", type=Path, default=Path("BENCHMARKS.md"),
                       help="Markdown file to write (default ./BENCHMARKS.md)")
    bench.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    return parser


def bench(experiments, smoke, output, strict):
    """The benchmark table; returns the exit code (1: an experiment failed to run, or a target missed under
    --strict)."""
    unknown = [name for name in experiments if name not in EXPERIMENTS]
    if unknown:
        print(f"error: unknown experiment(s) {unknown}; choose from {list(EXPERIMENTS)}", file=sys.stderr)
        return 2
    from humanoid_balance.bench import run_benchmarks

    results = run_benchmarks(experiments or list(EXPERIMENTS), smoke=smoke, output=output)
    crashed = any(r.measured.startswith("error:") for r in results)
    missed = [f"{r.experiment}: {r.quantity}" for r in results if r.met is False]
    print(f"\n{len(results) - len(missed)} of {len(results)} rows meet their target or only report; wrote {output}")
    return 1 if crashed or (strict and missed) else 0


def demo(scenario, output, video=None, real_time_rate=None):
    """The closed-loop demo; returns the exit code (0: no fall, ZMP inside the support polygon, nodes OK)."""
    if video is not None:
        os.environ.setdefault("MUJOCO_GL", "egl")  # headless rendering, before MuJoCo loads
        if video.suffix.lower() not in (".gif", ".mp4"):
            print(f"error: --video {video}: give a .gif or .mp4 file name", file=sys.stderr)
            return 2
    from humanoid_balance.demo.runner import run_demo, summary
    from humanoid_balance.demo.scenario import SCENARIOS

    code, figures, paths = run_demo(SCENARIOS[scenario], output, video, real_time_rate=real_time_rate)
    if figures is not None:
        summary(figures, paths)
    return code


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "check-model":
        return check_model(args.urdf, args.loops, samples=args.samples)
    if args.command == "demo":
        if args.rate <= 0.0:
            parser.error(f"--rate {args.rate:g}: give a positive control rate in Hz")
        return demo(args.scenario, args.output, args.video, args.rate if args.real_time else None)
    if args.command == "bench":
        return bench(args.experiments, args.smoke, args.output, args.strict)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
