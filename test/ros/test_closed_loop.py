"""The whole suite closing the loop through the embedded plant, every node its own process over DDS:
mujoco_sim → state_estimator → contact_estimator (actuator forces) → centroidal_balancer → loop_closure_mapper
→ mujoco_sim. kangaroo_like stands for 5 s: the base does not drop, the ZMP stays under the CoM inside the
support polygon and every node reports OK.
"""
import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import PointStamped, PolygonStamped
from nav_msgs.msg import Odometry

from humanoid_balance.nodes.messages import stamp_seconds
from humanoid_balance.resources import executable
from support.ros_probe import Probe
from support.ros_processes import start, stop

pytestmark = pytest.mark.dds
SIM_TIME = ["-p", "use_sim_time:=true"]
NODES = {  # the plant in lockstep with the suite on its /clock: the same loop however loaded the machine is
    "mujoco_sim": ["-p", "lockstep:=true", "-p", "real_time:=false", "-p", "publish_clock:=true"],
    "state_estimator": None,  # offsets file set per test
    "contact_estimator": ["-p", "mode:=actuator_forces", *SIM_TIME],
    "centroidal_balancer": SIM_TIME,  # kinematic mode (Choi–Kim) through the position drives
    "loop_closure_mapper": SIM_TIME,
}


def test_suite_keeps_kangaroo_like_standing(tmp_path):
    processes = {}
    for name, ros_args in NODES.items():
        arguments = ["-p", f"offsets_file:={tmp_path / 'offsets.yaml'}", *SIM_TIME] if ros_args is None else ros_args
        processes[name] = start([str(executable(name))], ros_args=arguments)
    probe = Probe("closed_loop_probe")
    odom = probe.record(Odometry, "sim/odom")
    com = probe.record(PointStamped, "sim/com")
    zmp = probe.record(PointStamped, "zmp")
    polygon = probe.record(PolygonStamped, "support_polygon")
    try:
        assert probe.spin_until(lambda: len(zmp) > 10 and odom, 30.0), {n: stop(p)[2][-500:]
                                                                         for n, p in processes.items()}
        started = stamp_seconds(odom[-1].header.stamp)
        assert probe.spin_until(lambda: stamp_seconds(odom[-1].header.stamp) - started > 5.0, 60.0)
        heights = np.array([m.pose.pose.position.z for m in odom])
        assert heights.min() > heights[0] - 0.02
        last_zmp, last_com = zmp[-1].point, com[-1].point
        assert abs(last_zmp.x - last_com.x) < 0.01 and abs(last_zmp.y - last_com.y) < 0.01
        corners = np.array([[p.x, p.y] for p in polygon[-1].polygon.points])
        edges = np.roll(corners, -1, axis=0) - corners
        to_zmp = np.array([last_zmp.x, last_zmp.y]) - corners
        assert np.all(edges[:, 0] * to_zmp[:, 1] - edges[:, 1] * to_zmp[:, 0] > 0)
        for name in NODES:
            statuses = [s for key, s in probe.diagnostics.items() if key.startswith(f"{name}:")]
            assert statuses and all(s.level == DiagnosticStatus.OK for s in statuses), (name, statuses)
    finally:
        probe.close()
        results = {name: stop(process) for name, process in processes.items()}
    for name, (returncode, _, stderr) in results.items():
        assert returncode == 0, (name, stderr[-2000:])
