"""Actuator transmissions: ball-screw linear actuators (Kangaroo paper, eq. 47)."""
import math

__all__ = ["ballscrew_force", "ballscrew_motor_torque"]


def ballscrew_force(motor_torque, lead, efficiency):
    """Axial force τ̄ = τ_m·2π·η / L (eq. 47) [N] from motor torque τ_m [N·m], screw lead L [m/rev], efficiency η."""
    return motor_torque * 2.0 * math.pi * efficiency / lead


def ballscrew_motor_torque(force, lead, efficiency):
    """Motor torque τ_m = τ̄·L / (2π·η) [N·m] producing the axial force τ̄ [N] (inverse of eq. 47)."""
    return force * lead / (2.0 * math.pi * efficiency)
