"""Filters that prune weak items; each is one module behind ``ItemFilter``."""

from kgsynth.filters.answer_leak import AnswerLeakFilter
from kgsynth.filters.answer_stated import AnswerStatedFilter
from kgsynth.filters.attribution import AttributionFilter
from kgsynth.filters.base import CascadeResult, DatasetFilter, ItemFilter, Rejection, apply_filters
from kgsynth.filters.closed_book import ClosedBookFilter
from kgsynth.filters.entity_match import EntityMatchFilter
from kgsynth.filters.exact_duplicate import ExactDuplicateFilter
from kgsynth.filters.judge import JudgeFilter
from kgsynth.filters.leakage import RuleLeakageFilter
from kgsynth.filters.near_duplicate import NearDuplicateFilter
from kgsynth.filters.structure import StructureFilter

__all__ = [
    "AnswerLeakFilter", "AnswerStatedFilter", "AttributionFilter", "CascadeResult", "ClosedBookFilter", "DatasetFilter", "EntityMatchFilter",
    "ExactDuplicateFilter", "ItemFilter", "JudgeFilter", "NearDuplicateFilter", "Rejection", "RuleLeakageFilter",
    "StructureFilter", "apply_filters",
]
