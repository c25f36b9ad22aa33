"""The references the balance did not grant as asked, as /diagnostics and the log say it (the core's typed
:class:`~humanoid_balance.control.reference_governor.Limitation` records, turned into text here, at the edge).

Each limitation is counted when it begins, shown while it lasts (and in the report after a short one) with the value
asked and the value granted — for an approach, the value granted and where the reference is now on its way —, and
logged at a limited rate; refused requests (a jump, a mode change) likewise.
"""
from collections import Counter

__all__ = ["Limitations", "describe", "describe_values"]


def describe_values(values):
    """(x, y, z) as '(0.500, 0.000, 0.800)'; a single value bare; huge ones in exponent form."""
    text = [f"{v:.3g}" if abs(v) >= 1e4 else f"{v:.3f}" for v in values]
    return text[0] if len(text) == 1 else f"({', '.join(text)})"


def describe(limitation):
    """'<reference> <reason>: asked …, granted …', or for an approach 'granted …, on its way there, now at …'."""
    if limitation.current:
        return (f"{limitation.reference} {limitation.reason}: granted {describe_values(limitation.granted)}, on its "
                f"way there, now at {describe_values(limitation.current)}")
    return (f"{limitation.reference} {limitation.reason}: asked {describe_values(limitation.requested)}, granted "
            f"{describe_values(limitation.granted)}")


class Limitations:
    """What a node reports of its core's limitations; ``log``: a ThrottledLog."""

    def __init__(self, log):
        self.log = log
        self.current = {}        # (reference, reason) → the Limitation of the last update
        self.seen = {}           # ... and of every update since the last report
        self.refusals = {}       # request → why it was refused, since the last report
        self.counts = Counter()  # (reference, reason) → limitations begun; (request, "refused") → refusals

    def update(self, limitations):
        """The limitations of one update of the core."""
        current = {(limitation.reference, limitation.reason): limitation for limitation in limitations}
        for key, limitation in current.items():
            if key not in self.current:
                self.counts[key] += 1
                self.log.warning(" ".join(key), f"limited: {describe(limitation)}")
            self.seen[key] = limitation
        self.current = current

    def refused(self, request, reason):
        self.counts[(request, "refused")] += 1
        self.refusals[request] = reason
        self.log.warning(f"{request} refused", f"{request} refused: {reason}")

    def active(self):
        """Whether anything was limited or refused since the last report."""
        return bool(self.seen or self.refusals)

    def summary(self):
        """One line: each limitation since the last report, then each refusal."""
        return "; ".join([f"limited: {describe(limitation)}" for limitation in self.seen.values()]
                         + [f"{request} refused: {reason}" for request, reason in self.refusals.items()])

    def figures(self):
        """Diagnostics values: how often each limitation began and each request was refused."""
        return {f"{'refused' if reason == 'refused' else 'limited'}: {reference}"
                + ("" if reason == "refused" else f": {reason}"): count
                for (reference, reason), count in sorted(self.counts.items())}

    def next_report(self):
        """Start a new report period: what still lasts stays shown."""
        self.seen = dict(self.current)
        self.refusals = {}
