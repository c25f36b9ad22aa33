"""``humanoid-balance import-sdf`` on Cassie (example-robot-data), checked against references that do not go through
the importer: the SDF read here and moved by its own product-of-exponentials kinematics, Newton closures of that
kinematics differentiated by finite differences, and pinocchio's own SDF parser where it is built with SDFormat.
Units: m, rad, kg, s."""
import xml.etree.ElementTree as ElementTree

import numpy as np
import pinocchio as pin
import pytest

from humanoid_balance.cli import main
from humanoid_balance.estimation.passive_state import PassiveStateEstimator
from humanoid_balance.mapping.actuator_map import ActuatorMap
from humanoid_balance.model import ClosedChain, load_loop_closures, load_robot
from humanoid_balance.authoring.sdf_import import import_sdf
from humanoid_balance.resources import example_robot

CASSIE = example_robot("cassie_description/robots/cassie_v2.sdf")
needs_cassie = pytest.mark.skipif(CASSIE is None, reason="example-robot-data has no Cassie "
                                  "(cassie_description/robots/cassie_v2.sdf)")
SIDES = ("left", "right")
BALLS = [f"{side}-{joint}" for side in SIDES for joint in ("pitch-rod-joint", "plantar-foot-joint")]
ACHILLES = [f"{side}-pitch-rod-joint" for side in SIDES]
# Cassie as built: the foot motor turns the crank at the top of the tarsus; the foot is its serial-equivalent output.
ACTUATED = [f"{side}-{joint}" for side in SIDES for joint in ("roll-op", "yaw-op", "pitch-op", "knee-op",
                                                                "tarsus-crank-joint")]
OUTPUTS = [name.replace("tarsus-crank-joint", "foot-op") for name in ACTUATED]
LEG_FRAMES = ["left-foot", "right-foot", "left-tarsus", "right-hip-pitch"]


def run_cli(capsys, *args):
    code = main([str(arg) for arg in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _pose(text):
    values = [float(x) for x in (text or "0 0 0 0 0 0").split()]
    return pin.SE3(pin.rpy.rpyToMatrix(*values[3:]), np.array(values[:3]))


class SdfKinematics:
    """Cassie as its SDF (1.6) says: link poses in the model frame, joint poses in the child link's frame, axes in
    the joint frame, all at the assembly pose. A link moves by the product of exponentials of the joints from the
    pelvis to it (the ball joints close the loops), each turning about its axis through its origin."""

    def __init__(self, path):
        model = ElementTree.parse(path).getroot().find("model")
        self.links = {link.get("name"): _pose(link.findtext("pose")) for link in model.findall("link")}
        self.inertials = {link.get("name"): (float(link.findtext("inertial/mass")),
                                             _pose(link.findtext("inertial/pose")).translation)
                          for link in model.findall("link")}
        self.joints, self.parent_joint = {}, {}
        for joint in model.findall("joint"):
            name, child = joint.get("name"), joint.findtext("child").strip()
            frame = self.links[child] * _pose(joint.findtext("pose"))
            axis = frame.rotation @ np.array([float(x) for x in joint.findtext("axis/xyz").split()])
            self.joints[name] = (joint.findtext("parent").strip(), child, frame, axis)
            if joint.get("type") != "ball":
                self.parent_joint[child] = name

    def placement(self, link, values):
        """World pose of ``link`` with joint values ``values`` (joint → rad; absent joints at 0)."""
        chain, current = [], link
        while current in self.parent_joint:
            chain.append(self.parent_joint[current])
            current = self.joints[chain[-1]][0]
        motion = pin.SE3.Identity()
        for name in reversed(chain):
            _, _, frame, axis = self.joints[name]
            twist = pin.Motion(-np.cross(axis, frame.translation), axis)
            motion = motion * pin.exp6(twist * values.get(name, 0.0))
        return motion * self.links[link]

    def gap(self, ball, axes, values):
        """Where the two sides of a ball joint are apart, in its frame carried by its SDF parent, along ``axes``."""
        parent, child, frame, _ = self.joints[ball]
        side_a = self.placement(parent, values) * self.links[parent].inverse() * frame
        side_b = self.placement(child, values) * self.links[child].inverse() * frame
        offset = side_a.rotation.T @ (side_b.translation - side_a.translation)
        return offset[["xyz".index(axis) for axis in axes]]

    def com(self, values):
        masses = np.array([mass for mass, _ in self.inertials.values()])
        points = np.array([self.placement(link, values) * centre for link, (_, centre) in self.inertials.items()])
        return masses @ points / masses.sum()


class Reference:
    """Closures of the SDF kinematics itself: passive joints from actuated ones by Newton with a finite-difference
    Jacobian, on the axes the loop file constrains."""

    def __init__(self, robot):
        self.sdf = SdfKinematics(CASSIE)
        self.robot = robot
        self.loops = [(loop.name, loop.axes) for loop in robot.spec.loops]

    def values(self, actuated, passive):
        return {**dict(zip(self.robot.actuated_names, actuated)), **dict(zip(self.robot.passive_names, passive))}

    def residual(self, actuated, passive):
        values = self.values(actuated, passive)
        return np.concatenate([self.sdf.gap(name, axes, values) for name, axes in self.loops])

    def close(self, actuated, passive_guess, tolerance=1e-13, step=1e-7):
        passive = np.array(passive_guess, dtype=float)
        for _ in range(30):
            residual = self.residual(actuated, passive)
            if np.linalg.norm(residual) < tolerance:
                return passive
            jacobian = np.column_stack([(self.residual(actuated, passive + step * e) -
                                         self.residual(actuated, passive - step * e)) / (2 * step)
                                        for e in np.eye(len(passive))])
            passive = passive - np.linalg.lstsq(jacobian, residual, rcond=None)[0]
        raise AssertionError(f"SDF closure did not converge: ‖e‖ = {np.linalg.norm(residual):.2e}")

    def passive_jacobian(self, q, h=1e-6):
        """∂θ_u/∂θ_a by central differences of closures at q."""
        robot = self.robot
        actuated, passive = q[robot.actuated_q], q[robot.passive_q]
        columns = [self.close(actuated + h * e, passive) - self.close(actuated - h * e, passive)
                   for e in np.eye(len(actuated))]
        return np.column_stack(columns) / (2 * h)


def closed_sample(robot, chain, rng, fraction=0.6):
    """A closed configuration reached from the reference by walking to random actuator values inside the limits."""
    lower, upper = robot.position_limits(robot.actuated_names)
    start = robot.reference_q[robot.actuated_q]
    target = np.clip(start + fraction * rng.uniform(lower - start, upper - start), lower, upper)
    q = robot.reference_q.copy()
    for s in np.linspace(0.0, 1.0, 6)[1:]:
        q[robot.actuated_q] = start + s * (target - start)
        q = chain.solve_passive(q).q
    return q


@pytest.fixture(scope="module")
def default_import(tmp_path_factory):
    """Cassie imported with every default; the report is captured by the test that reads it."""
    if CASSIE is None:
        pytest.skip("example-robot-data has no Cassie")
    return tmp_path_factory.mktemp("cassie_default")


@pytest.fixture(scope="module")
def cassie(tmp_path_factory):
    """Cassie as built: Achilles rods constrained in their plane only (the SDF's revolute at the heel would lock the
    knee), crank-driven feet with the feet as outputs. Returns (robot, chain, reference)."""
    if CASSIE is None:
        pytest.skip("example-robot-data has no Cassie")
    output = tmp_path_factory.mktemp("cassie")
    code = main(["import-sdf", str(CASSIE), "--output", str(output), "--actuated", *ACTUATED, "--outputs", *OUTPUTS,
                 "--loop-axes", *(f"{name}=x,y" for name in ACHILLES)])
    assert code == 0
    robot = load_robot(output / "cassie.urdf", output / "cassie.loops.yaml")
    return robot, ClosedChain(robot), Reference(robot)


@needs_cassie
def test_import_reports_cuts_frames_and_the_model_problems(default_import, capsys):
    code, out, err = run_cli(capsys, "import-sdf", CASSIE, "--output", default_import)
    assert code == 0, err
    assert "23 links, 18 joints in the spanning tree, 4 loops" in out
    for ball in BALLS:
        assert f"cut joint '{ball}' (ball," in out
        for side in "ab":
            assert f"added frame '{ball}_cut_{side}'" in out
    for spring in ("knee-shin-joint", "tarsus-spring-joint"):
        assert f"locked spring joint 'left-{spring}'" in out
    problems = out.split("\nproblems:\n")[1]
    assert "joint 'left-foot-op': its limits [-2.4435, -0.6109] exclude its own assembly pose (0)" in problems
    assert "loop 'left-pitch-rod-joint' cannot move" in problems
    assert "--loop-axes left-pitch-rod-joint=x,y lets it move" in problems
    assert "loop 'left-plantar-foot-joint' is near a singularity at the assembly pose" in problems
    actuated = next(line for line in out.splitlines() if line.startswith("actuated (default:"))
    assert actuated.endswith(": left-roll-op, left-yaw-op, left-pitch-op, left-foot-op, right-roll-op, right-yaw-op, "
                             "right-pitch-op, right-foot-op")

    spec = load_loop_closures(default_import / "cassie.loops.yaml")
    assert sorted(loop.name for loop in spec.loops) == sorted(BALLS)
    assert all((loop.frame_a, loop.frame_b) == (f"{loop.name}_cut_a", f"{loop.name}_cut_b") for loop in spec.loops)
    assert {loop.name: loop.axes for loop in spec.loops}["left-plantar-foot-joint"] == ("x", "y")  # planar 4-bar
    assert len(spec.outputs) == len(spec.actuated) and spec.measured_passive
    robot = load_robot(default_import / "cassie.urdf", default_import / "cassie.loops.yaml", floating_base=True)
    assert set(spec.reference) == set(robot.joint_names)
    assert np.linalg.norm(ClosedChain(robot).residual(robot.reference_q)) < 1e-12


@needs_cassie
def test_loops_close_at_the_reference_and_at_random_actuator_values(cassie):
    robot, chain, reference = cassie
    rng = np.random.default_rng(1)
    lower, upper = robot.position_limits(robot.joint_names)
    names_with_sdf_limits = [i for i, name in enumerate(robot.joint_names) if upper[i] - lower[i] < 2 * np.pi - 1e-9]
    for q in [robot.reference_q] + [closed_sample(robot, chain, rng) for _ in range(5)]:
        assert np.linalg.norm(chain.residual(q)) < 1e-12
        joints = q[[robot.joint_q_index(name) for name in robot.joint_names]]
        assert np.all(joints[names_with_sdf_limits] >= lower[names_with_sdf_limits] - 1e-9)
        assert np.all(joints[names_with_sdf_limits] <= upper[names_with_sdf_limits] + 1e-9)
        values = reference.values(q[robot.actuated_q], q[robot.passive_q])
        assert np.abs(reference.residual(q[robot.actuated_q], q[robot.passive_q])).max() < 1e-9
        for side in SIDES:  # the feet's ball joints are closed in 3-D, not only on the axes kept (to the SDF's own
            # planarity: it writes 1.5708 for π/2, which tilts the right foot's axes by ~1e-7 rad)
            assert np.abs(reference.sdf.gap(f"{side}-plantar-foot-joint", "xyz", values)).max() < 1e-7


@needs_cassie
def test_passive_velocities_match_finite_differences_of_sdf_closures(cassie):
    robot, chain, reference = cassie
    rng = np.random.default_rng(2)
    for q in (robot.reference_q, closed_sample(robot, chain, rng)):
        np.testing.assert_allclose(chain.mapping_jacobian(q), reference.passive_jacobian(q), atol=1e-6)


@needs_cassie
def test_estimator_tracks_the_sdf_closures(cassie):
    robot, chain, reference = cassie
    estimator = PassiveStateEstimator(chain)
    start = robot.reference_q[robot.actuated_q]
    amplitude = 0.1 * np.linspace(1.0, -1.0, len(start))
    dt, omega = 1e-3, 2 * np.pi * 1.5
    for k in range(1, 301):
        before = estimator.q.copy()
        theta_a, rate = start + amplitude * np.sin(omega * k * dt), amplitude * omega * np.cos(omega * k * dt)
        state = estimator.update(theta_a, rate, dt)
    # With β·dt = 1 the actuated state is the one-step prediction θ̄_a + dt·θ̄̇_a; the passive joints must be
    # the SDF closure of it (to the Euler step's O(dt²)), the velocities J_m θ̄̇_a where the step started.
    np.testing.assert_allclose(state.q[robot.actuated_q], theta_a + dt * rate, atol=1e-12)
    passive = reference.close(state.q[robot.actuated_q], state.q[robot.passive_q])
    np.testing.assert_allclose(state.q[robot.passive_q], passive, atol=1e-7)
    expected = reference.passive_jacobian(before) @ rate
    np.testing.assert_allclose(state.v[robot.passive_v], expected, atol=1e-6 * np.abs(expected).max())


@needs_cassie
def test_mapper_drives_the_cranks_so_that_the_sdf_feet_reach_the_outputs(cassie):
    robot, chain, reference = cassie
    rng = np.random.default_rng(3)
    mapper = ActuatorMap(robot)
    outputs = robot.reference_q[robot.output_q] + rng.uniform(-0.15, 0.15, len(OUTPUTS))
    output_velocities, output_torques = rng.normal(size=len(OUTPUTS)), rng.normal(size=len(OUTPUTS)) * 10.0
    command = mapper.update(outputs, output_velocities, output_torques)
    assert command.clamped == ()

    q = robot.reference_q.copy()
    q[robot.actuated_q] = command.position
    q[robot.passive_q] = reference.close(command.position, mapper.q[robot.passive_q])
    np.testing.assert_allclose(q[robot.output_q], outputs, atol=1e-9)
    # D = ∂q_o/∂θ_a from SDF closures: the actuator rates must realise q̇_o, and (virtual power) τ_a = Dᵀ τ_o.
    passive_jacobian = reference.passive_jacobian(q)
    D = np.zeros((len(OUTPUTS), len(ACTUATED)))
    for row, name in enumerate(OUTPUTS):
        if name in robot.actuated_names:
            D[row, robot.actuated_names.index(name)] = 1.0
        else:
            D[row] = passive_jacobian[robot.passive_names.index(name)]
    np.testing.assert_allclose(D @ command.velocity, output_velocities, atol=1e-6)
    np.testing.assert_allclose(command.effort, D.T @ output_torques, atol=1e-5)


@needs_cassie
def test_spanning_tree_has_the_sdf_mass_com_and_leg_kinematics(cassie):
    robot, _, reference = cassie
    sdf = reference.sdf
    assert robot.total_mass == pytest.approx(sum(mass for mass, _ in sdf.inertials.values()), abs=1e-12)
    floating = load_robot(robot.urdf_path, robot.spec.path, floating_base=True)  # (a fixed base's CoM leaves out
    floating_data = floating.model.createData()                                  # the root link, the universe's)
    data = robot.model.createData()
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = pin.neutral(robot.model)
        q[[robot.joint_q_index(name) for name in robot.joint_names]] = rng.uniform(-0.5, 0.5, len(robot.joint_names))
        values = dict(zip(robot.joint_names, q[[robot.joint_q_index(name) for name in robot.joint_names]]))
        pin.framesForwardKinematics(robot.model, data, q)
        pelvis = sdf.placement("pelvis", values)  # the URDF root frame is the pelvis
        for link in LEG_FRAMES:
            expected = pelvis.inverse() * sdf.placement(link, values)
            placement = data.oMf[robot.model.getFrameId(link, pin.FrameType.BODY)]
            np.testing.assert_allclose(placement.homogeneous, expected.homogeneous, atol=1e-12)
        q_floating = pin.neutral(floating.model)
        q_floating[7:] = q[[robot.joint_q_index(name) for name in floating.joint_names]]
        np.testing.assert_allclose(pin.centerOfMass(floating.model, floating_data, q_floating),
                                   pelvis.inverse() * sdf.com(values), atol=1e-12)


@needs_cassie
def test_spanning_tree_matches_pinocchios_own_sdf_model(cassie):
    if not getattr(pin, "WITH_SDFORMAT", False):
        pytest.skip("this pinocchio is built without SDFormat (pin.WITH_SDFORMAT is False)")
    robot, _, _ = cassie
    sdf_model = pin.buildModelsFromSdf(str(CASSIE), root_link_name="pelvis", geometry_types=[])[0]
    # pinocchio splits the mass of a link with two parents over two bodies; the total stays the SDF's.
    assert robot.total_mass == pytest.approx(sum(inertia.mass for inertia in sdf_model.inertias), abs=1e-9)
    rng = np.random.default_rng(5)
    q, q_sdf = pin.neutral(robot.model), pin.neutral(sdf_model)
    for name in robot.joint_names:
        value = rng.uniform(-0.5, 0.5)
        q[robot.joint_q_index(name)] = value
        joint = sdf_model.joints[sdf_model.getJointId(name)]
        assert joint.nq == 1, name
        q_sdf[joint.idx_q] = value
    data, sdf_data = robot.model.createData(), sdf_model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    pin.framesForwardKinematics(sdf_model, sdf_data, q_sdf)
    pelvis = sdf_data.oMf[sdf_model.getFrameId("pelvis", pin.FrameType.BODY)]
    for link in LEG_FRAMES:
        expected = pelvis.inverse() * sdf_data.oMf[sdf_model.getFrameId(link, pin.FrameType.BODY)]
        placement = data.oMf[robot.model.getFrameId(link, pin.FrameType.BODY)]
        np.testing.assert_allclose(placement.homogeneous, expected.homogeneous, atol=1e-9)


FOUR_BAR = """<?xml version="1.0"?>
<sdf version="1.7">
  <model name="four_bar">
    <link name="base"><inertial><mass>2.0</mass></inertial></link>
    <link name="crank">
      <pose relative_to="base">0 0 0 0 0 1.5707963267948966</pose>
      <inertial><pose>0.15 0 0 0 0 0</pose><mass>0.3</mass></inertial>
      <collision name="bar"><geometry><box><size>0.3 0.02 0.02</size></box></geometry></collision>
    </link>
    <link name="coupler"><pose>0 0.3 0 0 0 {coupler}</pose><inertial><mass>0.5</mass></inertial></link>
    <link name="rocker"><pose>1 0 0 0 0 {rocker}</pose><inertial><mass>0.4</mass></inertial></link>
    <joint name="to_world" type="fixed"><parent>world</parent><child>base</child></joint>
    <joint name="crank_joint" type="revolute">
      <parent>base</parent><child>crank</child><axis><xyz>0 0 1</xyz></axis>
    </joint>
    <joint name="coupler_joint" type="revolute">
      <pose relative_to="crank">0.3 0 0 0 0 0</pose><parent>crank</parent><child>coupler</child>
      <axis><xyz expressed_in="__model__">0 0 1</xyz><limit><lower>-3</lower><upper>3</upper></limit></axis>
    </joint>
    <joint name="rocker_joint" type="revolute">
      <pose relative_to="rocker">0 0 0 0 0 0</pose><parent>rocker</parent><child>base</child>
      <axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis>
    </joint>
    <joint name="pin_c" type="revolute">
      <pose relative_to="coupler">{coupler_length} 0 0 0 0 0</pose><parent>rocker</parent><child>coupler</child>
      <axis><xyz>0 0 1</xyz></axis>
    </joint>
  </model>
</sdf>
"""


def test_a_planar_four_bar_cut_at_a_revolute_joint_follows_its_analytic_closure(tmp_path):
    """SDF 1.7 poses (relative_to, expressed_in), a joint to the world, a revolute cut and, since both joints of the
    rocker point at its neighbours, one the tree runs backwards: ground 1 m, crank 0.3 m, rocker 0.8 m at 100° when
    the crank is at 90°."""
    A, D, a, c, rocker0 = np.zeros(2), np.array([1.0, 0.0]), 0.3, 0.8, np.radians(100.0)
    B0, C0 = np.array([0.0, a]), D + c * np.array([np.cos(rocker0), np.sin(rocker0)])
    b = np.linalg.norm(C0 - B0)
    path = tmp_path / "four_bar.sdf"
    path.write_text(FOUR_BAR.format(coupler=np.arctan2(*(C0 - B0)[::-1]), rocker=rocker0, coupler_length=b))
    result = import_sdf(path, tmp_path / "out")
    assert [(loop.name, loop.axes, loop.dropped_axes) for loop in result.loops] == [
        ("pin_c", ("x", "y"), ("z", "rx", "ry"))]  # a revolute cut of a planar loop: in-plane position only
    assert result.actuated == ("crank_joint",)  # nearest the root, like the rocker, but it has collision geometry
    assert any("dropped joint 'to_world'" in change for change in result.changes)
    assert any("joint 'rocker_joint' runs from 'base' to 'rocker'" in change for change in result.changes)

    robot = load_robot(result.urdf_path, result.loops_path)
    chain = ClosedChain(robot)
    q, C = robot.reference_q.copy(), C0
    for crank in np.linspace(0.0, 2.0, 21)[1:]:
        q[robot.joint_q_index("crank_joint")] = crank
        q = chain.solve_passive(q).q
        B = A + a * np.array([-np.sin(crank), np.cos(crank)])
        # C on both circles (|C − B| = b, |C − D| = c), on the branch of the last one.
        d = np.linalg.norm(D - B)
        along = (b ** 2 - c ** 2 + d ** 2) / (2 * d)
        normal = np.array([-(D - B)[1], (D - B)[0]]) / d
        candidates = [B + along * (D - B) / d + sign * np.sqrt(b ** 2 - along ** 2) * normal for sign in (1, -1)]
        C = min(candidates, key=lambda point: np.linalg.norm(point - C))
        rocker = np.arctan2(*(C - D)[::-1])
        # The SDF's rocker_joint turns the base relative to the rocker: its value is minus the rocker's turn.
        assert -q[robot.joint_q_index("rocker_joint")] == pytest.approx(rocker - rocker0, abs=1e-10)


@pytest.mark.parametrize("name, text, detail", [
    ("robot.urdf", '<robot name="r"><link name="a"/></robot>', "is not SDF: its root element is <robot>"),
    ("notes.sdf", "just some text\n", "is not an XML file"),
    ("world.sdf", '<sdf version="1.6"><world name="w"/></sdf>', "has no <model>"),
    ("missing.sdf", None, "no such file"),
])
def test_a_file_that_is_not_an_sdf_model_is_one_line_and_exit_code_1(tmp_path, capsys, name, text, detail):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    code, out, err = run_cli(capsys, "import-sdf", path, "--output", tmp_path / "out")
    assert code == 1 and out == ""
    assert err.endswith("\n") and len(err.splitlines()) == 1, err
    assert err.startswith(f"error: {path}: ") and detail in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_check_model_sends_an_sdf_through_import_sdf(tmp_path, capsys):
    path = tmp_path / "robot.sdf"
    path.write_text('<sdf version="1.6"><model name="m"><link name="a"/></model></sdf>')
    code, out, err = run_cli(capsys, "check-model", path)
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert f"{path} is an SDF model" in err and "humanoid-balance import-sdf" in err
