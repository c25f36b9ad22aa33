"""Foot wrenches from actuator forces through the closed chains (Kangaroo paper, section VI-B, eqs. 43–47).

Standing still (ν = ν̇ = 0), the sole wrenches F follow from the measured actuator efforts τ̄:
(J_c,mᵀ)† (g_a + J_mᵀ g_u − τ̄) = F (eq. 46), stacked with the base rows g_b = J_c,bᵀ F, solved by least
squares. Those base rows make the soles carry the weight even in the air: g is scaled by the share of the weight
the supports carry, from the CoM's specific force (estimation/support_load.py), 0 in flight. Each J_c is the sole
frame's 6-D Jacobian (LOCAL), so F holds each sole's wrench in its own frame about its origin; a sole whose leg
cannot hold all six of its motions (a line foot's roll) carries no wrench along the free ones. Ball-screw actuators
reporting motor torques are converted first (eq. 47).
"""
import numpy as np
import pinocchio as pin
import scipy.linalg

from humanoid_balance.model.actuators import ballscrew_force
from humanoid_balance.model.closed_chain import ClosedChain
from humanoid_balance.model.projected_dynamics import contact_forces_from_actuator_efforts
from humanoid_balance.model.soles import wrench_basis

__all__ = ["QuasiStaticContactEstimator"]


class QuasiStaticContactEstimator:
    """Eqs. 45–47 on a floating-base :class:`RobotModel` for a set of sole frames."""

    def __init__(self, robot, soles, efforts_are_motor_torques=False, free_twists=None):
        if not robot.floating_base:
            raise ValueError("quasi-static contact estimation needs the floating-base model (gravity in the world)")
        self.robot = robot
        self.chain = ClosedChain(robot)
        self.sole_ids = [robot.frame_id(name) for name in soles]
        # per sole, the motions its contact constrains (model.soles.wrench_basis): its wrench is Sᵀ y
        self.bases = [wrench_basis(twists) for twists in (free_twists or [()] * len(self.sole_ids))]
        self.selections = {}  # feet carrying → the rows of their J_c and their block-diagonal wrench basis
        self.force_per_torque = np.ones(len(robot.actuated_names))  # τ̄ = factor · τ_m (eq. 47), 1 if direct
        if efforts_are_motor_torques:
            for i, name in enumerate(robot.actuated_names):
                spec = robot.spec.actuators.get(name)
                if spec is not None and spec.kind == "ballscrew":
                    self.force_per_torque[i] = ballscrew_force(1.0, spec.lead, spec.efficiency)

    def contact_jacobian(self, q):
        """Stacked 6-D LOCAL Jacobians of the soles (6·feet, nv)."""
        model, data = self.chain.model, self.chain.data
        self.chain.linearize(q, kinematics=True)  # the pass the statics' J_m needs anyway (eq. 66b)
        return np.vstack([pin.getFrameJacobian(model, data, frame, pin.LOCAL) for frame in self.sole_ids])

    def estimate(self, q, actuator_efforts, J_c=None, support=1.0, gravity=None, carrying=None):
        """Sole wrenches (feet, 6) [N, N·m] from efforts in ``robot.actuated_names`` order at configuration ``q``
        (``J_c``, ``gravity``: the stacked sole Jacobians and g(q) when the caller has them; ``support``: the share
        of the weight on the supports, estimation/support_load.py, 0 in the air; ``carrying``: per foot, whether it
        may carry a wrench — a foot the controller lifted carries none, and the others the whole weight — None:
        every one)."""
        tau = np.asarray(actuator_efforts, dtype=float) * self.force_per_torque
        J_c = self.contact_jacobian(q) if J_c is None else J_c
        feet = tuple(range(len(self.sole_ids))) if carrying is None else tuple(np.flatnonzero(carrying))
        F = np.zeros((len(self.sole_ids), 6))
        if not feet:
            return F
        rows, basis = self._selection(feet)
        J_c = J_c[rows] if rows is not None else J_c
        if basis is None:
            y = contact_forces_from_actuator_efforts(self.chain, q, J_c, tau, include_base=True, support=support,
                                                     gravity=gravity)
        else:  # the constrained motions' Jacobian S J_c gives y, F = Sᵀ y
            y = basis.T @ contact_forces_from_actuator_efforts(self.chain, q, basis @ J_c, tau, include_base=True,
                                                               support=support, gravity=gravity)
        F[list(feet)] = y.reshape(len(feet), 6)
        return F

    def _selection(self, feet):
        """The rows of the stacked J_c (None: all) and the wrench basis (None: every motion held) of ``feet``."""
        if feet not in self.selections:
            rows = None if len(feet) == len(self.sole_ids) else np.concatenate([np.arange(6 * i, 6 * i + 6)
                                                                                 for i in feet])
            basis = None if all(len(self.bases[i]) == 6 for i in feet) else \
                scipy.linalg.block_diag(*(self.bases[i] for i in feet))
            self.selections[feet] = (rows, basis)
        return self.selections[feet]
