"""The demo's scripted scenarios (no ROS here): settle, stand, a lateral push, dancing arms, a second push; or, in
viip mode, three jumps in a row.

Times are simulated seconds from the start of the plant. Pushes are given as the velocity change they would give
the whole robot (impulse / mass), so that one scenario fits any robot; :meth:`Scenario.for_robot` turns them into
forces on its base. The arm motion is a smooth joint-space dance in the spirit of Choi–Kim's experiment (the busy
limbs swinging while the CoM stays put; each limb's shape is its ``<limb>_swing`` in the robot configuration),
sent to the balancer as J-busy joint trajectories of velocities alone (followed from where the arms are), the first
and last zero. A jump is asked of centroidal_balancer/jump (Sugihara–Nakamura's stoop, lift-off, flight and landing).
"""
from typing import NamedTuple, Optional

import numpy as np

__all__ = ["Push", "ArmDance", "Scenario", "SCENARIOS"]


class Push(NamedTuple):
    time: float            # [s]
    velocity_change: tuple  # impulse / robot mass, world frame [m/s]
    label: str
    body: str = ""         # the body pushed, at its centre of mass (set by Scenario.for_robot)
    force: tuple = ()      # world frame [N], over the plant's push_duration (set by Scenario.for_robot)


class ArmDance(NamedTuple):
    start: float             # [s]
    duration: float          # [s], a whole number of periods
    frequency: float         # [Hz]
    scale: float             # times each limb's configured swing

    def trajectory(self, swing, rate=100.0):
        """(times from start [s], position offsets (k, n), velocities (k, n)) of a limb whose offsets at mid-swing
        are ``swing`` (n,) [rad], scaled: from 0 to the swing and back, zero velocity at both ends."""
        t = np.arange(0.0, self.duration + 0.5 / rate, 1.0 / rate)
        w = 2 * np.pi * self.frequency
        shape = 0.5 * self.scale * np.asarray(swing, dtype=float)  # 1 − cos peaks at 2
        return t, np.outer(1.0 - np.cos(w * t), shape), np.outer(w * np.sin(w * t), shape)


class Scenario(NamedTuple):
    name: str
    duration: float          # [s]
    settle: float            # nothing is judged before this time [s]
    pushes: tuple
    dance: Optional[ArmDance]
    jumps: tuple = ()        # times a jump is asked for [s]
    mode: str = ""           # the balance mode the scenario is made for ("": any)
    stepping: bool = False   # the balancer's recovery steps on (control/stepping.py)

    def for_robot(self, mass, body, push_duration, dancing=True):
        """This scenario with each push as a force on ``body`` of a robot of ``mass`` [kg], lasting
        ``push_duration`` [s], labelled with its impulse; without the dance when the robot has no limbs to dance
        (``dancing`` False: no busy limb with a swing)."""
        pushes = tuple(push._replace(body=body, force=tuple(mass * np.asarray(push.velocity_change) / push_duration),
                                     label=f"{push.label} {mass * np.linalg.norm(push.velocity_change):.0f} N·s")
                       for push in self.pushes)
        return self._replace(pushes=pushes, dance=self.dance if dancing else None)

    def parameters(self):
        """The nodes' parameters the scenario needs (node → {name: value}): the balancer's recovery steps."""
        return {"centroidal_balancer": {"stepping": True}} if self.stepping else {}

    def phases(self):
        """(start, end, label) of every phase, for the report."""
        marks = sorted([(p.time, p.label) for p in self.pushes]
                       + [(t, f"jump {k + 1}") for k, t in enumerate(self.jumps)]
                       + ([(self.dance.start, "dancing arms")] if self.dance else []))
        starts = [(0.0, "settle"), (self.settle, "stand")] + marks
        ends = [start for start, _ in starts[1:]] + [self.duration]
        return [(start, end, label) for (start, label), end in zip(starts, ends)]


SCENARIOS = {  # pushes of 6 and 8 N·s on the bundled 53 kg robot
    "full": Scenario("full", 14.0, 1.0,
                     (Push(3.0, (0.0, 0.1125, 0.0), "lateral push"), Push(11.0, (0.0, -0.15, 0.0), "second push")),
                     ArmDance(6.0, 4.0, 0.5, 1.0)),
    "short": Scenario("short", 6.5, 0.5,
                      (Push(1.0, (0.0, 0.1125, 0.0), "lateral push"), Push(4.5, (0.0, -0.1125, 0.0), "second push")),
                      ArmDance(2.2, 2.0, 0.5, 0.75)),
    "jump": Scenario("jump", 7.5, 1.0, (), None, jumps=(1.5, 3.5, 5.5), mode="viip"),
    # 22 N·s on 53 kg: on its feet alone kangaroo_like tips onto the pushed side's foot and falls (issues 40, 52: its
    # feet alone hold about 21 N·s)
    "step": Scenario("step", 6.0, 0.5, (Push(1.0, (0.0, 0.41, 0.0), "lateral push that needs a step"),), None,
                     stepping=True),
}
