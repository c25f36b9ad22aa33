"""The balance stage of the loop: the centroidal balancer's controller with what it needs between ticks — its
references and requests, the feet's last known contact phases, the time since the last tick, a hold after stale
inputs, and what it does on a starved computer. The centroidal_balancer node and
:class:`~humanoid_balance.loop.BalanceLoop` run this one object, so the balance's policy is written once; the node
converts messages. Units: SI.

Starved (loop.starvation: more than a fifth of the states' ticks skipped over the last second, and fewer than
``starved_rate`` of them computed on a second), the balance degrades rather than acting on a loop slower and later
than the one it was tuned for: a new CoM reference, limb trajectory or pose, step, jump or mode change is refused
(:class:`Starved`, with the share skipped), and the CoM reference granted when the starvation began is held — the
wish is kept and approached again once the ticks come back. Before it is starved, and while it is, the CoM reference
stays further inside the support polygon, by up to ``starved_margin`` support margins, in proportion to the share of
ticks skipped recently (Starvation.lateness), and its ZMP gain k_p is slowed to the share of ticks it computes
on (Starvation.computed_share, control.zmp_com.slowed). What the robot stands on is still read from the feet's
phases as they come: a late message changes nothing about them.
"""
import numpy as np

from humanoid_balance.control.balancer import BalancerState, Refused, balance_controller, change_mode
from humanoid_balance.estimation.contact_wrench import AERIAL, CONTACT
from humanoid_balance.loop.starvation import STARVED, STARVED_RATE, Starvation

__all__ = ["BalanceStage", "NoContact", "Starved", "MAX_DT"]

MAX_DT = 0.05
"""[s] the longest step between two ticks the controller integrates over (a gap in the inputs is not a motion)."""


class NoContact(Refused):
    """A reference refused because no foot is on the ground: there is nothing to balance towards."""


class Starved(Refused):
    """A request refused because the computer is short of time (see the module)."""


class BalanceStage:
    """The :class:`~humanoid_balance.control.balance_controller.BalanceController` of a mode and its inputs.

    Args:
        robot: the RobotModel (floating base).
        config: its BalancerConfig.
        sections: the limbs' embedded-motion Sections (J-busy and C-busy).
        starved_rate: [Hz] the rate under which skipping states is starvation (loop.starvation.STARVED_RATE).
        starved_margin: how much further inside the support the CoM reference stays when starved, in support
            margins (in proportion to Starvation.lateness below starvation).
    """

    def __init__(self, robot, config, sections=(), starved_rate=STARVED_RATE, starved_margin=1.0):
        self.controller = balance_controller(robot, config, sections)
        feet = config.feet
        self.phases = [None] * len(feet)   # per foot: True in contact, False aerial, None none known (in contact)
        self.com_reference = None          # the CoM the user wishes, world [m]; the CoM of the first tick until set
        self.trajectories = {}             # J-busy limb → the LimbTrajectory it follows
        self.poses = {}                    # C-busy limb → the pin.SE3 target of its end frame, world
        self.last_time = None              # of the last tick's state [s]
        self.holding = False               # the next tick restarts from the measured posture (after stale inputs)
        self.starvation = Starvation(rate=starved_rate)  # of the states' ticks
        self.starved_margin = starved_margin * config.support_margin  # [m]
        self.granted = None                # the CoM reference the last tick granted, world [m]
        self.held = None                   # the one held while starved

    @property
    def mode(self):
        return self.controller.mode

    # -- what the feet say ----------------------------------------------------------------------------
    def observe_phase(self, foot, state):
        """Foot index ``foot``'s contact state (CONTACT, AERIAL or UNKNOWN: a silent sensor, which keeps the last)."""
        if state == CONTACT or state == AERIAL:
            self.phases[foot] = state == CONTACT

    def observe_normal_force(self, foot, normal_force):
        """Foot index ``foot`` is in contact while its sole's normal force [N] exceeds the QP's f_min."""
        self.phases[foot] = bool(normal_force > self.controller.config.f_min)

    def contacts(self):
        """Per foot, whether it is in contact: its last known phase; in contact until one is known."""
        return tuple(phase is not False for phase in self.phases)

    # -- the tick -------------------------------------------------------------------------------------
    def update(self, q, v, time, zmp, dt=None, sole_wrenches=()):
        """The JointCommand for the floating-base state ``q``, ``v`` stamped ``time`` [s], the measured ``zmp``
        (world [m]; None: none fresh), the feet's measured ``sole_wrenches`` (per foot [f; τ] in its sole frame or
        None; (): none known) and their last phases; ``dt`` [s] since the last tick (None: from the stamps, at most
        :data:`MAX_DT`)."""
        if dt is None:
            dt = 0.0 if self.last_time is None else min(max(time - self.last_time, 0.0), MAX_DT)
        self.last_time = time
        controller = self.controller
        if self.com_reference is None:
            self.com_reference = controller.centroidal.com(q)
        starved = self.starvation.take(time)
        controller.governor.widen(self.starved_margin * min(1.0, self.starvation.lateness / STARVED))
        controller.computed_share = self.starvation.computed_share
        if starved:
            if self.held is None:
                self.held = self.com_reference if self.granted is None else self.granted
        else:
            self.held = None
        state = BalancerState(q, v, self.contacts(), zmp, self.com_reference if self.held is None else self.held,
                              self.trajectories, self.poses, time, sole_wrenches)
        if self.holding:
            controller.hold(state)
            self.holding = False
        command = controller.update(state, dt)
        self.granted = command.com_reference
        return command

    def hold(self):
        """Stale inputs: the posture to hold (the last position command, None before one) with zero velocity and
        effort; the next tick restarts from the measured posture."""
        self.holding = True
        return self.controller.position_command

    def restart(self):
        """Start again from the measured posture at the next tick (on activation)."""
        self.controller.position_command = None

    # -- requests -------------------------------------------------------------------------------------
    def _refuse_without_contact(self, what):
        if self.controller.supported is False:
            raise NoContact(f"{what}: refused, no foot is in contact")

    def _refuse_when_starved(self, what):
        if self.starvation.starved:
            starvation = self.starvation
            raise Starved(f"{what}: refused, the computer is short of time: {100 * starvation.fraction:.0f} % of the "
                          f"state's ticks skipped in the last second, {starvation.taken_rate:.0f} Hz computed (see "
                          "realtime_priority)")

    def set_com_reference(self, point, what="com reference"):
        """Balance towards the CoM ``point`` (world [m]), as far as the robot stays up; NoContact in the air,
        Starved on a starved computer."""
        self._refuse_without_contact(what)
        self._refuse_when_starved(what)
        self.com_reference = np.asarray(point, dtype=float)

    def follow(self, limb, trajectory, now, what="trajectory"):
        """Have the J-busy ``limb`` follow ``trajectory`` (a LimbTrajectory) taken up at ``now`` [s]; Unfollowable
        when it cannot, NoContact in the air, Starved on a starved computer."""
        self.controller.check_trajectory(limb, trajectory, now)
        self._refuse_without_contact(what)
        self._refuse_when_starved(what)
        self.trajectories[limb] = trajectory

    def reach(self, limb, placement, what="pose"):
        """Have the C-busy ``limb``'s end go to ``placement`` (pin.SE3, world); OutOfReach beyond the limb's reach,
        NoContact in the air, Starved on a starved computer."""
        self.controller.check_pose(limb, placement.translation)
        self._refuse_without_contact(what)
        self._refuse_when_starved(what)
        self.poses[limb] = placement

    def request_step(self, foot, target):
        """A step of ``foot`` to its sole's ``target`` (pin.SE3, world); Refused with the reason."""
        self._refuse_when_starved(f"step of {foot}")
        self.controller.request_step(foot, target)

    def jump(self):
        """A jump; Refused with the reason when the mode does not jump or cannot now."""
        self._refuse_when_starved("jump")
        self.controller.jump()

    def change_mode(self, mode, gains=None, q=None):
        """Balance in ``mode`` with the ZmpComGains ``gains`` (None: the current ones), checked at ``q`` (None: the
        robot's reference posture); Refused while the current mode is busy or the computer is starved (a change of
        mode), GainError / ValueError for gains or a mode that cannot be. Nothing changes when refused."""
        if mode != self.mode:
            self._refuse_when_starved(f"mode '{mode}'")
        controller = change_mode(self.controller, mode)
        controller.check(controller.robot.reference_q if q is None else q, gains)
        if gains is not None:
            controller.retune(gains)
        self.controller = controller
