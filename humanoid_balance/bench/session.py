"""What the runs of one experiment share: where they show their progress and where they are recorded.

:func:`running` opens one around an experiment, which hands it (``run(smoke, robot, session)``) to its closed loops
(:class:`ClosedLoop`) and its runs through the nodes (experiment 9). Without one (a test calling an experiment
directly), nothing is shown or recorded.
"""
import contextlib
import re
from pathlib import Path

from humanoid_balance.progress import Progress

__all__ = ["Session", "running"]


class Session:
    """One experiment's runs.

    Args:
        experiment: its name (EXPERIMENTS key).
        progress: a :class:`Progress` the runs advance (default: shown nowhere).
        record: a folder to record each simulated run into, one rosbag2 directory per run (None: no recording).
    """

    def __init__(self, experiment="", progress=None, record=None):
        self.experiment, self.progress = experiment, progress or Progress(stream=None)
        self.record = Path(record) if record is not None else None
        self.runs = 0          # runs recorded so far
        self.recordings = []   # recordings to close at the end (see :meth:`opened`)

    def recording_path(self, run):
        """The rosbag2 directory of the next run (``run``: what it is, e.g. its mode), or None when not recording."""
        if self.record is None:
            return None
        self.runs += 1
        return self.record / re.sub(r"[^\w.+-]+", "_", f"{self.experiment}_{self.runs:02d}_{run}")

    def opened(self, recording):
        """Keep ``recording`` (anything with ``close()``) to close at the end of the experiment; returns it."""
        self.recordings.append(recording)
        return recording


@contextlib.contextmanager
def running(experiment, progress=None, record=None):
    """A :class:`Session` for an experiment's runs; its recordings are closed at the end, whatever happens."""
    session = Session(experiment, progress, record)
    try:
        yield session
    finally:
        for recording in session.recordings:
            recording.close()
        session.progress.close()
