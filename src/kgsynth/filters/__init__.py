"""Filters that prune weak items; each is one module behind ``ItemFilter``."""

from kgsynth.filters.answer_stated import AnswerStatedFilter
from kgsynth.filters.base import ItemFilter, Rejection, apply_filters
from kgsynth.filters.closed_book import ClosedBookFilter
from kgsynth.filters.leakage import RuleLeakageFilter, rule_numbers
from kgsynth.filters.structure import StructureFilter

__all__ = ["AnswerStatedFilter", "ClosedBookFilter", "ItemFilter", "Rejection", "RuleLeakageFilter", "StructureFilter", "apply_filters", "rule_numbers"]
