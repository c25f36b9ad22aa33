"""How fast the nodes run: the cost of each callback by stage, update rates, and a display-rate throttle."""
import time
from collections import deque

import numpy as np

__all__ = ["CallbackTiming", "RateMeter", "DisplayRate"]

STAGES = ("take/convert", "core", "publish")


class CallbackTiming:
    """Wall time of a node's main callback by stage, over the last ``window`` messages [µs]; by default three
    stages: ``take/convert`` (checking the taken message and reading it into arrays), ``core`` (the algorithm) and
    ``publish`` (filling and publishing the outputs). rclpy takes and deserialises the message before the callback
    runs; ``humanoid-balance bench dds`` measures each process's whole CPU time per message, that included.

    Use: ``timing.begin()`` first in the callback, then ``timing.lap()`` after each stage.
    """

    def __init__(self, stages=STAGES, window=2000):
        self.stages = stages
        self.samples = np.zeros((window, len(stages)))
        self.count = 0
        self._row = None
        self._lap = 0
        self._last = 0.0

    def begin(self):
        self._last = time.perf_counter()
        self._row = self.samples[self.count % len(self.samples)]
        self._lap = 0
        return self

    def lap(self):
        now = time.perf_counter()
        self._row[self._lap] = (now - self._last) * 1e6
        self._last = now
        self._lap += 1
        if self._lap == len(self.stages):
            self.count += 1

    def figures(self):
        """Median and p99 of each stage and of the callback's total, for /diagnostics."""
        rows = self.samples[:min(self.count, len(self.samples))]
        if not len(rows):
            return {"callback time": "no messages yet"}
        columns = {**{stage: rows[:, k] for k, stage in enumerate(self.stages)}, "callback total": rows.sum(axis=1)}
        figures = {}
        for stage, values in columns.items():
            median, p99 = np.percentile(values, (50, 99))
            figures[f"{stage} median / p99 [µs]"] = f"{median:.0f} / {p99:.0f}"
        return figures

    def totals(self):
        """The callback totals of the window [µs] (every stage)."""
        return self.samples[:min(self.count, len(self.samples))].sum(axis=1)


class RateMeter:
    """Update rate over a sliding window [Hz]."""

    def __init__(self, window=2.0):
        self.window = window
        self.times = deque()

    def tick(self, now=None):
        now = time.monotonic() if now is None else now
        self.times.append(now)
        while self.times and self.times[0] < now - self.window:
            self.times.popleft()

    @property
    def hz(self):
        if len(self.times) < 2 or self.times[-1] == self.times[0]:
            return 0.0
        return (len(self.times) - 1) / (self.times[-1] - self.times[0])


class DisplayRate:
    """Lets display-only outputs (markers, polygons, visual points) through at most ``rate`` times per second of the
    messages' own time (simulated time in a simulation); ``rate`` ≤ 0 lets every one through."""

    def __init__(self, rate):
        self.period = 1.0 / rate if rate > 0.0 else 0.0
        self.last = -np.inf

    def due(self, seconds):
        if seconds - self.last >= self.period or seconds < self.last:  # (a clock that jumped back starts over)
            self.last = seconds
            return True
        return False
