"""import_sdf: the SDF import's steps (:mod:`humanoid_balance.authoring.sdf_import`) — the tree and its URDF, the
loops' axes, the actuated, output and measured joints, a reference configuration with every loop closed — written
as the suite's robot files and checked by loading them. Units: m, rad, kg, kg·m², N, N·m, s."""
import difflib
import itertools
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from humanoid_balance.authoring.sdf_import.loops import (AXIS_ROWS, ImportedLoop, LoopKinematics, condition_number,
                                                         numerical_rank)
from humanoid_balance.authoring.sdf_import.sdf import MOVABLE, import_error, parse_sdf
from humanoid_balance.authoring.sdf_import.urdf import UNLIMITED_RANGE, UrdfBuilder, spanning_tree
from humanoid_balance.model.closed_chain import ClosedChain
from humanoid_balance.model.errors import ClosureError, ModelFileError, SingularConfigurationError
from humanoid_balance.model.robot import load_robot

__all__ = ["SdfImport", "import_sdf"]

NEAR_SINGULAR = 100.0     # cond of a loop's constraint Jacobian above which it is reported (the mapper refuses 200)
NOMINAL_AXES = {"ball": ("x", "y", "z"), "revolute": ("x", "y", "z", "rx", "ry"),
                "prismatic": ("x", "y", "rx", "ry", "rz"), "fixed": ("x", "y", "z", "rx", "ry", "rz")}


@dataclass
class SdfImport:
    """What :func:`import_sdf` wrote and found."""

    sdf_path: str
    model_name: str
    urdf_path: str
    loops_path: str
    links: int
    tree_joints: tuple            # movable joints of the URDF, in tree order
    loops: list
    actuated: tuple
    actuated_rule: str            # how the actuated joints were chosen
    outputs: tuple
    measured_passive: tuple
    reference: dict               # joint -> value [rad or m], every loop closed
    changes: list
    problems: list
    reference_residual: float     # ‖e_l‖ at the reference, after load_robot [m, rad]
    reference_condition: float    # cond(J_l,u) at the reference
    sample_residual: float        # worst ‖e_l‖ over closures at random actuator values [m, rad]
    samples_closed: int
    samples_tried: int

    def report(self):
        """The summary printed by ``humanoid-balance import-sdf``, as lines."""
        lines = [f"imported model '{self.model_name}' from {self.sdf_path}: {self.links} links, "
                 f"{len(self.tree_joints)} joints in the spanning tree, {len(self.loops)} loops",
                 f"wrote {self.urdf_path}", f"wrote {self.loops_path}", "changes:"]
        lines += [f"  {change}" for change in self.changes] or ["  none"]
        lines.append("loops:")
        for loop in self.loops:
            dropped = f" ({', '.join(loop.dropped_axes)} not constrained)" if loop.dropped_axes else ""
            lines.append(f"  {loop.name}: cut {loop.cut_kind} joint, {loop.frame_a} on {loop.link_a} = {loop.frame_b} "
                         f"on {loop.link_b} along [{', '.join(loop.axes)}]{dropped}; joints {', '.join(loop.joints)}; "
                         f"at the assembly pose cond(J_l) {loop.condition_at_assembly:.3g}, cond(J_l,u) "
                         f"{loop.passive_condition_at_assembly:.3g}")
        lines += [f"actuated ({self.actuated_rule}): {', '.join(self.actuated) or 'none'}",
                  f"outputs: {', '.join(self.outputs) or 'none'}",
                  f"measured_passive: {', '.join(self.measured_passive) or 'none'}",
                  f"reference: ‖e_l‖ = {self.reference_residual:.2e}, cond(J_l,u) = "
                  f"{self.reference_condition:.3g}; loops closed at {self.samples_closed} of {self.samples_tried} "
                  f"random actuator values, worst ‖e_l‖ {self.sample_residual:.2e}"]
        lines.append("problems:")
        lines += [f"  {problem}" for problem in self.problems] or ["  none found"]
        return lines


def _yaml_scalar(name):
    return yaml.safe_dump(name, default_flow_style=True).strip().removesuffix("...").strip()


def _yaml_list(names):
    return "[" + ", ".join(_yaml_scalar(name) for name in names) + "]"


def _loops_yaml(model_name, source, loops, actuated, outputs, measured, reference, note):
    lines = [f"# Closed loops of {model_name}.urdf (each loop cut at one SDF joint), written by humanoid-balance "
             f"import-sdf from {source}.", "# axes: constrained directions expressed in frame_a. Units: m, rad.",
             "humanoid_balance_loops: 1", "loops:" if loops else "loops: []"]
    for loop in loops:
        lines += [f"  - name: {_yaml_scalar(loop.name)}", f"    frame_a: {_yaml_scalar(loop.frame_a)}",
                  f"    frame_b: {_yaml_scalar(loop.frame_b)}", f"    axes: {_yaml_list(loop.axes)}"]
    lines += [f"actuated: {_yaml_list(actuated)}", f"outputs: {_yaml_list(outputs)}",
              f"measured_passive: {_yaml_list(measured)}"]
    if reference:
        lines.append(f"reference:  # {note}")
        lines += [f"  {_yaml_scalar(name)}: {value:.12f}" for name, value in reference.items()]
    return "\n".join(lines) + "\n"


def _check_names(path, option, names, known, why):
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=3)
            raise import_error(path, option, f"'{name}' is not {why}" + (f"; did you mean {close}?" if close else ""))
    duplicates = sorted({name for name in names if list(names).count(name) > 1})
    if duplicates:
        raise import_error(path, option, f"lists {duplicates} more than once")


def _describe_tree(model, tree, cuts, keep_springs, changes, problems):
    """Lock spring joints (unless kept) and record what the conversion changes and the limits that exclude the
    assembly pose."""
    for joint in model.dropped:
        changes.append(f"dropped joint '{joint.name}' ({joint.kind}) to the world: the suite gives the root link "
                       f"'{model.root}' a floating base")
    for joint in cuts:
        changes.append(f"cut joint '{joint.name}' ({joint.kind}, {joint.parent} → {joint.child}): not in the URDF; "
                       f"loop '{joint.name}' closes it" + (", holding the spring at its assembly value" if
                                                         joint.is_spring and not keep_springs else ""))
    for tree_joint in tree:
        joint = tree_joint.joint
        if tree_joint.reversed:
            changes.append(f"joint '{joint.name}' runs from '{tree_joint.parent}' to '{tree_joint.child}' in the URDF "
                           "(reversed from the SDF; axis negated so that its value keeps its SDF meaning)")
        if joint.is_spring and not keep_springs:
            tree_joint.locked = True
            note = f", not at its spring_reference {joint.spring_reference:g}" if joint.spring_reference else ""
            changes.append(f"locked spring joint '{joint.name}' ({joint.stiffness:g} N·m/rad or N/m) as fixed at its "
                           f"assembly value 0{note}: a loop cannot determine a compliant joint (--keep-springs keeps "
                           "it)")
        elif joint.kind in MOVABLE and not joint.has_limits:
            kind = "prismatic" if joint.kind == "prismatic" else "revolute"
            changes.append(f"joint '{joint.name}' has no position limits: written as {kind} with limits "
                           f"±{UNLIMITED_RANGE[kind]:.4g} {'m' if kind == 'prismatic' else 'rad'}")
        if tree_joint.movable and joint.has_limits and not joint.lower <= 0.0 <= joint.upper:
            problems.append(f"joint '{joint.name}': its limits [{joint.lower:g}, {joint.upper:g}] exclude its own "
                            "assembly pose (0)")


def _choose_axes(path, cuts, kinds, kinematics, loop_axes, rng, changes, problems):
    """Each loop's constrained axes: the nominal ones of its cut joint, minus those the mechanism satisfies
    identically (rank test on closed configurations), or as given in ``loop_axes``."""
    nominal = [NOMINAL_AXES[kinds[joint.name]] for joint in cuts]
    for name, axes in loop_axes.items():
        _check_names(path, "--loop-axes", [name], [joint.name for joint in cuts], "a loop (a cut joint)")
        i = [joint.name for joint in cuts].index(name)
        _check_names(path, f"--loop-axes {name}", axes, nominal[i], f"an axis that a {kinds[name]} cut constrains")
    kinematics.sample(nominal, 8, rng)
    if len(kinematics.jacobians) < 4 and len(cuts):
        problems.append(f"only {len(kinematics.jacobians) - 1} closed configurations found near the assembly pose; "
                        "the loops' axes were chosen from those")
    chosen = []
    for i, joint in enumerate(cuts):
        columns = np.flatnonzero(kinematics.support[i])
        rank = kinematics.generic_rank(lambda at: kinematics.block(at, [i], [nominal[i]], columns))
        best = nominal[i]
        if rank < len(nominal[i]):
            def score(subset):
                samples = range(1, len(kinematics.jacobians)) if len(kinematics.jacobians) > 1 else range(1)
                return min(1.0 / condition_number(kinematics.block(at, [i], [subset], columns)) for at in samples)
            best = max(itertools.combinations(nominal[i], rank), key=score)
        if joint.name in loop_axes:
            given = tuple(a for a in nominal[i] if a in loop_axes[joint.name])
            changes.append(f"loop '{joint.name}': axes [{', '.join(given)}] as given with --loop-axes (the "
                           f"mechanism's own: [{', '.join(best)}])")
            best = given
        chosen.append(tuple(best))
    kinematics.sample(chosen, 8, rng)
    return nominal, chosen


def _relaxation(kinematics, i, loop):
    """For a loop that cannot move: the axis whose removal lets it move with the least drift of that axis, as a
    suggestion (an SDF may over-constrain a loop that its simulator then closes with compliance)."""
    if len(loop.axes) < 2:
        return ""
    columns = [kinematics.index[name] for name in loop.joints]
    drifts = {}
    for axis in loop.axes:
        rest = [a for a in loop.axes if a != axis]
        rates = []
        for J in kinematics.jacobians:
            block = J[i][[AXIS_ROWS[a] for a in loop.axes]][:, columns]
            keep = [loop.axes.index(a) for a in rest]
            null = np.linalg.svd(block[keep])[2][-1]   # the motion the other axes allow (unit, rad or m)
            rates.append(abs(block[loop.axes.index(axis)] @ null))
        drifts[axis] = max(rates)
    axis = min(drifts, key=drifts.get)
    unit = "m" if axis in ("x", "y", "z") else "rad"
    return (f"; if the SDF over-constrains it, --loop-axes {loop.name}={','.join(a for a in loop.axes if a != axis)} "
            f"lets it move ({axis} of frame_a then drifts {drifts[axis]:.3g} {unit} per unit of joint motion)")


def _choose_actuated(path, model, tree, kinematics, m, actuated, keep_springs):
    """The actuated joints and how they were chosen (the default rule is in :func:`import_sdf`)."""
    names = [tree_joint.joint.name for tree_joint in tree if tree_joint.movable]
    joints = {joint.name: joint for joint in model.joints}
    if actuated is not None:
        _check_names(path, "--actuated", actuated, names, "a joint of the spanning tree" +
                     ("" if keep_springs else " (spring joints are locked; --keep-springs keeps them)"))
        return tuple(actuated), "given with --actuated"
    on_loop = {kinematics.joint_names[c] for c in kinematics.loop_columns}
    springs = {name for name in names if joints[name].is_spring}
    by_effort = {name for name in on_loop if name not in springs and (joints[name].effort or 0.0) > 0.0}
    chosen = {name for name in names if name not in on_loop} | by_effort
    passive = [name for name in names if name not in chosen]
    depth, depths = {}, {}
    for tree_joint in tree:
        depth[tree_joint.child] = depth.get(tree_joint.parent, 0) + (1 if tree_joint.movable else 0)
        depths[tree_joint.joint.name] = depth[tree_joint.child]
    colliding = {name for name, link in model.links.items() if link.collisions}
    child = {tree_joint.joint.name: tree_joint.child for tree_joint in tree}
    by_structure = set()
    for name in sorted(passive, key=lambda n: (n in springs, depths[n], child[n] not in colliding, joints[n].index)):
        if len(passive) <= m:
            break
        trial = [kinematics.index[p] for p in passive if p != name]
        if kinematics.generic_rank(lambda at: kinematics.stacked(at)[:, trial]) == m:
            passive.remove(name)
            by_structure.add(name)
    parts = ["every joint on no loop"]
    if by_effort:
        parts.append(f"the loop joints with an SDF effort limit > 0 ({len(by_effort)})")
    if by_structure:
        parts.append(f"per loop its remaining degrees of freedom nearest the root ({len(by_structure)})")
    return tuple(name for name in names if name in chosen | by_structure), "default: " + ", ".join(parts)


def _choose_measured(model, passive, kinematics):
    """Passive joints whose absolute readings, with the loops, determine every loop joint (calibration, eqs. 41–42):
    those with SDF position limits first, each kept only if it adds rank."""
    joints = {joint.name: joint for joint in model.joints}
    columns = kinematics.loop_columns
    measured, rows = [], np.zeros((0, kinematics.model.nv))

    def rank(extra):
        return kinematics.generic_rank(lambda at: np.vstack([kinematics.stacked(at), extra])[:, columns])

    current = rank(rows)
    for name in sorted(passive, key=lambda n: (not joints[n].has_limits, kinematics.index[n])):
        if current == len(columns):
            break
        row = np.zeros((1, kinematics.model.nv))
        row[0, kinematics.index[name]] = 1.0
        if rank(np.vstack([rows, row])) > current:
            rows, measured, current = np.vstack([rows, row]), measured + [name], current + 1
    return tuple(name for name in passive if name in measured), current == len(columns)


def _limit_violation(q, robot, limits, names=None):
    """Σ distance outside the SDF position limits over ``names`` (default: every joint that has limits) [rad, m]."""
    total = 0.0
    for name in limits if names is None else names:
        if name in limits:
            lower, upper = limits[name]
            value = q[robot.joint_q_index(name)]
            total += max(lower - value, 0.0) + max(value - upper, 0.0)
    return total


def _reference(robot, chain, model, rng, changes, problems, tries=20):
    """A closed configuration for the YAML ``reference``: the assembly pose with the actuated joints its limits
    exclude moved to mid-range, reached by continuation. A loop whose passive joints then leave their limits (it
    went through a change point, as a parallelogram does when flat) is closed again from mid-range and random
    starts of its passive joints, keeping the closure that violates the limits least: another assembly branch."""
    joints = {joint.name: joint for joint in model.joints}
    limits = {name: (joints[name].lower, joints[name].upper) for name in robot.joint_names if joints[name].has_limits}
    q = robot.reference_q.copy()
    moves = {name: 0.5 * sum(limits[name]) for name in robot.actuated_names
             if name in limits and not limits[name][0] <= 0.0 <= limits[name][1]}
    note = "the SDF assembly pose (every joint 0), every loop closed (rad, m)"
    if moves:
        target = q[robot.actuated_q].copy()
        for name, value in moves.items():
            target[robot.actuated_names.index(name)] = value
        try:
            for s in np.linspace(0.0, 1.0, 41)[1:]:
                q[robot.actuated_q] = (1.0 - s) * robot.reference_q[robot.actuated_q] + s * target
                q = chain.solve_passive(q).q
        except (ClosureError, SingularConfigurationError) as error:
            problems.append(f"reference: {sorted(moves)} cannot be moved into their limits with the loops closed "
                            f"({error}); the reference is the assembly pose")
            q = robot.reference_q.copy()
        else:
            note = "the SDF assembly pose with the actuated joints its limits exclude at mid-range, every loop closed"
            changes.append("reference: actuated joints outside their limits at the assembly pose moved to mid-range ("
                           + ", ".join(f"{name} {value:+.4g}" for name, value in moves.items()) + ")")
    passive_index = {v: i for i, v in enumerate(robot.passive_v)}
    lower, upper = robot.position_limits(robot.passive_names)
    for row, loop in enumerate(robot.spec.loops):
        moving = np.flatnonzero(chain.relative_support[row])
        columns = [passive_index[v] for v in moving if v in passive_index]
        names = [robot.passive_names[i] for i in columns]
        if len(columns) == len(moving) or not _limit_violation(q, robot, limits, names) > 1e-9:
            continue  # (a loop without actuated joint cannot move: its other branches are other assemblies)
        starts = []
        for attempt in range(tries + 1):
            start = q.copy()
            for i, name in zip(columns, names):
                mid = 0.5 * (lower[i] + upper[i]) if name not in limits else 0.5 * sum(limits[name])
                start[robot.passive_q[i]] = mid if attempt == 0 else rng.uniform(lower[i], upper[i])
            starts.append(start)
        best, best_violation = q, _limit_violation(q, robot, limits)
        for start in starts:
            try:
                candidate = chain.solve_passive(start).q
            except (ClosureError, SingularConfigurationError):
                continue
            candidate_violation = _limit_violation(candidate, robot, limits)
            if candidate_violation < best_violation - 1e-9:
                best, best_violation = candidate, candidate_violation
        if best is not q:
            changes.append(f"reference: loop '{loop.name}' closed on another assembly branch than the continuation "
                           f"from the assembly pose gave, which left {names} outside their limits")
            note += "; branches that keep the joints within their limits"
            q = best
    for name, (low, high) in limits.items():
        value = q[robot.joint_q_index(name)]
        if not low - 1e-9 <= value <= high + 1e-9 and not (value == 0.0 and name not in moves):
            problems.append(f"joint '{name}' is at {value:.4g} in the reference, outside its limits "
                            f"[{low:g}, {high:g}]")
    return q, note


def _load(path, urdf, loops, floating_base=False):
    try:
        return load_robot(urdf, loops, floating_base=floating_base)
    except ModelFileError as error:
        raise import_error(path, None, f"the imported files do not load: {error.detail}") from None


def import_sdf(sdf_path, output_dir, actuated=None, outputs=None, measured=None, loop_axes=None, package_dirs=(),
               keep_springs=False, samples=20, seed=0):
    """Write ``output_dir/<model>.urdf`` and ``output_dir/<model>.loops.yaml`` from an SDF model.

    Args:
        actuated: motor-driven joints in command order. SDF has no actuators, so by default: every joint on no
            loop; the loop joints with an SDF effort limit > 0 that are not spring joints; then, while the loops
            leave passive joints undetermined, loop joints nearest the root first (between equals, the one moving
            a link with collision geometry), each taken only if the loops still determine the passive joints.
        outputs: serial-equivalent output joints, one per actuated joint, same order; default: the actuated joints.
        measured: passive joints with absolute encoders; default: enough passive loop joints for the initial
            calibration (eqs. 41–42) to determine every loop joint, those with SDF position limits first.
        loop_axes: {loop (cut joint) name: axes} to constrain instead of the ones the importer finds.
        package_dirs: folders where ``model://`` and ``package://`` mesh URIs are looked up.
        keep_springs: keep spring joints as joints (they must then be listed as actuated); default: lock them.
        samples: random actuator values (within limits) at which the written robot's loops are closed as a check.

    Returns:
        :class:`SdfImport`.

    Raises:
        SdfImportError: one line naming the file and what is wrong.
    """
    sdf_path = Path(sdf_path)
    path = str(sdf_path)
    model = parse_sdf(sdf_path, package_dirs)
    rng = np.random.default_rng(seed)
    changes, problems = [], list(model.notes)
    tree, cuts = spanning_tree(model)
    _describe_tree(model, tree, cuts, keep_springs, changes, problems)
    model_name = re.sub(r"[^A-Za-z0-9_.-]", "_", model.name)  # the files' names
    builder = UrdfBuilder(model, tree, cuts, changes)
    urdf_text = builder.text(sdf_path.name, f"{model_name}.loops.yaml")
    kinds = {joint.name: ("fixed" if joint.is_spring and not keep_springs else
                          "revolute" if joint.kind == "continuous" else joint.kind) for joint in cuts}
    kinematics = LoopKinematics(urdf_text, [builder.cut_frames[joint.name] for joint in cuts])
    names = kinematics.joint_names
    nominal, axes = _choose_axes(path, cuts, kinds, kinematics, dict(loop_axes or {}), rng, changes, problems)
    m = len(kinematics.rows)

    actuated, rule = _choose_actuated(path, model, tree, kinematics, m, actuated, keep_springs)
    passive = [name for name in names if name not in actuated]
    on_loop = {names[c] for c in kinematics.loop_columns}
    loose = [name for name in passive if name not in on_loop]
    if loose:
        raise import_error(path, "actuated", f"passive joints {loose} are on no loop, so nothing determines them; "
                           f"list them with --actuated (actuated now: {list(actuated)})")
    if len(passive) != m:
        raise import_error(path, "actuated", f"the loops constrain {m} axes but {len(passive)} joints are passive "
                           f"({len(names)} joints − {len(actuated)} actuated); they must be equal: "
                           f"{'remove' if len(passive) < m else 'add'} {abs(len(passive) - m)} with --actuated "
                           f"(loop joints: {sorted(on_loop)})")
    passive_columns = [kinematics.index[name] for name in passive]
    if m and kinematics.generic_rank(lambda at: kinematics.stacked(at)[:, passive_columns]) < m:
        raise import_error(path, "actuated", f"with actuated {list(actuated)} the loops do not determine the passive "
                           "joints (J_l,u is singular); choose others with --actuated")

    loops = []
    for i, joint in enumerate(cuts):
        columns = np.flatnonzero(kinematics.support[i])
        loop_passive = [c for c in columns if names[c] in passive]
        full = kinematics.block(0, [i], [axes[i]], columns)
        condition = condition_number(kinematics.block(0, [i], [axes[i]], loop_passive))
        loop = ImportedLoop(joint.name, joint.name, kinds[joint.name], *builder.cut_frames[joint.name], joint.parent,
                            joint.child, axes[i], tuple(a for a in nominal[i] if a not in axes[i]),
                            tuple(names[c] for c in columns), tuple(names[c] for c in loop_passive),
                            condition_number(full), condition)
        loops.append(loop)
        if not max(loop.condition_at_assembly, condition) <= NEAR_SINGULAR:
            problems.append(f"loop '{loop.name}' is near a singularity at the assembly pose: its constraint Jacobian "
                            f"(axes [{', '.join(axes[i])}] × {len(columns)} joints) has rank {numerical_rank(full)} of "
                            f"{len(axes[i])}, condition {loop.condition_at_assembly:.3g}; cond(J_l,u) with passive "
                            f"{list(loop.passive)} {condition:.3g}")
        if len(loop_passive) == len(columns):
            problems.append(f"loop '{loop.name}' cannot move: its {len(axes[i])} axes determine all its joints "
                            f"{list(loop.joints)}, so none of them can be actuated{_relaxation(kinematics, i, loop)}")
    if m and kinematics.generic_rank(lambda at: kinematics.stacked(at)[:, kinematics.loop_columns]) < m:
        problems.append(f"the loops' {m} constrained axes are not independent of each other")

    if outputs is not None:
        _check_names(path, "--outputs", outputs, names, "a joint of the spanning tree")
        if len(outputs) != len(actuated):
            raise import_error(path, "--outputs", f"{len(outputs)} outputs for {len(actuated)} actuated joints; give "
                               "one serial-equivalent output per actuated joint, in the same order")
    outputs = tuple(outputs) if outputs is not None else tuple(actuated)
    if measured is not None:
        _check_names(path, "--measured", measured, passive, "a passive joint")
        measured = tuple(measured)
        rows = np.zeros((len(measured), kinematics.model.nv))
        rows[np.arange(len(measured)), [kinematics.index[name] for name in measured]] = 1.0
        complete = kinematics.generic_rank(lambda at: np.vstack([kinematics.stacked(at), rows])[
            :, kinematics.loop_columns]) == len(kinematics.loop_columns)
    else:
        measured, complete = _choose_measured(model, passive, kinematics)
    if not complete:
        problems.append(f"measured_passive {list(measured)} and the loops do not determine every loop joint: the "
                        "initial calibration (eqs. 41–42) is underdetermined")

    with tempfile.TemporaryDirectory() as scratch:
        urdf_file, loops_file = Path(scratch) / f"{model_name}.urdf", Path(scratch) / f"{model_name}.loops.yaml"
        urdf_file.write_text(urdf_text)
        loops_file.write_text(_loops_yaml(model_name, sdf_path.name, loops, actuated, outputs, measured, {}, ""))
        robot = _load(path, urdf_file, loops_file)
        q, note = _reference(robot, ClosedChain(robot), model, rng, changes, problems)
        reference = {name: float(q[robot.joint_q_index(name)]) for name in robot.joint_names}
        loops_file.write_text(_loops_yaml(model_name, sdf_path.name, loops, actuated, outputs, measured, reference,
                                          note))
        robot = _load(path, urdf_file, loops_file, floating_base=True)
        chain = ClosedChain(robot)
        residual = float(np.linalg.norm(chain.residual(robot.reference_q)))
        condition = chain.condition_number(robot.reference_q)
        if not condition <= NEAR_SINGULAR:
            problems.append(f"cond(J_l,u) = {condition:.3g} at the reference: near a closed-chain singularity")
        worst, closed = residual, 0
        lower, upper = robot.position_limits(robot.actuated_names)
        tried = samples if chain.m else 0
        for _ in range(tried):
            q = robot.reference_q.copy()
            start, target = q[robot.actuated_q].copy(), rng.uniform(lower, upper)
            try:
                for s in np.linspace(0.0, 1.0, 6)[1:]:
                    q[robot.actuated_q] = start + s * (target - start)
                    solution = chain.solve_passive(q)
                    q = solution.q
            except (ClosureError, SingularConfigurationError):
                continue
            closed, worst = closed + 1, max(worst, solution.residual_norm)
        if closed < tried:
            problems.append(f"the loops could not be closed at {tried - closed} of {tried} random actuator values "
                            "within the limits (walking from the reference in 5 steps)")
        output_dir = Path(output_dir)
        try:
            output_dir.mkdir(parents=True, exist_ok=True)
            urdf_path, loops_path = output_dir / urdf_file.name, output_dir / loops_file.name
            shutil.copyfile(urdf_file, urdf_path)
            shutil.copyfile(loops_file, loops_path)
        except OSError as error:
            raise import_error(output_dir, None, f"cannot write the robot files: {error.strerror or error}") from None
    return SdfImport(path, model.name, str(urdf_path), str(loops_path), len(model.links), tuple(names), loops,
                     tuple(actuated), rule, outputs, measured, reference, changes, problems, residual, condition,
                     worst if tried else 0.0, closed, tried)
