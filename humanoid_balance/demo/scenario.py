"""The demo's scripted scenario: settle, stand, a lateral push, dancing arms, a second push (no ROS here).

Times are simulated seconds from the start of the plant. The arm motion is a smooth joint-space dance in the
spirit of Choi–Kim's experiment (both arms swinging while the CoM stays put), sent to the balancer as J-busy
joint trajectories whose first and last velocities are zero.
"""
from typing import NamedTuple

import numpy as np

__all__ = ["Push", "ArmDance", "Scenario", "SCENARIOS"]


class Push(NamedTuple):
    time: float          # [s]
    body: str            # body the force acts on, at its centre of mass
    force: tuple         # world frame [N], for the plant's push_duration
    label: str


class ArmDance(NamedTuple):
    start: float             # [s]
    duration: float          # [s], a whole number of periods
    frequency: float         # [Hz]
    amplitude: float         # shoulder pitch swing [rad]: from 0 to 2·amplitude and back

    def trajectory(self, mirror, rate=100.0):
        """(times from start [s], positions (k, 3) offsets, velocities (k, 3)) for [shoulder pitch, shoulder roll,
        elbow]; ``mirror`` = −1 swings the arm in antiphase with roll mirrored. Zero velocity at both ends."""
        t = np.arange(0.0, self.duration + 0.5 / rate, 1.0 / rate)
        w = 2 * np.pi * self.frequency
        swing, swing_rate = 1.0 - np.cos(w * t), w * np.sin(w * t)
        amplitude = np.array([mirror * self.amplitude, mirror * 0.35, -0.5 * self.amplitude])
        return t, np.outer(swing, amplitude), np.outer(swing_rate, amplitude)


class Scenario(NamedTuple):
    name: str
    duration: float          # [s]
    settle: float            # nothing is judged before this time [s]
    pushes: tuple
    dance: ArmDance

    def phases(self):
        """(start, end, label) of every phase, for the report."""
        marks = sorted([(p.time, p.label) for p in self.pushes] + [(self.dance.start, "dancing arms")])
        starts = [(0.0, "settle"), (self.settle, "stand")] + marks
        ends = [start for start, _ in starts[1:]] + [self.duration]
        return [(start, end, label) for (start, label), end in zip(starts, ends)]


SCENARIOS = {
    "full": Scenario("full", 14.0, 1.0,
                     (Push(3.0, "base_link", (0.0, 60.0, 0.0), "lateral push 6 N·s"),
                      Push(11.0, "base_link", (0.0, -80.0, 0.0), "second push 8 N·s")),
                     ArmDance(6.0, 4.0, 0.5, 0.8)),
    "short": Scenario("short", 6.5, 0.5,
                      (Push(1.0, "base_link", (0.0, 60.0, 0.0), "lateral push 6 N·s"),
                       Push(4.5, "base_link", (0.0, -60.0, 0.0), "second push 6 N·s")),
                      ArmDance(2.2, 2.0, 0.5, 0.6)),
}
