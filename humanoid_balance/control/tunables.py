"""Tunables: the fields of a configuration dataclass a user sets, each with its description and unit as field
metadata (:func:`tunable`). They are the schema the centroidal_balancer node declares its parameters from
(:func:`tunables`: the shared ones of BalancerConfig, and each mode's gains as ``<mode>.<field>``), so that a
description is written once, next to the value it describes. No ROS here.
"""
from dataclasses import field, fields
from typing import NamedTuple

__all__ = ["Tunable", "tunable", "tunables"]


def tunable(default, description, unit=None):
    """A dataclass field with ``default`` (a number, a bool or a tuple of numbers), its ``description`` and ``unit``
    (None: none) as metadata."""
    return field(default=default, metadata={"description": description, "unit": unit})


class Tunable(NamedTuple):
    """A tunable field of a configuration dataclass."""

    name: str
    default: object
    description: str
    unit: str = None

    @property
    def text(self):
        """The description with its unit in brackets (the parameters' convention)."""
        return f"{self.description} [{self.unit}]" if self.unit else self.description

    @property
    def parameter_default(self):
        """The default as a ROS parameter value: a tuple as a list."""
        return list(self.default) if isinstance(self.default, tuple) else self.default

    def read(self, value, name=None):
        """``value`` (e.g. a parameter's) as the field's type; ValueError naming ``name`` (default: the field's)
        when it has not as many numbers as the default."""
        if isinstance(self.default, tuple):
            values = tuple(float(x) for x in value)
            if len(values) != len(self.default):
                raise ValueError(f"parameter '{name or self.name}' must have {len(self.default)} values, "
                                 f"got {len(values)}")
            return values
        return type(self.default)(value)


def tunables(config_class):
    """The :class:`Tunable` fields of the dataclass ``config_class`` (those made by :func:`tunable`), in order."""
    return tuple(Tunable(f.name, f.default, f.metadata["description"], f.metadata["unit"])
                 for f in fields(config_class) if "description" in f.metadata)
