"""Where the robot pushes on the ground: foot wrenches, centres of pressure, ZMP and contact phase.

- F/T sensor wrench → sole frame (a change of frame and reduction point of a force, pinocchio ``Force``);
- centre of pressure of a foot, in its sole frame: p = (−τ_y / f_z, τ_x / f_z);
- zero-moment point of all feet on the ground plane z = h (Choi–Kim section 2; Sugihara–Nakamura eqs. 3–4):
  the point where the horizontal moment of the total contact wrench vanishes, from the part of each foot's wrench its
  sole can bear (f_z ≥ 0, its CoP on the sole), so that an estimate's error never puts it off the feet;
- contact vs aerial phase from the normal force with hysteresis (Sugihara–Nakamura section 2: f_z > 0 in
  contact, f_z = 0 in the air).
Units: N, N·m, m.
"""
import numpy as np
import pinocchio as pin

__all__ = ["wrench_in_frame", "center_of_pressure", "bearable_wrenches", "zero_moment_point", "ContactHysteresis",
           "CONTACT", "AERIAL", "UNKNOWN"]

CONTACT, AERIAL, UNKNOWN = 1, 0, -1
"""Contact states, as published on contact/<foot>/state (std_msgs/Int8)."""


def wrench_in_frame(target_M_source, wrench):
    """A wrench [f; τ] given in ``source`` (about its origin) expressed in ``target`` about its origin."""
    return target_M_source.act(pin.Force(np.asarray(wrench, dtype=float))).vector


def center_of_pressure(wrench, min_normal_force):
    """CoP (x, y) [m] in the frame of ``wrench`` (its xy plane = contact surface), or None when f_z is too small."""
    f_z = wrench[2]
    if f_z < min_normal_force:
        return None
    return np.array([-wrench[4] / f_z, wrench[3] / f_z])


def bearable_wrenches(wrenches, rectangles):
    """The part of each sole wrench [f; τ] (k, 6), in its sole frame, that a sole flat on the ground can bear:
    the normal force f_z ≥ 0 and the moments clipped to put the CoP on the sole's rectangle
    (y_min f_z ≤ τ_x ≤ y_max f_z, −x_max f_z ≤ τ_y ≤ −x_min f_z); the horizontal forces and the yaw moment as given.
    ``rectangles``: (k, 4) of x_min, x_max, y_min, y_max [m]. A measured CoP beyond its sole is a measurement's
    error (the sole pivots on that edge at most): the ZMP is built from what the soles can bear."""
    bearable = np.array(wrenches, dtype=float)
    f_z = np.maximum(bearable[:, 2], 0.0)
    x_min, x_max, y_min, y_max = rectangles.T
    bearable[:, 2] = f_z
    bearable[:, 3] = np.minimum(np.maximum(bearable[:, 3], y_min * f_z), y_max * f_z)  # np.clip's values, without
    bearable[:, 4] = np.minimum(np.maximum(bearable[:, 4], -x_max * f_z), -x_min * f_z)  # its dispatch (~1 µs)
    return bearable


def zero_moment_point(wrenches_world, ground_height, min_normal_force):
    """ZMP (x, y, h) [m] of wrenches [f; τ] expressed in the world frame about its origin (one (6,) or several
    (k, 6), summed), on the plane z = h.

    The moment about p = (x, y, h) is τ − p × f; its horizontal part vanishes at
    x = (h f_x − τ_y) / f_z,  y = (h f_y + τ_x) / f_z.  Returns None when the total f_z < ``min_normal_force``.
    """
    wrenches_world = np.asarray(wrenches_world, dtype=float)
    f_x, f_y, f_z, tau_x, tau_y, _ = (wrenches_world if wrenches_world.ndim == 1 else wrenches_world.sum(axis=0))
    if f_z < min_normal_force:
        return None
    h = ground_height
    return np.array([(h * f_x - tau_y) / f_z, (h * f_y + tau_x) / f_z, h])


class ContactHysteresis:
    """Contact phase of one foot from its normal force: contact above ``on`` [N], aerial below ``off`` [N]."""

    def __init__(self, on, off):
        if not on > off >= 0.0:
            raise ValueError(f"contact thresholds need on > off >= 0 N, got on={on}, off={off}")
        self.on, self.off = on, off
        self.state = UNKNOWN

    def update(self, normal_force, lifted=False):
        """The phase after a reading of ``normal_force`` [N] (None: unknown); ``lifted``: the controller has lifted the
        foot (a step's swing), which is aerial whatever the force the swing leg's dynamics put on its reading."""
        if normal_force is None:
            self.state = UNKNOWN
        elif lifted:
            self.state = AERIAL
        elif normal_force > self.on:
            self.state = CONTACT
        elif normal_force < self.off or self.state == UNKNOWN:  # in the band, a new foot starts aerial
            self.state = AERIAL
        return self.state
