"""Whole-body kinematics of one configuration, computed once and shared by everything a control tick asks of it, and
the placements of chosen frames read from pinocchio's storage in one go.

Frame placements, frame Jacobians and the CoM Jacobian of the floating-base tree (pinocchio), and the projection
T = ∂ν/∂ν_o onto the serial-equivalent outputs of the closed chain (Kangaroo eqs. 7, 22), so that a tree Jacobian J
becomes J T in output coordinates. Units: m, rad, s.
"""
import numpy as np
import pinocchio as pin

__all__ = ["WholeBodyKinematics", "FramePlacements", "frame_placement_rows"]

SE3_DOUBLES = 12  # a pinocchio SE3 in memory: its rotation column by column, then its translation


def frame_placement_rows(data):
    """Every frame's world placement, one row each, as a read-only (nframes, 12) view of ``data.oMf`` itself: row
    [:9] reshaped (3, 3) is the rotation transposed (pinocchio stores it column by column), row [9:] the translation.
    A kinematics pass updates the view; one ``take`` then reads any set of frames, where reading them one by one
    costs a Python call each. None when this pinocchio does not keep the placements in one contiguous array (each
    frame's address is checked)."""
    oMf = data.oMf
    item = np.dtype(float).itemsize
    start = oMf[0].rotation.__array_interface__["data"][0]
    for frame, placement in enumerate(oMf):
        rotation, translation = placement.rotation.__array_interface__, placement.translation.__array_interface__
        if (rotation["data"][0] != start + frame * SE3_DOUBLES * item or rotation["strides"] != (item, 3 * item)
                or translation["data"][0] != start + (frame * SE3_DOUBLES + 9) * item
                or translation["strides"] not in (None, (item,))):
            return None
    return np.lib.stride_tricks.as_strided(oMf[0].rotation, shape=(len(oMf), SE3_DOUBLES),
                                           strides=(SE3_DOUBLES * item, item), writeable=False)


class FramePlacements:
    """The world placements of a fixed set of frames after each kinematics pass on ``data``: one ``take`` from
    :func:`frame_placement_rows`, or one frame at a time where this pinocchio does not allow that."""

    def __init__(self, data, frame_ids):
        self.data = data
        self.frame_ids = np.array(frame_ids, dtype=int)
        self.rows = frame_placement_rows(data)

    def read(self):
        """Rotations transposed (k, 3, 3) and translations (k, 3) of the frames, in the world [m]."""
        if self.rows is not None:
            rows = self.rows.take(self.frame_ids, axis=0)
            return rows[:, :9].reshape(-1, 3, 3), rows[:, 9:]
        H = np.array([self.data.oMf[frame].homogeneous for frame in self.frame_ids])
        return H[:, :3, :3].transpose(0, 2, 1), H[:, :3, 3]


class WholeBodyKinematics:
    """Kinematics of a floating-base :class:`~humanoid_balance.model.closed_chain.ClosedChain`'s robot at the last
    configuration given to :meth:`update`; owns a pinocchio ``Data``, not thread-safe."""

    def __init__(self, chain):
        self.chain = chain
        self.robot = chain.robot
        self.model = chain.model
        self.data = chain.model.createData()
        self.q = None
        self.T = None      # ∂ν/∂ν_o (nv, 6 + n_out)
        self.com = None    # centre of mass, world frame [m]
        self.J_com = None  # ∂c/∂ν (3, nv)
        self._com_jacobian = None  # J_com T, once asked for

    def update(self, q):
        """Compute everything at ``q`` (nothing when it is the configuration already computed)."""
        if self.q is not None and self.q.tobytes() == np.asarray(q, dtype=float).tobytes():
            return self
        model, data = self.model, self.data
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        self.J_com = pin.jacobianCenterOfMass(model, data, False)  # from the joint Jacobians just computed
        self.com = data.com[0].copy()
        self.T = self.chain.output_velocity_map(q, self.chain.linearize(q, computed=data))  # from this pass's
        # joint Jacobians and placements, not computed again in the chain's Data
        self._com_jacobian = None
        self.q = np.array(q, dtype=float)
        return self

    def com_jacobian(self):
        """The CoM Jacobian in output coordinates, J_com T (3, 6 + n_out); computed once per configuration."""
        if self._com_jacobian is None:
            self._com_jacobian = self.J_com @ self.T
        return self._com_jacobian

    def placement(self, frame_id):
        """World placement of a frame (pin.SE3, a copy)."""
        return self.data.oMf[frame_id].copy()

    def frame_jacobian(self, frame_id, reference=pin.LOCAL_WORLD_ALIGNED):
        """The frame's 6-D Jacobian in output coordinates, J T (6, 6 + n_out)."""
        return pin.getFrameJacobian(self.model, self.data, frame_id, reference) @ self.T

    @property
    def base_rotation(self):
        """Rotation of the base (root joint) in the world (3, 3)."""
        return self.data.oMi[1].rotation
