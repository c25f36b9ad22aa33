"""Streaming Butterworth low-pass (Kangaroo paper VI-B: 2nd order, 5 Hz on the estimated wrenches)."""
import functools
import math

import numpy as np

__all__ = ["ButterworthLowPass"]

RATE_SMOOTHING = 0.1  # weight of each new sample interval in the running interval (about ten samples)
RATE_STEP = 1.01      # a followed rate is designed for on a grid of 1 % steps, so that each design is made once


@functools.lru_cache(maxsize=128)
def _butterworth_sections(order, cutoff, sample_rate):
    """scipy.signal.butter's second-order sections, as floats (b0, b1, b2, 1, a1, a2) per section, and the state
    after a unit input forever (sections, 2, 1), both read-only: shared by the filters that ask for them."""
    from scipy import signal  # here, not at the top: importing it takes 0.4 s, which every node process paid at
    # start, though only the contact estimation designs filters
    sos = signal.butter(order, cutoff, btype="low", fs=sample_rate, output="sos")
    steady = signal.sosfilt_zi(sos)[:, :, None]
    for array in (sos, steady):
        array.setflags(write=False)
    return sos, tuple(tuple(float(c) for c in section) for section in sos), steady


class ButterworthLowPass:
    """Per-channel streaming low-pass designed with ``scipy.signal.butter`` (second-order sections).

    Samples arrive one by one, so each runs the sections' transposed direct-form II recursion, the one
    ``scipy.signal.sosfilt`` runs, on every channel at once: sosfilt's per-call argument handling would cost more
    than a sample's arithmetic. The state has sosfilt's ``zi`` layout (sections, 2, channels).

    A digital filter's cutoff is a fraction of its sample rate: designed for 500 Hz and fed at 150 Hz (a node that
    cannot keep up with its input), its cutoff falls to a third and its lag triples. Given the samples' times,
    the filter follows the rate they really come at: it is designed again when the running rate strays more than
    ``rate_tolerance`` from the one it was designed for, and goes on from its last output without a jump. The
    designs are kept, for rates on a 1 % grid: a loaded machine's rate that wanders back and forth costs a look-up.

    Args:
        cutoff: cutoff frequency [Hz] (−3 dB).
        sample_rate: rate at which :meth:`update` is called, or is expected to be until the times say [Hz].
        channels: number of independent signals filtered together.
        order: filter order (2 in the paper).
        rate_tolerance: relative change of the running sample rate that makes the filter follow it.
    """

    def __init__(self, cutoff, sample_rate, channels, order=2, rate_tolerance=0.2):
        if not 0.0 < cutoff < sample_rate / 2.0:
            raise ValueError(f"cutoff {cutoff} Hz must lie in (0, {sample_rate / 2.0}) Hz, below Nyquist")
        self.cutoff, self.order, self.channels, self.rate_tolerance = cutoff, order, channels, rate_tolerance
        self._design(sample_rate)
        self.state = None
        self.output = None     # the last output (channels,)
        self.last_time = None  # time of the last sample [s]
        self.interval = None   # running sample interval [s]

    def _design(self, sample_rate):
        self.sample_rate = sample_rate
        self.sos, self.sections, self.steady = _butterworth_sections(self.order, self.cutoff, sample_rate)

    def reset(self):
        self.state = self.output = self.last_time = self.interval = None

    def _follow_rate(self, time):
        """Design the filter again for the running sample rate when it has strayed (see the class)."""
        if self.last_time is not None and 0.0 < time - self.last_time < 1.0:
            interval = time - self.last_time
            self.interval = interval if self.interval is None else \
                self.interval + RATE_SMOOTHING * (interval - self.interval)
            rate = RATE_STEP ** round(math.log(1.0 / self.interval, RATE_STEP))  # on the grid, then checked: a
            # running rate just above twice the cutoff once rounded below it, and the design raised on every sample
            if abs(rate - self.sample_rate) > self.rate_tolerance * self.sample_rate and self.cutoff < rate / 2.0:
                self._design(rate)
                if self.output is not None:
                    self.state = self.steady * self.output
        self.last_time = time

    def update(self, sample, restart=None, time=None):
        """Filter one sample (channels,) taken at ``time`` [s] (None: at ``sample_rate``); the first sample, and the
        channels flagged in ``restart`` (a boolean mask), start in steady state at their value, without a
        transient."""
        if time is not None:
            self._follow_rate(time)
        value = np.asarray(sample, dtype=float).reshape(self.channels)
        if self.state is None:
            self.state = self.steady * value  # (sections, 2, channels)
        elif restart is not None and restart.any():
            self.state[:, :, restart] = self.steady * value[restart]
        for (b0, b1, b2, _, a1, a2), z in zip(self.sections, self.state):
            output = b0 * value + z[0]
            z[0] = b1 * value - a1 * output + z[1]
            z[1] = b2 * value - a2 * output
            value = output
        self.output = value
        return value
