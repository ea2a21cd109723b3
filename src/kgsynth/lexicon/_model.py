"""The model's words for a relation: one structured call per relation, through the gateway."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kgsynth.llm import LLMGateway, Request

STAGE = "lexicon"
_SYSTEM = (
    "You name the relations of a knowledge graph for quiz questions in English and Russian. "
    "Answer with JSON only."
)
_ASK = """Relation: {iri}
Its label: {label}
Facts that use it (subject -> value):
{examples}

Give:
- noun_en: what the value is to the subject, an English noun phrase in the singular, as in
  "the <noun_en> of <subject> is <value>" (e.g. {nouns_en}).
- noun_ru: the same in Russian, nominative singular (e.g. {nouns_ru}).
- inverse_noun_en: what the subject is to the value, an English noun in the singular, as in
  "every <inverse_noun_en> whose <noun_en> is <value>" (e.g. "{inverse_en}" for a {noun_en}); null when the values are not things.
- inverse_noun_ru: the same in Russian, nominative singular, or null."""


# the prompt's examples, as (English, Russian) pairs: a small model copies them whatever the relation
EXAMPLES = (("genre", "жанр"), ("date of birth", "дата рождения"), ("composer", "композитор"), ("film", "фильм"))


def copied(text: str, english: str | None) -> bool:
    """Whether a form is one of the prompt's examples while the relation's English noun is
    not that example's: a small model's copy, not its answer."""
    return any(text in pair and english != pair[0] for pair in EXAMPLES)


class ModelWords(BaseModel):
    """The forms a model proposes for one relation."""

    model_config = ConfigDict(extra="ignore")

    noun_en: str = Field(max_length=80)
    noun_ru: str = Field(max_length=80)
    inverse_noun_en: str | None = Field(None, max_length=80)
    inverse_noun_ru: str | None = Field(None, max_length=80)

    def form(self, form: str, lang: str) -> str | None:
        return getattr(self, f"{form}_{lang}", None)


def ask_model(gateway: LLMGateway, asked: list[tuple[object, list[tuple[str, str]]]]) -> list[ModelWords | str]:
    """For each (term, examples): the model's words, or why there are none."""
    requests = [Request(messages=[{"role": "system", "content": _SYSTEM},
                                  {"role": "user", "content": _prompt(term, examples)}],
                        output=ModelWords, stage=STAGE) for term, examples in asked]
    return [result.value if result.ok else result.error or "no answer" for result in gateway.complete_all(requests)]


def _prompt(term, examples: list[tuple[str, str]]) -> str:
    shown = "\n".join(f"  {s} -> {o}" for s, o in examples) or "  (none)"
    nouns = EXAMPLES[:3]
    return _ASK.format(iri=term.iri, label=term.label or "(none)", examples=shown,
                       nouns_en=", ".join(f'"{en}"' for en, _ in nouns), nouns_ru=", ".join(f'"{ru}"' for _, ru in nouns),
                       inverse_en=EXAMPLES[3][0], noun_en=EXAMPLES[0][0])
