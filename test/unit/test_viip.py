"""VIIP vertical control (Sugihara–Nakamura eqs. 8–15) against energy and the point-mass dynamics of
eq. 5, and the SRV resolution (eq. 23) against its KKT system."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from humanoid_balance.control.viip import (GRAVITY, Constraint, Impedance, JumpSchedule,
                                           cog_reference_acceleration, liftoff_impedance, regulated_zmp, resolve_srv,
                                           standing_impedance, touchdown_impedance, vertical_force)

MASS = 40.0


def simulate_vertical(impedance, z0, z_dot0, z_ref, duration, f_min=0.0):
    """m z̈ = f_z − m g (Sugihara eq. 5) with f_z from eq. 8, until the COG leaves the ground (f_z = 0)."""
    def dynamics(_, state):
        f_z = vertical_force(MASS, impedance, z_ref, state[0], 0.0, state[1], True, f_min)
        return [state[1], f_z / MASS - GRAVITY]
    return solve_ivp(dynamics, (0.0, duration), [z0, z_dot0], rtol=1e-10, atol=1e-12, dense_output=True,
                     max_step=1e-3)


def test_vertical_dynamics_follow_eq_9():
    impedance = Impedance(120.0, 25.0)
    rng = np.random.default_rng(3)
    for _ in range(5):
        z, z_dot, z_ref, z_dot_ref = rng.uniform(0.5, 0.9), rng.normal(), 0.7, rng.normal() * 0.1
        f_z = vertical_force(MASS, impedance, z_ref, z, z_dot_ref, z_dot, True, -np.inf)
        assert f_z / MASS - GRAVITY == pytest.approx(120.0 * (z_ref - z) + 25.0 * (z_dot_ref - z_dot))


def test_liftoff_gains_reach_the_planned_apex():
    """Eq. 11: from rest z_d below ref z_G, the spring releases m g z_H; at ref z_G the COG leaves with the
    speed that rises z_H more (v² = 2 g z_H)."""
    z_ref, z_d, z_H = 0.75, 0.05, 0.05
    impedance = liftoff_impedance(z_H, z_d)
    assert impedance == Impedance(2 * GRAVITY * z_H / z_d ** 2, 0.0)
    solution = simulate_vertical(impedance, z_ref - z_d, 0.0, z_ref, 0.5)
    t = np.linspace(0, 0.5, 50001)
    z, z_dot = solution.sol(t)
    k = np.argmax(z >= z_ref)
    assert z_dot[k] ** 2 / (2 * GRAVITY) == pytest.approx(z_H, rel=1e-3)


def test_touchdown_gains_absorb_the_landing_within_the_stoop_depth():
    """Eq. 12: landing at ref z_G with speed ż_G−, the COG stops exactly z_d lower (energy balance)."""
    z_ref, z_d, landing = 0.75, 0.05, -np.sqrt(2 * GRAVITY * 0.05)
    impedance = touchdown_impedance(landing, z_d)
    assert impedance.K_P == pytest.approx((landing / z_d) ** 2) and impedance.K_D == 0.0
    solution = simulate_vertical(impedance, z_ref, landing, z_ref, 0.3)
    z = solution.sol(np.linspace(0, 0.3, 30001))[0]
    assert z_ref - z.min() == pytest.approx(z_d, rel=1e-4)  # eq. 8 carries the weight: ½ż² = ½K_P z_d²


def test_standing_impedance_is_never_under_damped():
    impedance = standing_impedance(8.0, 1.0)
    assert impedance.K_D ** 2 - 4 * impedance.K_P >= -1e-9  # eq. 14 at its limit ζ = 1
    solution = simulate_vertical(impedance, 0.65, 0.0, 0.7, 3.0)
    z = solution.sol(np.linspace(0, 3.0, 3001))[0]
    assert z.max() <= 0.7 + 1e-9  # reaches ref z_G without overshoot (eq. 9 critically damped)
    assert z[-1] == pytest.approx(0.7, abs=1e-6)
    with pytest.raises(ValueError, match="under-damped"):
        standing_impedance(8.0, 0.7)


def test_contact_force_floor_and_aerial_zero():
    impedance = Impedance(400.0, 0.0)
    assert vertical_force(MASS, impedance, 0.5, 0.9, 0, 0, True, f_min=20.0) == 20.0   # would pull: held at f_min
    assert vertical_force(MASS, impedance, 0.9, 0.5, 0, 0, False, f_min=20.0) == 0.0   # aerial: no force


def test_cog_acceleration_places_the_zmp():
    """Eqs. 16–19 invert the ZMP equations (3)–(5): recompute the ZMP from the returned acceleration."""
    cog, zmp_ref, f_z = np.array([0.02, -0.01, 0.7]), np.array([0.05, 0.01, 0.0]), 450.0
    accel = cog_reference_acceleration(MASS, cog, zmp_ref, f_z)
    m_total = MASS * (accel[2] + GRAVITY)
    assert m_total == pytest.approx(f_z)
    x_zmp = cog[0] - (cog[2] - zmp_ref[2]) * MASS * accel[0] / m_total
    y_zmp = cog[1] - (cog[2] - zmp_ref[2]) * MASS * accel[1] / m_total
    np.testing.assert_allclose([x_zmp, y_zmp], zmp_ref[:2], atol=1e-12)


def test_regulated_zmp_returns_the_cog_critically_damped_within_the_support():
    """ZMP manipulation: through eqs. 16–19 the regulated ZMP gives ẍ_G = −ω_c² (x_G − x_d) − 2 ω_c ẋ_G; a point
    mass integrated under it comes back to x_d without overshoot (critical damping), and a ZMP the floor cannot
    carry is held at the support's edge, less the margin."""
    frequency, f_z, support = 4.0, MASS * GRAVITY, (np.array([-0.1, -0.15]), np.array([0.2, 0.15]))
    # (x_G − x_d)(t) = (x₀ + (v₀ + ω_c x₀) t) e^(−ω_c t), the critically damped solution
    cog, velocity, reference = np.array([0.03, -0.02, 0.7]), np.array([0.05, 0.04, 0.0]), np.array([0.0, 0.01])
    acceleration = cog_reference_acceleration(MASS, cog, regulated_zmp(MASS, cog, velocity, reference, f_z, 0.0,
                                                                       frequency, support), f_z)
    np.testing.assert_allclose(acceleration[:2], -frequency ** 2 * (cog[:2] - reference)
                               - 2 * frequency * velocity[:2], atol=1e-12)
    x, x_dot, dt, path = cog.copy(), velocity.copy(), 1e-4, []
    for _ in range(30000):
        zmp = regulated_zmp(MASS, x, x_dot, reference, f_z, 0.0, frequency, support)
        x_dot[:2] += dt * cog_reference_acceleration(MASS, x, zmp, f_z)[:2]
        x[:2] += dt * x_dot[:2]
        path.append(x[:2] - reference)
    t = dt * np.arange(1, len(path) + 1)[:, None]
    x0, v0 = cog[:2] - reference, velocity[:2]
    np.testing.assert_allclose(path, (x0 + (v0 + frequency * x0) * t) * np.exp(-frequency * t), atol=2e-5)
    far = regulated_zmp(MASS, np.array([0.5, 0.0, 0.7]), np.zeros(3), reference, f_z, 0.0, frequency, support)
    assert far[0] == pytest.approx(0.19)  # wants x_Z > 0.5: held at 0.2 − 0.01


def test_liftoff_spring_stores_the_jump_energy_for_the_depth_the_stoop_reached():
    """Eqs. 10–11 for the depth d the stoop settled at, not the planned z_d: ½ K_P d² = g z_H, so the apex does
    not depend on how far short of z_d the stoop stopped."""
    z_0, z_H, z_d = 0.75, 0.05, 0.05
    schedule = JumpSchedule(standing_impedance(12.0, 1.0), jump_height=z_H, stoop_depth=z_d)
    schedule.update(True, z_0, 0.0)
    schedule.jump()
    reached = z_0 - 0.046  # within the 10 % the stoop accepts
    phase = schedule.update(True, reached, 0.0)
    assert phase.name == "liftoff"
    assert 0.5 * phase.impedance.K_P * (z_0 - reached) ** 2 == pytest.approx(GRAVITY * z_H)


def test_srv_resolution_is_the_weighted_least_norm_solution():
    rng = np.random.default_rng(5)
    n = 20
    constraints = [Constraint("cog", rng.normal(size=(3, n)), rng.normal(size=3)),
                   Constraint("feet", rng.normal(size=(12, n)), np.zeros(12)),
                   Constraint("attitude", rng.normal(size=(3, n)), rng.normal(size=3))]
    weights = rng.uniform(0.5, 5.0, n)
    theta_dot = resolve_srv(constraints, weights)
    J = np.vstack([c.J for c in constraints])
    v = np.concatenate([c.v for c in constraints])
    kkt = np.block([[np.diag(weights), J.T], [J, np.zeros((len(v), len(v)))]])  # min ½θ̇ᵀWθ̇ s.t. Jθ̇ = v
    reference = np.linalg.solve(kkt, np.concatenate([np.zeros(n), v]))[:n]
    np.testing.assert_allclose(theta_dot, reference, atol=1e-10)
    # Aerial phase: without the COG rows the COG constraint is no longer enforced, the rest still is.
    aerial = resolve_srv(constraints[1:], weights)
    np.testing.assert_allclose(np.vstack([c.J for c in constraints[1:]]) @ aerial,
                               np.concatenate([c.v for c in constraints[1:]]), atol=1e-10)
    assert np.abs(constraints[0].J @ aerial - constraints[0].v).max() > 1e-3


def test_jump_schedule_reaches_the_apex_and_lands_within_the_stoop():
    """A point mass under eq. 5 (m z̈ = f_z − m g) with f_z from eq. 8, the impedance chosen by the schedule,
    and contact while the 'leg' of rest length z_0 is compressed: stoop 50 mm, jump 50 mm (the paper's plan).
    The apex is z_0 + z_H within 10 %, the landing stops within z_d below the touchdown height."""
    from humanoid_balance.control.viip import JumpSchedule

    z_0, z_H, z_d, dt = 0.75, 0.05, 0.05, 1e-4
    schedule = JumpSchedule(standing_impedance(12.0, 1.0), jump_height=z_H, stoop_depth=z_d)
    z, z_dot = z_0, 0.0
    apex, lowest_after_touchdown, phases = z_0, np.inf, []
    schedule.update(True, z, z_dot)
    schedule.jump()
    for _ in range(int(3.0 / dt)):
        in_contact = z <= z_0 + 1e-9
        phase = schedule.update(in_contact, z, z_dot)
        f_z = vertical_force(MASS, phase.impedance, phase.z_ref, z, 0.0, z_dot, in_contact, f_min=0.0)
        z_dot += dt * (f_z / MASS - GRAVITY)
        z += dt * z_dot
        if not phases or phases[-1] != phase.name:
            phases.append(phase.name)
        if phase.name == "aerial":
            apex = max(apex, z)
        if phase.name == "touchdown":
            lowest_after_touchdown = min(lowest_after_touchdown, z)
    assert phases[:5] == ["stoop", "liftoff", "aerial", "touchdown", "standing"]
    assert apex - z_0 == pytest.approx(z_H, rel=0.10)
    assert z_0 - lowest_after_touchdown <= z_d * 1.02


def test_jump_schedule_leaves_the_ground_at_z0_while_the_contact_reading_lags():
    """The same point mass, but the contact phase it is given lags the real one by 40 ms (a filtered estimate):
    lift-off still ends at the spring's rest height z_0 (on position drives the legs would otherwise go on
    extending), the aerial phase waits for the lagging reading to lose contact before a contact means touchdown,
    and the apex is the plan's."""
    from collections import deque

    from humanoid_balance.control.viip import JumpSchedule

    z_0, z_H, z_d, dt, lag = 0.75, 0.05, 0.05, 1e-4, 0.04
    schedule = JumpSchedule(standing_impedance(12.0, 1.0), jump_height=z_H, stoop_depth=z_d)
    z, z_dot = z_0, 0.0
    readings = deque([True] * int(lag / dt))
    schedule.update(True, z, z_dot)
    schedule.jump()
    phases, apex, aerial_start = [], z_0, None
    for step in range(int(2.0 / dt)):
        in_contact = z <= z_0 + 1e-9
        readings.append(in_contact)
        phase = schedule.update(readings.popleft(), z, z_dot)
        f_z = vertical_force(MASS, phase.impedance, phase.z_ref, z, 0.0, z_dot,
                             in_contact and phase.name != "aerial", f_min=0.0)
        z_dot += dt * (f_z / MASS - GRAVITY)
        z += dt * z_dot
        if not phases or phases[-1] != phase.name:
            phases.append(phase.name)
            if phase.name == "aerial":
                aerial_start = z
        apex = max(apex, z)
    assert phases[:4] == ["stoop", "liftoff", "aerial", "touchdown"]
    assert aerial_start == pytest.approx(z_0, abs=2e-3)  # left at z_0, not when the lagging reading said so
    assert apex - z_0 == pytest.approx(z_H, rel=0.10)


def test_the_touchdown_begins_a_clearance_above_the_floor_when_the_contact_reading_lags():
    """The point mass of the jump tests, its 'sole' a leg of rest length z_0 below it, the contact reading 20 ms
    late. Given the sole's height the touchdown spring (eq. 12) starts when the sole comes within the clearance of
    the floor it left, so the landing stops within z_d of the real touchdown; from the lagging reading alone it
    starts 20 ms of fall too late and sinks deeper than z_d."""
    from collections import deque

    z_0, z_H, z_d, dt, lag, clearance = 0.75, 0.05, 0.05, 1e-4, 0.02, 0.001

    def landing(with_sole_height):
        schedule = JumpSchedule(standing_impedance(12.0, 1.0), jump_height=z_H, stoop_depth=z_d,
                                touchdown_clearance=clearance)
        z, z_dot = z_0, 0.0
        readings = deque([True] * int(lag / dt))
        schedule.update(True, z, z_dot, z - z_0)
        schedule.jump()
        touched, lowest = None, np.inf
        for _ in range(int(2.0 / dt)):
            in_contact = z <= z_0 + 1e-9
            readings.append(in_contact)
            phase = schedule.update(readings.popleft(), z, z_dot, z - z_0 if with_sole_height else None)
            f_z = vertical_force(MASS, phase.impedance, phase.z_ref, z, 0.0, z_dot,
                                 in_contact and phase.name != "aerial", f_min=0.0)
            z_dot += dt * (f_z / MASS - GRAVITY)
            z += dt * z_dot
            if schedule.airborne and in_contact and touched is None:
                touched = z
            if touched is not None and phase.name in ("touchdown", "standing"):
                lowest = min(lowest, z)
                if phase.name == "standing":
                    break
        return touched - lowest

    assert landing(with_sole_height=True) <= z_d * 1.02
    assert landing(with_sole_height=False) > z_d * 1.2


def test_a_contact_read_in_flight_well_above_the_floor_is_not_a_landing():
    """Flight seen from the schedule: the lowest sole 6 cm above the floor it left, the COG rising then falling,
    and a contact phase that flickers on (an actuator-force estimate fooled by the legs' own motion). Neither
    the rising nor the falling reading starts the touchdown, whose spring would take its landing speed from it;
    the sole coming within the clearance of the floor does."""
    schedule = JumpSchedule(standing_impedance(12.0, 1.0), touchdown_clearance=0.005)
    schedule.update(True, 0.80, 0.0, 0.0)  # standing on the floor at height 0
    schedule.name, schedule.z_ref = "aerial", 0.80
    schedule.update(False, 0.85, 0.5, 0.06)   # left the floor
    assert schedule.update(True, 0.86, 0.2, 0.06).name == "aerial"    # rising: no
    assert schedule.update(True, 0.86, -0.2, 0.06).name == "aerial"   # falling, but 6 cm up: no
    assert schedule.update(False, 0.81, -0.9, 0.004).name == "touchdown"  # within the clearance: yes
    assert schedule.impedance.K_P == pytest.approx((0.9 / schedule.stoop_depth) ** 2)
