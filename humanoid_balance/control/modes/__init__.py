"""The balance modes, one :class:`~humanoid_balance.control.balance_controller.BalanceController` module each (its
controller and its ``Gains``); which ones there are, and what each needs of the drives, is
:data:`humanoid_balance.control.balancer.BALANCE_MODES`."""
