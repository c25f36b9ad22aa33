"""The package's exception hierarchy for robot models: one base, subclasses carrying what is
needed to debug (the file, the entry, the offending name or number, the residual)."""
from humanoid_balance.errors import HumanoidBalanceError

__all__ = ["ModelError", "ModelFileError", "ClosureError", "SingularConfigurationError"]


class ModelError(HumanoidBalanceError):
    """Base of every error raised while loading or evaluating a robot model."""


class ModelFileError(ModelError):
    """A URDF or loop-closure file is invalid.

    Attributes:
        path: the offending file.
        entry: where in it (``loops[2] 'left_knee_crank'``, ``actuated``...), or ``None``.
        detail: what is wrong, naming the offending name or number.
    """

    def __init__(self, path, entry, detail):
        self.path = str(path)
        self.entry = entry
        self.detail = detail
        where = f"{self.path}: {entry}" if entry else self.path
        super().__init__(f"{where}: {detail}")


class ClosureError(ModelError):
    """The loop-closure equations could not be solved to tolerance.

    Attributes:
        residual_norm: ‖e_l‖ when the solver stopped (m and rad mixed, as in the paper).
        worst_loop: name of the loop with the largest residual.
        iterations: Newton iterations spent.
    """

    def __init__(self, message, residual_norm, worst_loop, iterations):
        self.residual_norm = residual_norm
        self.worst_loop = worst_loop
        self.iterations = iterations
        super().__init__(message)


class SingularConfigurationError(ModelError):
    """J_l,u (or P·J_m) is too ill-conditioned for its inverse to be trusted.

    Attributes:
        condition_number: 2-norm condition number found.
        limit: the largest condition number accepted.
    """

    def __init__(self, message, condition_number, limit):
        self.condition_number = condition_number
        self.limit = limit
        super().__init__(message)
