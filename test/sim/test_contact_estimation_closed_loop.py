"""Contact estimation in the MuJoCo plant (the closed loop of test_contact_estimation.py's estimator): a robot
dropped from standing."""
import numpy as np

from humanoid_balance.estimation.contact_state import ACTUATOR_FORCES, ContactEstimator
from humanoid_balance.estimation.contact_wrench import AERIAL


def test_a_robot_dropped_in_the_plant_reads_no_contact_in_the_air():
    """kangaroo_like standing in MuJoCo under the suite, then lifted 0.3 m and let go, its drives holding the
    posture: from the actuator forces and the imu (the CoM's specific force, estimation/support_load.py) both feet
    are aerial within 0.15 s and carry no force until the plant's ground truth shows a contact again; from the
    actuator forces alone the base rows of eq. 45 keep the weight on the soles in the air."""
    import mujoco

    from humanoid_balance.bench.closed_loop import ClosedLoop, robot_config

    loop = ClosedLoop(robot_config("kangaroo_like"), mode="kinematic")
    for _ in range(300):
        loop.tick()
    blind = ContactEstimator(loop.robot, loop.soles, mode=ACTUATOR_FORCES, sample_rate=500.0)
    loop.sim.data.qpos[2] += 0.3
    loop.sim.data.qvel[:] = 0.0
    mujoco.mj_forward(loop.sim.model, loop.sim.data)
    release, flight, blind_forces = loop.sim.time, [], []
    while True:
        sample = loop.tick()
        if np.abs(sample.sole_forces).sum() > 1.0:  # the ground truth: a sole touches the floor again
            break
        signals = loop.signals
        base = signals.state.base
        q = np.r_[base.position, base.quaternion_xyzw, signals.state.q]
        blind_forces.append(blind.update(q, actuator_efforts=signals.sensors[2]).normal_force)
        flight.append((loop.sim.time - release, signals.contact))
    assert flight[-1][0] > 0.2  # (a fall of 0.3 m takes 0.25 s)
    for elapsed, contact in flight:
        if elapsed > 0.15:
            assert [foot.state for foot in contact.feet] == [AERIAL, AERIAL], elapsed
            assert abs(contact.normal_force) < 40.0, (elapsed, contact.normal_force)
    assert min(blind_forces[len(blind_forces) // 2:]) > 100.0
