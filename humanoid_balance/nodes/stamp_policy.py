"""The stamp policy every node applies to each input topic, on plain numbers (stamps and the node's clock in
seconds), so that it is tested without a node:

- only the stamp of a message the node accepted counts: a message rejected for its content never moves the
  topic's clock (:meth:`StampPolicy.check` gives a verdict, :meth:`StampPolicy.adopt` applies it once the message is
  accepted);
- a stamp before the last accepted one is rejected (``stamp_backwards``);
- a stamp more than ``max_lead`` [s] ahead of the node's clock is rejected (``stamp_future``) and not adopted, so
  one far-future stamp cannot make the valid messages after it look old (the check waits for the clock: a node on
  sim time before its first /clock, whose clock reads 0); one ahead within ``max_lead`` is accepted, but the topic's
  clock moves only as far as the node's: a message stamped ahead of when it arrived cannot make the valid ones after
  it look old either (a bad publisher's stamps up to 0.5 s ahead once held a node's real stream back as
  ``stamp_backwards`` until the clock-jump rule followed it), and it is computed with at its arrival
  (:attr:`StampVerdict.time`): a measurement is not taken after it is received (copies of joint_states stamped up
  to 0.5 s ahead once set the state estimator's clock ahead, the true readings after them came with a negative
  time step, its base stopped integrating, and the robot fell);
- ``jump_messages`` out-of-line stamps in a row, of one kind and going forward among themselves, are a jump of the
  source's clock (a restarted driver or simulator, a clock step): accepted, reported once and followed.
"""
from typing import NamedTuple, Optional

from humanoid_balance.nodes.messages import RejectedMessage

__all__ = ["StampPolicy", "StampVerdict", "ClockJump"]


class _Track:
    """One input topic's stamps: the last one accepted, and the run of out-of-line ones since."""

    __slots__ = ("last", "offset", "run", "run_kind", "run_last")

    def __init__(self):
        self.last = None        # last accepted stamp [s]
        self.offset = 0.0       # accepted lead of the source's clock over the node's [s] (a followed jump ahead)
        self.run, self.run_kind, self.run_last = 0, None, None


class ClockJump(NamedTuple):
    """A jump of a source's clock that the policy now follows."""

    topic: str
    ahead: bool                 # ahead of the node's clock (else back before the last accepted stamp)
    to: float                   # the stamp followed [s]
    since: float                # the last accepted stamp, or the node's clock if none [s]
    run: int                    # out-of-line stamps in a row that made it a jump


class StampVerdict(NamedTuple):
    """An in-line stamp (or the one that completes a jump), to adopt if its message is accepted."""

    topic: str
    seconds: float              # the stamp [s]
    now: float                  # the node's clock when it was checked [s]
    time: float                 # the time to compute with: the stamp, at most the node's clock (and the source's
                                # followed lead over it) [s]
    jump: Optional[str] = None  # the out-of-line kind a jump is made of (stamp_future or stamp_backwards)


class StampPolicy:
    """Per-topic stamp checks (see the module)."""

    def __init__(self, max_lead=1.0, jump_messages=10):
        self.max_lead, self.jump_messages = max_lead, jump_messages
        self._tracks = {}

    def check(self, topic, seconds, now):
        """The verdict on ``topic``'s stamp ``seconds`` at the node's clock ``now`` [s]; RejectedMessage if it is out
        of line and not (yet) a jump."""
        track = self._tracks.get(topic)
        if track is None:
            track = self._tracks[topic] = _Track()
        if now > 0.0 and seconds - now - track.offset > self.max_lead:
            kind = "stamp_future"
        elif track.last is not None and seconds < track.last:
            kind = "stamp_backwards"
        else:
            return StampVerdict(topic, seconds, now, self._received(track, seconds, now))
        if track.run_kind == kind and track.run_last is not None and seconds > track.run_last:
            track.run += 1
        else:
            track.run, track.run_kind = 1, kind
        track.run_last = seconds
        if track.run >= self.jump_messages:
            return StampVerdict(topic, seconds, now, seconds, kind)
        if kind == "stamp_future":
            raise RejectedMessage(kind, f"{topic}: stamp {seconds:.6f} s is {seconds - now:.3f} s ahead of the "
                                        f"node's clock (max_stamp_lead {self.max_lead} s)")
        raise RejectedMessage(kind, f"{topic}: stamp {seconds:.6f} s is before {track.last:.6f} s")

    def adopt(self, verdict):
        """The verdict's message was accepted: its stamp is now the topic's; the ClockJump it completes, or None."""
        track = self._tracks[verdict.topic]
        jump = None
        if verdict.jump is not None:
            jump = ClockJump(verdict.topic, verdict.jump == "stamp_future", verdict.seconds,
                             track.last if track.last is not None else verdict.now, track.run)
            if jump.ahead:
                track.offset = verdict.seconds - verdict.now
        track.last, track.run = self._received(track, verdict.seconds, verdict.now), 0
        return jump

    @staticmethod
    def _received(track, seconds, now):
        """``seconds``, no further than the node's clock ``now`` (and the source's followed lead over it) [s]; as it
        is before the first clock (a node on sim time reads 0)."""
        return min(seconds, now + track.offset) if now > 0.0 else seconds
