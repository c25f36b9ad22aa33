"""The parameters a node starts with (deployment.node_parameters): its defaults file, then the robot's file, then
the launch's overrides, whatever sections they use — checked against the files themselves, read here with yaml —
and each mode's needs as the papers' controllers and the demo's jumps require them."""
import pytest
import yaml

from humanoid_balance.deployment import mode_parameters, node_parameters, write_parameter_file
from humanoid_balance.model.errors import ModelFileError
from humanoid_balance.resources import config_file, robot_config_file


@pytest.fixture
def robot_file(tmp_path):
    """kangaroo_like's configuration (package:// files) with plant keys, one in a section of the plant's own."""
    document = yaml.safe_load(robot_config_file("kangaroo_like").read_text())
    document["/**"]["ros__parameters"].update(push_duration=0.25, position_noise=0.001)
    document["/**/mujoco_sim"] = {"ros__parameters": {"position_noise": 0.002}}
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def test_the_robot_file_wins_over_the_nodes_defaults_and_the_overrides_over_both(robot_file):
    defaults = yaml.safe_load(config_file("mujoco_sim.yaml").read_text())["/**/mujoco_sim"]["ros__parameters"]
    assert defaults["push_duration"] == 0.1 and defaults["real_time"] is False  # what must lose
    parameters = node_parameters("mujoco_sim", robot_file, {"real_time": True, "command_interface": "impedance"})
    assert parameters["push_duration"] == 0.25              # the robot's /** over the node's own section
    assert parameters["position_noise"] == 0.002            # the robot's section for the node over its /**
    assert parameters["real_time"] is True and parameters["command_interface"] == "impedance"
    assert parameters["timestep"] == defaults["timestep"]   # what nobody overrides
    assert parameters["urdf_file"].startswith("/")          # files absolute, whatever the robot file says


def test_a_parameter_file_gives_each_node_its_own_section(robot_file, tmp_path):
    parameters = {node: node_parameters(node, robot_file) for node in ("contact_estimator", "centroidal_balancer")}
    written = yaml.safe_load(write_parameter_file(parameters, tmp_path / "suite.yaml").read_text())
    assert set(written) == {"/**/contact_estimator", "/**/centroidal_balancer"}
    assert written["/**/contact_estimator"]["ros__parameters"]["mode"] == "ft_sensors"
    assert written["/**/centroidal_balancer"]["ros__parameters"]["mode"] == "kinematic"


@pytest.mark.parametrize("mode, interface, compensation", [("kinematic", "position", False),
                                                           ("momentum", "impedance", False),
                                                           ("viip", "position", True)])
def test_each_mode_sets_the_balancer_the_mapper_and_the_plant(mode, interface, compensation):
    """Garofalo et al.'s momentum controller on torque drives (the joint impedance); the position modes on position
    drives, viip's jumps with the drives' deflection compensated (as the demo's jump runs)."""
    assert mode_parameters(mode) == {
        "centroidal_balancer": {"mode": mode},
        "loop_closure_mapper": {"command_interface": interface, "compliance_compensation": compensation},
        "mujoco_sim": {"command_interface": interface}}


def test_an_unreadable_robot_file_is_one_line_naming_it(tmp_path):
    path = tmp_path / "robot.yaml"
    path.write_text("/**: {ros__parameters: [unclosed\n")
    with pytest.raises(ModelFileError, match="robot.yaml: cannot read it as a ROS 2 parameter file"):
        node_parameters("state_estimator", path)


@pytest.mark.dds
def test_the_demo_and_the_bench_start_the_nodes_with_the_layers_in_order(tmp_path, robot_file):
    """Read back from the nodes themselves, as the demo builds them and as the bench's processes start: mahru.yaml's
    gains (k_p 2.8, k_c 4.2, for its dancing arms) over the defaults (2.0, 5.0: ROBOT_SCHEMA), the mode's
    needs, and the experiment's overrides over a robot file's ``/**`` (its publish_period: with several
    --params-file, ROS applied the robot's ``/**`` after the ``/**/mujoco_sim`` section that config/ opened, and the
    bench's plant ran at the robot file's period)."""
    import rclpy

    from humanoid_balance.bench.dds_loop import ros_arguments
    from humanoid_balance.demo.runner import build_suite
    from humanoid_balance.nodes import PLANT, node_factory

    document = yaml.safe_load(robot_file.read_text())
    document["/**"]["ros__parameters"]["publish_period"] = 0.005
    robot_file.write_text(yaml.safe_dump(document))
    rclpy.init()
    nodes = {}
    try:
        nodes = build_suite(robot="mahru", mode="momentum")
        assert (nodes["centroidal_balancer"].get_parameter("k_p").value,
                nodes["centroidal_balancer"].get_parameter("k_c").value) == (2.8, 4.2)
        assert nodes["centroidal_balancer"].get_parameter("mode").value == "momentum"
        assert nodes["loop_closure_mapper"].get_parameter("command_interface").value == "impedance"
        assert nodes["contact_estimator"].get_parameter("mode").value == "actuator_forces"  # the simulation's
        arguments = ros_arguments(PLANT, 100.0, tmp_path, robot_file, "momentum")
        nodes["bench plant"] = node_factory(PLANT)(cli_args=["--ros-args", *arguments])
        assert nodes["bench plant"].get_parameter("publish_period").value == 0.01  # 1 / rate, over the robot's
        assert nodes["bench plant"].get_parameter("push_duration").value == 0.25   # the robot's, over config/'s
    finally:
        for node in nodes.values():
            node.destroy_node()
        rclpy.try_shutdown()
