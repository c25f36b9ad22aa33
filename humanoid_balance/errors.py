"""The root of the package's exceptions: ``except HumanoidBalanceError`` catches whatever humanoid_balance raises on
purpose (a bad model, message, gain, request). Each exception keeps the built-in base its callers catch it by too
(ValueError for a bad value)."""

__all__ = ["HumanoidBalanceError"]


class HumanoidBalanceError(Exception):
    """Base of every exception humanoid_balance defines."""
