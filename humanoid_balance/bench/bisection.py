"""The largest impulse a robot recovers from, found by bisection (experiments 1, 9, 11 and 12)."""

__all__ = ["largest_recovered"]


def largest_recovered(trial, recovered, low, high, tolerance):
    """Bisection on the impulse [N·s] between ``low`` (taken as recovered) and ``high`` (taken as not), to
    ``tolerance``: each middle is tried, ``trial(impulse)``, and judged, ``recovered(outcome)``. The largest impulse
    found recovered and the outcome tried at it (None: ``low``, untried)."""
    best = None
    while high - low > tolerance:
        middle = 0.5 * (low + high)
        outcome = trial(middle)
        if recovered(outcome):
            low, best = middle, outcome
        else:
            high = middle
    return low, best
