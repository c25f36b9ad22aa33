"""The balance loop: the suite's four stages in order as one pure object (:class:`BalanceLoop`), and the stages
the nodes share with it (:class:`BalanceStage`, :class:`MappingStage`; the estimators are their own stages)."""
from humanoid_balance.loop.balance_loop import BalanceLoop, Cycle, Observation, balance_feet, limb_sections
from humanoid_balance.loop.balance_stage import MAX_DT, BalanceStage, NoContact, Starved
from humanoid_balance.loop.mapping_stage import Mapped, MappingStage

__all__ = ["BalanceLoop", "BalanceStage", "Cycle", "MappingStage", "Mapped", "MAX_DT", "NoContact", "Observation",
           "Starved",
           "balance_feet", "limb_sections"]
