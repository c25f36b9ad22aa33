"""Progress of a long simulated run: event lines, and the simulated time against the wall clock.

On a terminal, one bar redrawn in place (at most ten times a second): the simulated time (of ``total`` when
known), the real-time factor, the time left and a short status. Elsewhere (a log, CI) plain lines, one every
``interval`` of simulated time, so that the output stays readable.
"""
import shutil
import sys
import time

__all__ = ["Progress"]

REDRAW_PERIOD = 0.1   # [s of wall time]
BAR_WIDTH = 24        # characters


class Progress:
    """Where a run reports.

    Args:
        total: the simulated time the run will reach [s], if known.
        label: put before the bar and the lines (e.g. the experiment's name).
        stream: where to write (default stdout); None: nowhere.
        events: print :meth:`line`'s events (False: only the progress).
        interval: simulated time between two plain lines off a terminal [s].
    """

    def __init__(self, total=None, label="", stream=sys.stdout, events=True, interval=1.0):
        self.total, self.label, self.stream, self.events, self.interval = total, label, stream, events, interval
        self.terminal = stream is not None and stream.isatty()
        self.started = None    # wall time of the first update [s], monotonic
        self.simulated = 0.0
        self.earlier = 0.0     # simulated time of the runs before this one [s]
        self.next_line = interval
        self.next_draw = 0.0
        self.drawn = False

    @property
    def real_time_factor(self):
        """Simulated time per wall time since the first update (the simulation's start, not its set-up)."""
        return self.simulated / max(time.monotonic() - self.started, 1e-9) if self.started is not None else 0.0

    def line(self, text):
        """An event, on a line of its own."""
        if self.stream is None or not self.events:
            return
        self._erase()
        print(text, file=self.stream, flush=True)
        self.next_draw = 0.0

    def begin_run(self):
        """A new run starts from simulated time 0: the progress counts on from the runs before it."""
        self.earlier = self.simulated

    def update(self, simulated, status=lambda: ""):
        """The simulated time the run reached [s]; ``status()`` gives a short text (called only when shown)."""
        simulated = self.simulated = self.earlier + simulated
        if self.started is None:
            self.started = time.monotonic()
        if self.stream is None:
            return
        if self.terminal:
            now = time.monotonic()
            if now >= self.next_draw:
                self.next_draw = now + REDRAW_PERIOD
                self._draw(status())
        elif simulated >= self.next_line:
            self.next_line += self.interval * (1 + int((simulated - self.next_line) // self.interval))
            text = status()
            print(f"{self.label}[{simulated:5.1f} s] {text}{', ' if text else ''}real-time factor "
                  f"{self.real_time_factor:.2f}", file=self.stream, flush=True)

    def close(self):
        """Leave the terminal's bar as it is and go to a new line."""
        if self.drawn:
            print(file=self.stream, flush=True)
            self.drawn = False

    def _draw(self, status):
        factor = self.real_time_factor
        if self.total:
            done = min(self.simulated / self.total, 1.0)
            filled = int(round(done * BAR_WIDTH))
            left = f", {(self.total - self.simulated) / factor:.0f} s left" if factor > 0 else ""
            text = (f"{self.label}{self.simulated:5.1f}/{self.total:g} s |{'█' * filled}{'·' * (BAR_WIDTH - filled)}| "
                    f"real-time factor {factor:.2f}{left}")
        else:
            text = f"{self.label}{self.simulated:6.1f} s simulated, real-time factor {factor:.2f}"
        text += f" · {status}" if status else ""
        width = shutil.get_terminal_size().columns - 1
        self.stream.write("\r\x1b[K" + text[:width])
        self.stream.flush()
        self.drawn = True

    def _erase(self):
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.drawn = False
