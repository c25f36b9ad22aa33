"""Streaming Butterworth low-pass (Kangaroo paper VI-B: 2nd order, 5 Hz on the estimated wrenches)."""
import numpy as np
from scipy import signal

__all__ = ["ButterworthLowPass"]


class ButterworthLowPass:
    """Per-channel streaming low-pass designed with ``scipy.signal.butter`` (second-order sections).

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
        self.channels = channels
        self.state = None

    def reset(self):
        self.state = None

    def update(self, sample):
        """Filter one sample (channels,); the first sample initialises the state at steady state."""
        sample = np.asarray(sample, dtype=float).reshape(1, self.channels)
        if self.state is None:
            self.state = signal.sosfilt_zi(self.sos)[:, :, None] * sample[0]  # (sections, 2, channels)
        output, self.state = signal.sosfilt(self.sos, sample, axis=0, zi=self.state)
        return output[0]
