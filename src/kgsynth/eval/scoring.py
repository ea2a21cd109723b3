"""Strict scoring of one answer, token-F1, the fact probe's check and the error source.

Correctness is the answer-format checker's (``kgsynth.formats.answers.check_answer``, the
one implementation): syntactically in the format AND the value matches the gold.

Error source of a wrong answer, from measurements rather than guesses:

- ``format``: the answer is not in the asked format (whatever its value);
- ``fact_extraction``: a fact probe failed: asked only for an episodic value of the
  dialogue (its turn quoted with the value blanked out), the model did not give it;
- ``rule_knowledge``: every fact was extracted, but asked closed-book to state the rule
  that answers the question, the model gives a statement without the rule's numbers (only
  when the model is not given the rule);
- ``rule_application``: every fact was extracted, but the oracle's value is wrong too
  (the question asked on the fact turns alone): the model cannot apply the rule even to
  clean facts (``reasoning`` for retrieval items, which have no rule);
- ``combination``: every probe passes: the model gets each part right alone and the
  whole wrong, in the full dialogue;
- ``unprobed``: a probe is missing (probes off, a fact value that could not be blanked,
  a probe or oracle request that failed), and none that ran failed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

from rapidfuzz import fuzz

from kgsynth.eval.results import AnswerRecord
from kgsynth.formats.answers import AnswerCheck, AnswerFormat, check_answer, dates_in, normalize_text, numbers_in
from kgsynth.synth.dialogues.dialogue import Turn
from kgsynth.synth.dialogues.item import Item
from kgsynth.synth.scenarios.scenario import NO_RULE

ERROR_SOURCES = ("format", "fact_extraction", "rule_knowledge", "rule_application", "reasoning", "combination", "unprobed")
TEXT_FORMATS = frozenset({AnswerFormat.one_token, AnswerFormat.short_text, AnswerFormat.set})
_TOKEN = re.compile(r"[^\W_]+")
BLANK = "___"  # stands for the value a fact probe asks for


def score(item: Item, answer: str | None) -> AnswerCheck:
    return check_answer(answer or "", item.answer_format, item.gold, item.constraints, aliases=item.gold_aliases)


def token_f1(answer: str | None, gold: str | Sequence[str]) -> float:
    """SQuAD-style token F1 between the normalised answer and gold (a set gold's items joined)."""
    gold_text = gold if isinstance(gold, str) else " ".join(gold)
    predicted = _TOKEN.findall(normalize_text(answer or ""))
    wanted = _TOKEN.findall(normalize_text(gold_text))
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if not predicted or not wanted or not common:
        return float(predicted == wanted)
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def item_token_f1(item: Item, answer: str | None) -> float | None:
    """Token-F1 for text and set answers; None for the formats F1 does not suit."""
    if item.answer_format not in TEXT_FORMATS:
        return None
    return max(token_f1(answer, g) for g in [item.gold, *item.gold_aliases])


def blanked(item: Item, fact: int) -> tuple[Turn, str] | None:
    """The turn stating fact ``fact``'s final value, with that value replaced by ``___``."""
    m = item.metadata
    if fact >= len(m.fact_to_turn):
        return None
    turn, value = item.dialogue[m.fact_to_turn[fact]], m.fact_values[fact]
    if not value or value not in turn.text:
        return None
    return turn, turn.text.replace(value, BLANK, 1)


def value_recalled(answer: str | None, value: str) -> bool:
    """Whether a probe answer gives ``value`` (as the dialogue wrote it): the same date,
    the same number, or the same text (ratio >= 90 after normalising)."""
    answer = answer or ""
    if dates := dates_in(value):
        return bool(dates & dates_in(answer))
    if numbers := numbers_in(value):
        return bool(numbers & numbers_in(answer))
    want, got = normalize_text(value), normalize_text(answer)
    return bool(want) and (want in got or fuzz.ratio(want, got) >= 90)


def rule_recalled(answer: str | None, statement: str) -> bool:
    """Whether a rule probe's answer states the rule: every number of its statement (rates,
    thresholds, days), or, for a statement without numbers, token-F1 >= 0.5 with it."""
    if numbers := numbers_in(statement):
        return numbers <= numbers_in(answer or "")
    return token_f1(answer, statement) >= 0.5


def error_source(
    check: AnswerCheck | AnswerRecord, item: Item, facts_recalled: Mapping[int, bool], oracle_value_right: bool | None,
    rule_known: bool | None = None,
) -> str | None:
    """See the module docstring; None for a correct answer. ``check``: the answer's verdict;
    ``facts_recalled``: fact index -> whether its probe gave the value, for the probes that
    ran; ``rule_known``: the rule probe's verdict (None: not asked)."""
    if check.correct:
        return None
    if not check.syntactic_ok:
        return "format"
    if not all(facts_recalled.values()):
        return "fact_extraction"
    if len(facts_recalled) < len(item.metadata.fact_values):
        return "unprobed"
    if rule_known is False:
        return "rule_knowledge"
    if oracle_value_right is None:
        return "unprobed"
    if not oracle_value_right:  # the value, not the format: an off-format right value applied the rule
        return "reasoning" if item.metadata.rule_kind == NO_RULE else "rule_application"
    return "combination"
