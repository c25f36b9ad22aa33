"""The mapping stage of the loop: serial-equivalent joint commands → actuator commands (mapping.ActuatorMap), and
what to send when a command cannot be realised: the last safe one. The loop_closure_mapper node and
:class:`~humanoid_balance.loop.BalanceLoop` run this one object. Units: SI.
"""
from typing import NamedTuple, Optional

import numpy as np

from humanoid_balance.model import ClosureError, SingularConfigurationError

__all__ = ["MappingStage", "Mapped"]


class Mapped(NamedTuple):
    """A tick's actuator command."""

    command: Optional[object]  # the ActuatorCommand to send: this tick's, or when refused the last safe one (None:
                               # none yet)
    refused: Optional[str]     # why this tick's could not be realised (None: it could)


class MappingStage:
    """An :class:`~humanoid_balance.mapping.actuator_map.ActuatorMap` that holds the last safe command."""

    def __init__(self, actuator_map):
        self.map = actuator_map
        self.last_safe = None   # the last ActuatorCommand realised
        self.refusals = 0       # commands that could not be realised
        self.clamps = 0         # values clamped to the actuators' limits

    def update(self, position, velocity, effort):
        """The :class:`Mapped` command of output ``position``, ``velocity`` and ``effort``."""
        try:
            command = self.map.update(position, velocity, effort)
        except (ClosureError, SingularConfigurationError) as error:
            self.refusals += 1
            return Mapped(self.last_safe, str(error))
        self.clamps += len(command.clamped)
        self.last_safe = command
        return Mapped(command, None)

    def held(self):
        """The last safe command with zero velocity and zero feed-forward effort (stale inputs: never a stale
        torque); None before one."""
        safe = self.last_safe
        if safe is None:
            return None
        return safe._replace(velocity=np.zeros_like(safe.velocity), effort=np.zeros_like(safe.effort))
