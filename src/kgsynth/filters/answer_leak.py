"""Answer leak: the question must not contain its answer, and no name the item mentions
may contain it.

"What is the order number of Order ORD-2024-00057?" (gold ORD-2024-00057) is answered by
its own question; a multi-hop item whose bridge is "Granit Stroy office in Yekaterinburg"
(gold Yekaterinburg) by a name, without the chain. Looked for, in the item's language:

- in the question: a text gold or alias as whole words (Russian also by lemma: «в
  Екатеринбурге» holds «Екатеринбург»), or a code-like part of it (3+ characters with a
  digit: "9605" of "2201 **** **** 9605"); a number by value in any writing, leaving out
  codes ("ORD-2024-00057" holds no 57); a date in any writing the checker reads;
- in the labels of the item's entities (subjects and IRI objects of its source triples,
  bridges among them) other than the answer's own: a text gold or alias as whole words.
  Numbers and dates are looked for in the question only: a number inside a name ("Office
  23") is no hint at a count.

Out of scope: yes/no answers (the words are in any question), comparisons (they name their
options, the answer among them), and one-character golds and aliases ("B" of "class B":
as a word, "a" and «в» are in most sentences). Labels come from ``nodes`` (IRI -> its
``Node``, whose ``label_in`` is what items show), which the pipeline takes from its
scenarios; an entity missing there is not looked at.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from kgsynth.filters.base import ItemFilter
from kgsynth.filters.entity_match import item_nodes
from kgsynth.formats.answers import NUMERIC_FORMATS, AnswerFormat, dates_in, numbers_in, parse_number
from kgsynth.formats.morph import lemma_key
from kgsynth.queries import Shape
from kgsynth.synth.dialogues.item import Item

if TYPE_CHECKING:
    from kgsynth.queries import Node
    from kgsynth.synth.scenarios.scenario import Scenario

# a word with its inner hyphens ("BK-ZFDGZJ", "Санкт-Петербург"); quotes, "*", "?" divide words
_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
_SEP = "\x1f"
# a token with a letter and a digit ("ORD-2024-00057", "Y991TE"): a code, not a number
_CODE = re.compile(r"(?<!\S)(?=\S*[^\W\d_])(?=\S*\d)\S+")
_NON_DIGITS = re.compile(r"[^0-9]+")
_DIGIT = re.compile(r"[0-9]")
_COMPARISON = Shape.comparison.value


def _joined(words: Sequence[str]) -> str:
    """Words between separators: a phrase is in a text as whole words when its joined
    words are a substring of the text's."""
    return f"{_SEP}{_SEP.join(words)}{_SEP}" if words else ""


@functools.lru_cache(maxsize=16384)
def _keys(text: str, language: str) -> tuple[str, ...]:
    """``text`` as its casefolded words (ё as е), and for Russian also as their lemmas.
    Cached: names and golds recur in many items, a question in every difficulty."""
    words = _joined(_WORD.findall(text.casefold().replace("ё", "е")))
    return (words, _joined(_WORD.findall(lemma_key(text)))) if language == "ru" else (words,)


# Keys of one language have the same length: plain loops (this runs for every item)
def _contains(text_keys: tuple[str, ...], phrase_keys: tuple[str, ...]) -> bool:
    for text, phrase in zip(text_keys, phrase_keys):
        if phrase and phrase in text:
            return True
    return False


def _same(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    for x, y in zip(a, b):
        if x and x == y:
            return True
    return False


@functools.lru_cache(maxsize=4096)
def _code_parts(gold: str) -> tuple[str, ...]:
    """Code-like words of a text gold, each between separators ("9605" of "2201 **** **** 9605")."""
    return tuple(_joined([w]) for w in _WORD.findall(gold.casefold()) if len(w) >= 3 and any(c.isdigit() for c in w))


def _significant_digits(text: str) -> str:
    """The digits of a number without leading or trailing zeros ("156" for 15600 and 0.156)."""
    return _NON_DIGITS.sub("", text).strip("0") or "0"


class AnswerLeakFilter(ItemFilter):
    name = "answer_leak"

    def __init__(self, nodes: Mapping[str, Node] | None = None):
        self.nodes = nodes or {}

    @classmethod
    def from_scenarios(cls, scenarios: Iterable[Scenario]) -> AnswerLeakFilter:
        """The filter that knows every IRI node of ``scenarios``' facts (the nodes
        themselves, shared with the scenarios: no copy of a label is made)."""
        nodes: dict[str, Node] = {}
        subgraphs: set[str] = set()
        for scenario in scenarios:
            if scenario.subgraph_id in subgraphs:  # its scenarios (one per cell) share the facts
                continue
            subgraphs.add(scenario.subgraph_id)
            for fact in scenario.facts:
                for node in (fact.subject, fact.object):
                    if node.kind == "iri":
                        nodes.setdefault(node.value, node)
        return cls(nodes)

    def reason(self, item: Item) -> str | None:
        fmt = item.answer_format
        if fmt is AnswerFormat.yes_no or item.metadata.shape == _COMPARISON:
            return None
        if fmt in NUMERIC_FORMATS:
            return self._number_in_question(item)
        if fmt is AnswerFormat.date:
            return self._date_in_question(item)
        golds = [item.gold] if isinstance(item.gold, str) else list(item.gold)
        answers = [(g, _keys(g, item.language)) for g in [*golds, *item.gold_aliases]]
        answers = [(g, keys) for g, keys in answers if len(keys[0].strip(_SEP)) > 1]  # see the module note on "B"
        return self._text_in_question(item, answers) or self._text_in_names(item, answers)

    def _number_in_question(self, item: Item) -> str | None:
        question, gold_text = item.question, str(item.gold)
        # any writing of the gold holds its significant digits in a row: most questions
        # have no digit, or not these
        if not _DIGIT.search(question) or _significant_digits(gold_text) not in _NON_DIGITS.sub("", question):
            return None
        gold = parse_number(gold_text)
        # the codes are taken out only when the number is there: that scan costs most
        if gold is not None and gold in numbers_in(question) and gold in numbers_in(_CODE.sub(" ", question)):
            return f"the question contains the answer {gold_text!r}"
        return None

    def _date_in_question(self, item: Item) -> str | None:
        gold = str(item.gold)
        if gold[:4] in item.question and any(d.isoformat() == gold for d in dates_in(item.question)):
            return f"the question contains the answer {gold!r}"
        return None

    def _text_in_question(self, item: Item, answers: list[tuple[str, tuple[str, ...]]]) -> str | None:
        question = _keys(item.question, item.language)
        for gold, keys in answers:
            if _contains(question, keys):
                return f"the question contains the answer {gold!r}"
        for gold, _ in answers:
            for part in _code_parts(gold):
                if part in question[0]:
                    return f"the question contains {part.strip(_SEP)!r} of the answer {gold!r}"
        return None

    def _text_in_names(self, item: Item, answers: list[tuple[str, tuple[str, ...]]]) -> str | None:
        entities, _ = item_nodes(item)
        for iri in entities:
            node = self.nodes.get(iri)
            if node is None:
                continue
            label = node.label_in(item.language)
            keys = _keys(label, item.language)
            if any(_same(keys, answer) for _, answer in answers):
                continue  # the answer's own name
            for gold, answer in answers:
                if _contains(keys, answer):
                    return f"the name {label!r} contains the answer {gold!r}"
        return None
