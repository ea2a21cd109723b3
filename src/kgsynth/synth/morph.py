"""Russian morphology for generated text and for answer checking, through pymorphy3.

Labels in a graph are nominative ("Дмитрий Макаров", "дата рождения", "Заказ ORD-1"); a
sentence needs them in its case ("у Дмитрия Макарова", "даты рождения", "заказа ORD-1").
A noun phrase is declined by its head: the leading adjectives and participles and the
first noun agree with the case, the words after the head (genitive dependents, codes,
quoted names) stay as written. A person's name is declined word by word in the gender of
its first name. Words pymorphy does not know (Latin codes, numbers) stay as they are.
"""

from __future__ import annotations

import functools
import re

import pymorphy3

CASES = ("nomn", "gent", "datv", "accs", "ablt", "loct")
_CYRILLIC_WORD = re.compile(r"[А-Яа-яЁё]+(?:-[А-Яа-яЁё]+)*")
_TOKEN = re.compile(r"\S+")
_AGREEING = frozenset({"ADJF", "PRTF", "NUMR"})


@functools.cache
def analyzer() -> pymorphy3.MorphAnalyzer:
    """One analyzer per process (loading its dictionaries takes about 50 ms)."""
    return pymorphy3.MorphAnalyzer()


@functools.lru_cache(maxsize=65536)
def _parses(word: str) -> tuple:
    return tuple(analyzer().parse(word))


@functools.lru_cache(maxsize=65536)
def lemma(word: str) -> str:
    """The dictionary form of one Russian word, casefolded with ё as е ("среднему" -> "средний")."""
    parses = _parses(word.casefold())
    return (parses[0].normal_form if parses else word.casefold()).replace("ё", "е")


def lemma_key(text: str) -> str:
    """``text`` with every Cyrillic word replaced by its lemma: two writings of one Russian
    phrase in different cases ("магазину «Парковый»", "магазин Парковый") share
    a key once quotes and case are ignored; other characters are kept."""
    return _CYRILLIC_WORD.sub(lambda m: lemma(m.group()), text.casefold().replace("ё", "е"))
