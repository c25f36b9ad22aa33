"""One exception root for the package: every exception class humanoid_balance defines derives from
HumanoidBalanceError, found by importing every module of the package; the ones callers catch as ValueError still are."""
import importlib
import inspect
import pkgutil

import humanoid_balance
from humanoid_balance.errors import HumanoidBalanceError


def defined_exceptions():
    """Every exception class a module of humanoid_balance defines: {'module.Name': class}."""
    found = {}
    for module in pkgutil.walk_packages(humanoid_balance.__path__, "humanoid_balance."):
        namespace = vars(importlib.import_module(module.name))
        found.update({f"{module.name}.{name}": value for name, value in namespace.items()
                      if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.name})
    return found


def test_every_exception_of_the_package_derives_from_the_root():
    exceptions = defined_exceptions()
    assert len(exceptions) >= 15, sorted(exceptions)  # the walk found them (the model's, the control's, the nodes')
    outside = sorted(name for name, exception in exceptions.items()
                     if exception is not HumanoidBalanceError and not issubclass(exception, HumanoidBalanceError))
    assert not outside, f"not derived from HumanoidBalanceError: {outside}"


def test_bad_values_are_still_value_errors():
    """Callers catch these as ValueError (a node's parameter, a limb's trajectory or pose, a mesh)."""
    exceptions = {name.rsplit(".", 1)[1]: exception for name, exception in defined_exceptions().items()}
    for name in ("GainError", "Unfollowable", "OutOfReach", "MeshConversionError"):
        assert issubclass(exceptions[name], ValueError), name
