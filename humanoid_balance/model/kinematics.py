"""Whole-body kinematics of one configuration, computed once and shared by everything a control tick asks of it.

Frame placements, frame Jacobians and the CoM Jacobian of the floating-base tree (pinocchio), and the projection
T = ∂ν/∂ν_o onto the serial-equivalent outputs of the closed chain (Kangaroo eqs. 7, 22), so that a tree Jacobian J
becomes J T in output coordinates. Units: m, rad, s.
"""
import numpy as np
import pinocchio as pin

__all__ = ["WholeBodyKinematics"]


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

    def update(self, q):
        """Compute everything at ``q`` (nothing when it is the configuration already computed)."""
        if self.q is not None and np.array_equal(q, self.q):
            return self
        model, data = self.model, self.data
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        self.J_com = pin.jacobianCenterOfMass(model, data, q, False)
        self.com = data.com[0].copy()
        self.T = self.chain.output_velocity_map(q)
        self.q = np.array(q, dtype=float)
        return self

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
