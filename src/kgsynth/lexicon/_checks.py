"""Whether a proposed form can stand in a question: a noun phrase, in the item's language,
that a sentence can decline."""

from __future__ import annotations

import re

from kgsynth.formats import morph
from kgsynth.synth.naming.lexicon import is_cyrillic

_RAW = re.compile(r"[_/#{}<>]|\w\.\w|[a-z][A-Z]")  # an identifier's marks: underscores, paths, dotted names, camelCase
_MAX_WORDS = 8
# what synthesis says when it has no word: a form that is one of these is no form
_PLACEHOLDERS = {"en": ("“", "entry"), "ru": ("значение «", "объект")}


def refusal(text: str, lang: str, form: str) -> str | None:
    """Why ``text`` cannot be the ``form`` ("noun", "inverse_noun", "label") in ``lang``, or None."""
    text = text.strip()
    if not text:
        return "no word for it (no label in this language, and the glossary has none for its English)"
    placeholder, vague = _PLACEHOLDERS[lang]
    if text.startswith(placeholder) or (form == "inverse_noun" and text == vague):
        return f"no word for it: synthesis would say “{text}”"
    if _RAW.search(text):
        return f"“{text}” is an identifier, not words"
    if len(text.split()) > _MAX_WORDS:
        return f"“{text}” is a sentence, not a noun phrase"
    return _russian_refusal(text) if lang == "ru" else None


def _russian_refusal(text: str) -> str | None:
    """A Russian form opens a noun phrase in the nominative whose adjectives agree with its head."""
    if not is_cyrillic(text.split()[0]):
        return f"“{text}” does not start with a Russian word"
    first = text.split()[0].strip("«»\"")
    if not first.isupper() and morph.nominative_head(first) is None:  # an abbreviation ("ИНН") stands as it is
        return f"“{text}” does not start with a noun or an adjective in the nominative"
    if len(text.split()) > 1 and morph.decline(text, "gent") == text and morph.decline(text, "datv") == text:
        return f"“{text}” cannot be declined: its words do not agree"
    return None
