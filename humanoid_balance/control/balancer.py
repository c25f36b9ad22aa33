"""The centroidal balancer's modes, in one place: each mode's controller and what it needs of the robot's drives.

- ``kinematic`` (Choi–Kim, :mod:`~humanoid_balance.control.modes.kinematic`): eq. 24 resolved through the CoM
  Jacobian with embedded motions (eqs. 14–20), position targets for stiff drives.
- ``momentum`` (Garofalo et al., :mod:`~humanoid_balance.control.modes.momentum`): the desired CoM wrench
  (eqs. 38–39) distributed by the QP and mapped to joint torques, through the joint impedance.
- ``viip`` (Sugihara–Nakamura, :mod:`~humanoid_balance.control.modes.viip`): the vertical impedance and the ZMP
  give the COG's strict referential velocity; it jumps. Its position targets are advanced by the drives' deflection
  under load (compliance compensation): a jump is dynamic.

:data:`BALANCE_MODES` is the one list of the modes: a new mode is its module in :mod:`humanoid_balance.control.modes`
(a :class:`BalanceController` subclass naming its ``mode`` and its ``Gains``, a dataclass of tunables) and its line
here; the node declares its gains as parameters, and the CLI, the bench and the tests take it from here.
:func:`balance_controller` builds a mode's controller; :func:`change_mode` builds the next one, which starts from
the measured posture, or refuses while the current mode is doing what the next could not take over (a jump).
The node, the demo, the bench and both launch files read the profiles here
(:func:`humanoid_balance.deployment.mode_parameters`).
"""
from dataclasses import replace
from typing import NamedTuple

from humanoid_balance.control.balance_controller import (BalanceController, BalancerConfig, BalancerState, Foot,
                                                         JointCommand, Refused)
from humanoid_balance.control.modes.kinematic import KinematicBalance
from humanoid_balance.control.modes.momentum import MomentumBalance
from humanoid_balance.control.modes.viip import ViipBalance
from humanoid_balance.control.tunables import tunables

__all__ = ["BALANCE_MODES", "MODES", "STEPPING_MODES", "BalanceMode", "BalanceController", "BalancerConfig",
           "BalancerState", "Foot", "JointCommand", "Refused", "balance_controller", "balance_mode", "change_mode",
           "configured", "parameters"]


class BalanceMode(NamedTuple):
    """A balance mode: its controller and what it needs of the robot."""

    controller: type                       # its BalanceController
    command_interface: str                 # the mapper's: position targets, or the joint impedance (position,
                                           # velocity, feed-forward effort, stiffness, damping) for torques
    compliance_compensation: bool = False  # position targets advanced by the drives' deflection under load
    needs_zmp: bool = False                # without a fresh measured ZMP the posture is held

    @property
    def impedance(self):
        """Whether its commands go through the joint impedance (torque-controlled drives)."""
        return self.command_interface == "impedance"


BALANCE_MODES = {mode.controller.mode: mode for mode in (
    BalanceMode(KinematicBalance, "position", needs_zmp=True),
    BalanceMode(MomentumBalance, "impedance"),
    BalanceMode(ViipBalance, "position", compliance_compensation=True))}
MODES = tuple(BALANCE_MODES)
STEPPING_MODES = tuple(name for name, mode in BALANCE_MODES.items() if mode.controller.steps)
"""The modes that keep the feet flat on the floor and step where a push carries the capture point out of the support
(BalanceController.steps): the ones the demo and the bench push and compare."""


def balance_mode(name, what="mode"):
    """The BalanceMode called ``name``; ValueError naming ``what`` otherwise."""
    if name not in BALANCE_MODES:
        raise ValueError(f"{what} must be one of {', '.join(MODES)}, got '{name}'")
    return BALANCE_MODES[name]


def parameters():
    """parameter name → :class:`~humanoid_balance.control.tunables.Tunable`: the schema of the balancer's tunables,
    BalancerConfig's shared ones by their names and each mode's gains as ``<mode>.<field>``."""
    table = {tunable.name: tunable for tunable in tunables(BalancerConfig)}
    for mode, profile in BALANCE_MODES.items():
        table.update((f"{mode}.{tunable.name}", tunable) for tunable in tunables(profile.controller.Gains))
    return table


def configured(value, **fields):
    """The BalancerConfig of ``fields`` (mode, feet, ...) and of each tunable of :func:`parameters` read by
    ``value(name)``, every mode's gains included; ValueError naming the parameter whose value has not the
    default's length."""
    read = {name: tunable.read(value(name), name) for name, tunable in parameters().items()}
    gains = {mode: profile.controller.Gains(**{tunable.name: read[f"{mode}.{tunable.name}"]
                                               for tunable in tunables(profile.controller.Gains)})
             for mode, profile in BALANCE_MODES.items()}
    return BalancerConfig(**fields, **{tunable.name: read[tunable.name] for tunable in tunables(BalancerConfig)},
                          gains=gains)


def balance_controller(robot, config, extra_sections=()):
    """The BalanceController of ``config.mode`` for ``robot`` (see :class:`BalanceController`); ValueError for no
    mode, or gains (``config.gains``) of no mode or not of the mode's Gains."""
    for name, gains in config.gains.items():
        expected = balance_mode(name, "a mode of the gains").controller.Gains
        if not isinstance(gains, expected):
            raise ValueError(f"the gains of mode '{name}' must be a {expected.__name__}, got {type(gains).__name__}")
    return balance_mode(config.mode).controller(robot, config, extra_sections)


def change_mode(controller, mode):
    """A controller in ``mode`` on the same robot, configuration and limbs: ``controller`` itself in its own mode, else
    a new one, which starts from the measured posture at its first update. Refused while ``controller`` is busy with
    what another mode could not take over (a jump); ValueError for no mode."""
    balance_mode(mode)
    if mode == controller.mode:
        return controller
    if controller.busy:
        raise Refused(f"{controller.busy}: the mode stays '{controller.mode}'")
    return balance_controller(controller.robot, replace(controller.config, mode=mode), controller.sections)
