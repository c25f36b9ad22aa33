"""Variable Impedant Inverted Pendulum (VIIP) control (Sugihara & Nakamura, sections 2–3).

Vertical force reference with a phase-dependent impedance (eq. 8), f_z ≥ f_min while in contact (eq. 15):

    ref f_z = m {K_Pz (ref z_G − z_G) + K_Dz (ref ż_G − ż_G) + g}   ⇒   z̈_G = K_Pz Δz + K_Dz Δż   (eqs. 8–9)

    lift-off:   K_Dz = 0, K_Pz = 2 g z_H / z_d²   (stoop z_d below ref z_G, apex z_H above it; eqs. 10–11)
    touchdown:  K_Dz = 0, K_Pz = (ż_G− / z_d)²   (landing speed ż_G−, absorbed within z_d; eq. 12)
    standing:   ω = √K_Pz, ζ = K_Dz / (2√K_Pz) ≥ 1, i.e. not under-damped (eqs. 13–14)

The COG reference acceleration follows from the ZMP and vertical-force references (eqs. 16–19) and is
integrated into the strict referential velocity (SRV) ref ṗ_G. The ZMP reference regulates the COG horizontally
(the paper's ZMP manipulation, its ref. [16]): the ZMP that makes eqs. 16–19 a critically damped return of the COG
to its reference, held inside the support. All motion constraints J_i θ̇ = v_i
(COG: J_G θ̇ = ref ṗ_G, eq. 20; feet, attitude, posture: eq. 24) are resolved together by weighted least
norm, θ̇ = W⁻¹Jᵀ(J W⁻¹ Jᵀ)⁻¹ v (eqs. 22–23); in the aerial phase the COG rows are dropped (the COG is not
controllable there) while attitude and posture are kept. Units: m, s, N, kg.
"""
from typing import NamedTuple

import numpy as np

__all__ = ["Impedance", "JumpSchedule", "VerticalPhase", "liftoff_impedance", "touchdown_impedance",
           "standing_impedance", "vertical_force", "cog_reference_acceleration", "regulated_zmp", "Constraint",
           "joint_constraint", "resolve_srv", "GRAVITY"]

GRAVITY = 9.81  # m/s²
CONTACT_REACH = 0.02
"""A contact read in flight while the lowest sole is more than this above the floor it left is not a landing [m]
(the base estimate is good to about a centimetre)."""


class Impedance(NamedTuple):
    K_P: float  # [1/s²]
    K_D: float  # [1/s]


def liftoff_impedance(jump_height, stoop_depth, gravity=GRAVITY):
    """Eqs. 10–11: a spring compressed by z_d that releases m g z_H of energy, no damping."""
    return Impedance(2.0 * gravity * jump_height / stoop_depth ** 2, 0.0)


def touchdown_impedance(landing_speed, stoop_depth):
    """Eq. 12: a spring that stops the landing speed ż_G− within the stoop depth z_d, no damping."""
    return Impedance((landing_speed / stoop_depth) ** 2, 0.0)


def standing_impedance(frequency, damping_ratio=1.0):
    """Eqs. 13–14: K_P = ω², K_D = 2ζω with ζ ≥ 1 (critically damped or over-damped)."""
    if damping_ratio < 1.0:
        raise ValueError(f"standing impedance must not be under-damped: ζ = {damping_ratio} < 1 (eq. 14)")
    return Impedance(frequency ** 2, 2.0 * damping_ratio * frequency)


def vertical_force(mass, impedance, z_ref, z, z_dot_ref, z_dot, in_contact, f_min, gravity=GRAVITY):
    """ref f_z of eq. 8 [N], held at or above f_min > 0 in contact (eq. 15) and zero in the air."""
    if not in_contact:
        return 0.0
    f_z = mass * (impedance.K_P * (z_ref - z) + impedance.K_D * (z_dot_ref - z_dot) + gravity)
    return max(f_z, f_min)


def cog_reference_acceleration(mass, cog, zmp_ref, f_z, moment_xy=(0.0, 0.0), gravity=GRAVITY):
    """ref p̈_G of eqs. 16–19: the COG acceleration that puts the ZMP at ``zmp_ref`` with vertical force f_z.

    ref ω_G² = f_z / (m (z_G − z_Z)); ẍ = ω_G²(x_G − x_Z) − n_y/(m(z_G − z_Z)); ÿ = ω_G²(y_G − y_Z) + n_x/(…);
    z̈ = f_z/m − g. ``moment_xy`` = (n_x, n_y), the moment about the COG [N·m].
    """
    height = cog[2] - zmp_ref[2]
    omega2 = f_z / (mass * height)
    n_x, n_y = moment_xy
    return np.array([omega2 * (cog[0] - zmp_ref[0]) - n_y / (mass * height),
                     omega2 * (cog[1] - zmp_ref[1]) + n_x / (mass * height),
                     f_z / mass - gravity])


def regulated_zmp(mass, cog, cog_velocity, cog_reference, f_z, ground, frequency, support, margin=0.01):
    """The ZMP reference [m] that eqs. 16–19 turn into ẍ_G = −ω_c² (x_G − x_d) − 2 ω_c ẋ_G, a critically damped
    return of the COG to ``cog_reference`` (x_d, y_d), clipped to the box ``support`` = (lower, upper) xy corners
    shrunk by ``margin``: where the floor can carry it. ``frequency`` ω_c [rad/s]; ``ground``: the floor height."""
    omega2 = f_z / (mass * (cog[2] - ground))
    acceleration = -frequency ** 2 * (cog[:2] - cog_reference[:2]) - 2.0 * frequency * cog_velocity[:2]
    lower, upper = support
    return np.r_[np.clip(cog[:2] - acceleration / omega2, lower + margin, upper - margin), ground]


class Constraint(NamedTuple):
    """J θ̇ = v, one motion constraint of eq. 24, with a name for diagnostics."""

    name: str
    J: np.ndarray
    v: np.ndarray


def joint_constraint(name, columns, width, rates):
    """The :class:`Constraint` that the coordinates ``columns`` of ν (width ``width``) move at ``rates``."""
    J = np.zeros((len(columns), width))
    J[np.arange(len(columns)), columns] = 1.0
    return Constraint(name, J, rates)


def resolve_srv(constraints, weights):
    """θ̇ = W⁻¹Jᵀ(J W⁻¹ Jᵀ)⁻¹ v (eq. 23), the weighted least-norm motion meeting every constraint.

    Args:
        constraints: the active constraints (their rows are stacked).
        weights: diagonal of W (n,), positive.
    """
    J = np.vstack([c.J for c in constraints])
    v = np.concatenate([c.v for c in constraints])
    W_inv_Jt = J.T / np.asarray(weights, dtype=float)[:, None]
    return W_inv_Jt @ np.linalg.solve(J @ W_inv_Jt, v)


class VerticalPhase(NamedTuple):
    name: str          # standing | stoop | liftoff | aerial | touchdown
    impedance: Impedance
    z_ref: float       # ref z_G of eq. 8 [m]


class JumpSchedule:
    """Selects the impedance of eqs. 10–14 from the contact phase (Sugihara–Nakamura Fig. 2).

    standing (ref z_G = z_0) → on ``jump()``: stoop to z_0 − z_d (standing impedance) → lift-off (eq. 11 for
    the depth the stoop reached, so that the spring gives m g z_H whatever it settled at; ref z_G = z_0) → aerial
    (f_z = 0) → touchdown (eq. 12 with the measured landing speed, ref z_G = height at touchdown) → standing again
    once the COG has stopped going down. The touchdown begins at the first contact on the way down (a contact read
    while the COG still rises, or, given the lowest sole's height, while it is CONTACT_REACH above the floor it left,
    is not a landing), or as soon as the sole comes down within ``touchdown_clearance`` of that floor: a contact phase
    estimated from forces is seen some milliseconds late, and the fall goes on meanwhile.
    """

    def __init__(self, standing, jump_height=0.05, stoop_depth=0.05, settle_speed=0.02, touchdown_clearance=0.005):
        self.standing, self.jump_height, self.stoop_depth, self.settle_speed = standing, jump_height, stoop_depth, \
            settle_speed
        self.touchdown_clearance = touchdown_clearance
        self.name, self.z_0, self.z_ref, self.impedance = "standing", None, None, standing
        self.airborne = False  # in the aerial phase: contact was lost (the touchdown is the next contact)
        self.ground = None     # the lowest sole's height at the last contact [m]

    def jump(self):
        if self.name == "standing":
            self.name = "stoop"

    def take_off(self):
        """End the lift-off now (the legs have given the push the stoop prepared): the aerial phase, whose landing is
        the next contact after the contact is lost."""
        if self.name == "liftoff":
            self.name, self.airborne = "aerial", False

    def update(self, in_contact, z, z_dot, sole_height=None):
        """The phase, impedance and ref z_G for this tick, given contact, the COG height and speed and, if known,
        the lowest sole's height [m]."""
        if self.z_0 is None:
            self.z_0 = self.z_ref = z
        if sole_height is not None and self.name == "aerial" and self.airborne and self.ground is not None:
            clearance = sole_height - self.ground
            in_contact = ((in_contact and clearance < CONTACT_REACH)  # a sole well above the floor touches nothing
                          or (z_dot < 0.0 and clearance < self.touchdown_clearance))  # it is a clearance away
        elif sole_height is not None and in_contact:
            self.ground = sole_height
        if self.name == "stoop":
            self.z_ref = self.z_0 - self.stoop_depth
            if abs(z - self.z_ref) < 0.1 * self.stoop_depth and abs(z_dot) < self.settle_speed:
                self.name, self.z_ref = "liftoff", self.z_0
                self.impedance = liftoff_impedance(self.jump_height, self.z_0 - z)
        elif self.name == "liftoff" and (not in_contact or z >= self.z_0):
            self.name, self.airborne = "aerial", not in_contact  # the spring has given its energy at z_0
        elif self.name == "aerial" and not in_contact:
            self.airborne = True
        elif self.name == "aerial" and in_contact and self.airborne and z_dot < 0.0:  # (rising, it is not one)
            self.name, self.z_ref = "touchdown", z
            self.impedance = touchdown_impedance(z_dot, self.stoop_depth)
        elif self.name == "touchdown" and z_dot >= 0.0:
            self.name, self.z_ref, self.impedance = "standing", self.z_0, self.standing
        if self.name in ("standing", "stoop"):
            self.impedance = self.standing
        return VerticalPhase(self.name, self.impedance, self.z_ref)
