"""Rule leakage: the dialogue must not state the semantic rule.

Looks for the rule's numbers (rates as percentages and fractions, constant thresholds,
day windows, bracket bounds), its label and statement, and percentage wording. A rule
number that is the value of one of the item's own facts is not a leak: it is the input
on the rule's edge (an engine of exactly 100 hp, a claim filed on day 30) that tests ">"
against ">=". 0 and 1 are not markers (a 100% rate is "1").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal

from kgsynth.filters.base import ItemFilter
from kgsynth.formats.answers import normalize_text, number_pattern, numbers_in
from kgsynth.kg.vocab import Rule
from kgsynth.synth.dialogues.item import Item
from kgsynth.synth.scenarios.rules import rule_numbers

_PERCENT_WORDS = re.compile(r"%|\bper ?cent|\bпроцент")  # searched in the casefolded text


class RuleLeakageFilter(ItemFilter):
    name = "rule_leakage"

    def __init__(self, rules: Mapping[str, Rule]):
        self.numbers = {iri: rule_numbers(rule) for iri, rule in rules.items()}
        # per rule and language: (label or statement, its normalised form)
        self.phrases = {iri: {lang: [(p, normalize_text(p)) for p in (rule.labels.get(lang), rule.statements.get(lang)) if p and normalize_text(p)]
                              for lang in {*rule.labels, *rule.statements}}
                        for iri, rule in rules.items()}
        # per rule: each of its numbers with the pattern its writings match
        self.patterns = {iri: [(n, number_pattern(n)) for n in ns] for iri, ns in self.numbers.items()}

    def reason(self, item: Item) -> str | None:
        iri = item.metadata.rule_iri
        if iri is None:
            return None
        text = item.transcript
        leaked = self._leaked_numbers(item, iri, text)
        if leaked:
            return f"the dialogue contains the rule's number {leaked[0]:f}"
        folded = text.casefold().replace("ё", "е")  # as normalize_text does to the phrase
        # the substring test first: the regex scan costs 20x more, and most dialogues have neither
        if ("%" in folded or "cent" in folded or "процент" in folded) and _PERCENT_WORDS.search(folded):
            return "the dialogue talks about percentages"
        for phrase, normalized in self.phrases[iri].get(item.language, ()):
            if normalized in folded:
                return f"the dialogue names the rule: {phrase!r}"
        return None

    def _leaked_numbers(self, item: Item, iri: str, text: str) -> list[Decimal]:
        """The rule's numbers that ``text`` states and the item's facts do not, smallest first.
        The number scan, the dearest step, runs only when a number's pattern matches and it
        is no fact's value."""
        matched = {n for n, pattern in self.patterns[iri] if pattern.search(text)}
        if not matched:
            return []
        unexplained = matched - _fact_numbers(item)
        if not unexplained:
            return []
        said = {n.normalize() for n in numbers_in(text)}
        return sorted(said & unexplained)


def _fact_numbers(item: Item) -> set[Decimal]:
    """The numbers of the item's facts as the dialogue states them (final values)."""
    return {n.normalize() for value in item.metadata.fact_values for n in numbers_in(value)}
