"""Streaming Butterworth low-pass (Kangaroo paper VI-B: 2nd order, 5 Hz on the estimated wrenches)."""
import numpy as np
from scipy import signal

__all__ = ["ButterworthLowPass"]


class ButterworthLowPass:
    """Per-channel streaming low-pass designed with ``scipy.signal.butter`` (second-order sections).

    Samples arrive one by one, so each runs the sections' transposed direct-form II recursion, the one
    ``scipy.signal.sosfilt`` runs, on every channel at once: sosfilt's per-call argument handling would cost more
    than a sample's arithmetic. The state has sosfilt's ``zi`` layout (sections, 2, channels).

    Args:
        cutoff: cutoff frequency [Hz] (−3 dB).
        sample_rate: rate at which :meth:`update` is called [Hz].
        channels: number of independent signals filtered together.
        order: filter order (2 in the paper).
    """

    def __init__(self, cutoff, sample_rate, channels, order=2):
        if not 0.0 < cutoff < sample_rate / 2.0:
            raise ValueError(f"cutoff {cutoff} Hz must lie in (0, {sample_rate / 2.0}) Hz, below Nyquist")
        self.sos = signal.butter(order, cutoff, btype="low", fs=sample_rate, output="sos")
        self.steady = signal.sosfilt_zi(self.sos)[:, :, None]  # (sections, 2, 1): state after a unit input forever
        self.channels = channels
        self.state = None

    def reset(self):
        self.state = None

    def update(self, sample, restart=None):
        """Filter one sample (channels,); the first sample, and the channels flagged in ``restart`` (a boolean mask),
        start in steady state at their value, without a transient."""
        value = np.asarray(sample, dtype=float).reshape(self.channels)
        if self.state is None:
            self.state = self.steady * value  # (sections, 2, channels)
        elif restart is not None and restart.any():
            self.state[:, :, restart] = self.steady * value[restart]
        for (b0, b1, b2, _, a1, a2), z in zip(self.sos, self.state):
            output = b0 * value + z[0]
            z[0] = b1 * value - a1 * output + z[1]
            z[1] = b2 * value - a2 * output
            value = output
        return value
