"""A starved computer seen from the stamps of the states a stage computes on (issue 54, item 2).

A node that falls behind its source — perception or logging took the cores, the scheduler gave it less than a tick's
time — takes the newest message and skips those that came meanwhile; nothing in one message says so, but the gaps
between the stamps do. :class:`SkippedTicks` counts them for a node's /diagnostics; :class:`Starvation` judges the
last second of them for the balance, which degrades while it is starved — skipping ticks, and slower than the rate it
was tuned for: new references, steps, jumps and mode changes are refused with the reason, the references already
granted are held where they are (loop.BalanceStage). Before that, and with it, :attr:`Starvation.lateness` — the
share of ticks skipped, held for LATENESS_MEMORY — keeps the CoM further inside the support: a chain running at
80-97 % of its plant's rate beside two CPU-bound jobs here let the robot fall, in 2 runs of 5, from a CoM held at the
toes' margin, and stood with 2 cm more of it. And beyond the few ticks a loaded machine skips now and then, the
balance's ZMP gain follows :attr:`Starvation.computed_share` (control.zmp_com.slowed): beside two CPU-bound jobs on a
host three times slower than usual, the balancer computing at 30-50 Hz of the plant's 100 and its commands reaching
the plant 40-60 ms after their states, the robot rocked and toppled backwards at the nominal k_p = 2 1/s and stood at
1 1/s. Units: s, Hz.
"""
import math
from collections import deque

import numpy as np

__all__ = ["SkippedTicks", "Starvation", "STARVED", "STARVED_RATE", "STARVED_ERROR", "OUTAGE_TICKS", "LATENESS_MEMORY",
           "FEW_SKIPPED"]

STARVED = 0.2
"""The fraction of its source's ticks a stage may skip over the last WINDOW before it is starved (a loaded machine
skips a few now and then; at 100 Hz a quiet 2-core machine here skipped 0-9 %, beside four CPU-bound jobs 17-50 %)."""
STARVED_RATE = 80.0
"""[Hz] the rate under which a stage that skips ticks is starved (the ``starved_rate`` parameter): a balancer that
takes a 1 kHz robot's states at 300 Hz skips most of them and is not starved; the free-running chain on kangaroo_like
fell beside CPU-bound jobs with its balancer at 37-71 Hz of the plant's 100 and stood at 90 Hz and more."""
STARVED_ERROR = 0.5
"""The fraction beyond which a starved balance is an error: it runs at half its source's rate or less."""
FEW_SKIPPED = 0.5 * STARVED
"""The share of its source's ticks a stage skips now and then on a loaded machine, which its gains take as they are."""
WINDOW = 1.0
"""[s of the source's stamps] the span judged."""
MIN_TICKS = 20
"""Source ticks within WINDOW below which nothing is judged (the first messages, a source slower than 20 Hz)."""
LATENESS_MEMORY = 5.0
"""[s of the source's stamps] the time constant with which the lateness, once risen, decays (it rises at once)."""
OUTAGE_TICKS = 10
"""A gap of more than this many ticks is an outage of the source (a node restarted, a stale input: the stage holds
its posture for those, loop.BalanceStage.hold), not a starved computer: the span judged starts again after it."""


class SkippedTicks:
    """How many of its source's ticks a node did not handle: the stamps of the messages it took, against the source's
    period. A node that falls behind takes the newest message and skips those that came meanwhile (its inputs keep
    one); a gap of k periods is k − 1 ticks skipped. Skipping only lengthens gaps, so the period is the gaps' 10th
    percentile over the last ``window`` (a node that skips most ticks for that long moves it; stamps jittered by up
    to a quarter of a period do not count as skips). Counted since the last :meth:`report`."""

    RENEW = 50  # gaps between two estimates of the period: one percentile per RENEW messages, not one per message

    def __init__(self, window=200):
        self.gaps = deque(maxlen=window)
        self.period = None        # the source's [s], from the gaps (the first after 10)
        self.last = None          # the last stamp taken [s]
        self.taken = 0            # since the last report
        self.skipped = 0
        self._since_renewal = 0

    def take(self, stamp):
        """A message stamped ``stamp`` [s] was handled; the source's ticks skipped since the one before (0 until the
        period is known, and when the stamp is not after the last)."""
        skipped = 0
        if self.last is not None and stamp > self.last:
            gap = stamp - self.last
            self.gaps.append(gap)
            self._since_renewal += 1
            if self._since_renewal >= (self.RENEW if self.period else 10):
                self.period, self._since_renewal = float(np.percentile(self.gaps, 10.0)), 0
            if self.period:
                skipped = max(0, round(gap / self.period) - 1)
        self.last = stamp
        self.taken += 1
        self.skipped += skipped
        return skipped

    def report(self):
        """(the fraction of the source's ticks skipped since the last report, the ticks it had); starts anew."""
        ticks = self.taken + self.skipped
        fraction = self.skipped / ticks if ticks else 0.0
        self.taken = self.skipped = 0
        return fraction, ticks


class Starvation:
    """Whether a stage is starved: more than ``threshold`` of its source's ticks skipped over the last WINDOW of their
    stamps, while it computes on fewer than ``rate`` of them a second [Hz]; it stays starved until the fraction is back
    under half the threshold or its rate above 1.25 ``rate`` (a machine on the edge does not flicker between the
    two)."""

    def __init__(self, threshold=STARVED, rate=STARVED_RATE):
        self.threshold, self.rate = threshold, rate
        self.ticks = SkippedTicks()
        self.recent = deque()   # (stamp [s], ticks skipped before it) within WINDOW of the last
        self.skipped = 0        # their sum
        self.starved = False
        self.lateness = 0.0     # the fraction skipped while slower than 1.25 ``rate``, its recent peak held

    @property
    def fraction(self):
        """The fraction of the source's ticks skipped within the span judged."""
        ticks = len(self.recent) + self.skipped
        return self.skipped / ticks if ticks else 0.0

    @property
    def taken_rate(self):
        """The states computed on per second of their stamps within the span judged [Hz] (inf: too few to say)."""
        span = self.recent[-1][0] - self.recent[0][0] if self.recent else 0.0
        return (len(self.recent) - 1) / span if span > 0.0 else float("inf")

    @property
    def computed_share(self):
        """The share of its source's ticks the stage computes on, as its gains see it, in [0, 1]: 1 while the recent
        peak skipped (:attr:`lateness`) stays within FEW_SKIPPED, then in proportion to the ticks computed."""
        return min(1.0, (1.0 - self.lateness) / (1.0 - FEW_SKIPPED))

    def take(self, stamp):
        """The stage computed on a state stamped ``stamp`` [s]; whether it is starved now."""
        skipped = self.ticks.take(stamp)
        if skipped > OUTAGE_TICKS or (self.recent and stamp < self.recent[-1][0]):  # an outage, a clock set back
            self.recent.clear()
            self.skipped = skipped = 0
        self.recent.append((stamp, skipped))
        self.skipped += skipped
        while self.recent[0][0] < stamp - WINDOW:
            self.skipped -= self.recent.popleft()[1]
        previous = self.recent[-2][0] if len(self.recent) > 1 else stamp
        self.lateness *= math.exp((previous - stamp) / LATENESS_MEMORY)
        if len(self.recent) + self.skipped < MIN_TICKS:
            self.starved = False
            return False
        fraction, taken_rate = self.fraction, self.taken_rate
        slow = taken_rate < 1.25 * self.rate
        if slow:
            self.lateness = max(self.lateness, fraction)
        if self.starved:
            self.starved = fraction >= 0.5 * self.threshold and slow
        else:
            self.starved = fraction > self.threshold and taken_rate < self.rate
        return self.starved
