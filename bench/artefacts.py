"""Count the text artefacts of issue 12 in a generated dataset, from the text and the graph.

    python bench/artefacts.py DATASET_DIR [--graph data/demo] [--json OUT]

Prints a markdown table: one row per artefact pattern, with the number of items that
show it in English, in Russian and in all (and, where a row only concerns some items,
``count / eligible``). ``--json`` also writes every count, sub-counts (items per kind of
evidence, items per shape) and up to five example items per row. The detectors read the
item text, the item's ``source_triples`` and the graph (labels of relations, entities,
classes and rules; the rules themselves), so they measure whatever wording the
generator produces; where one also matches a signature of the old templates
(``Возьмите то, у чего``, ``Через что``), that is said below. Every count is of items
(one item counts once per row, however often the pattern occurs in it), except the
noise-pool row.

What each row counts (``L`` is a relation's raw label, i.e. the ``rdfs:label`` of a
property used as a predicate in the graph, in the item's language):

``label_as_noun_question``
    A question that uses a relation's raw label (English: as the graph writes it, so a
    capitalised value "Head of department" is not the label "head") in a noun slot.
    English: ``the/every L of``, ``whose L is``, ``the L is``, ``another L``,
    ``L: value`` / ``L — value`` when L is not a noun phrase (see
    :func:`english_label_is_noun`: a boolean property, a label that starts or ends with a
    preposition, starts with a verb form, has a participle or 3rd-person verb before a
    preposition, or is ``part of trip`` without an article; ``--labels`` lists them); and,
    whatever L is, ``has/have L <value>`` (the label as a bare attribute name before a
    value) and ``linked/connected by L``. Russian: any relation label in quotes
    (``у чего «дата начала» — …``), a non-noun label (its first word a verb, a short
    participle or adjective, an infinitive, a preposition, or a boolean property) followed
    by a dash or colon, and the old templates ``Возьмите то, у чего …`` and
    ``Через что …`` (signatures).
``wh_yes_no``
    A yes/no item whose question opens with a wh-word (what, which, who, where, when, how;
    Russian какой/что/кто/где/когда/сколько…): typically a boolean relation asked as if it
    were a noun (``What is the swimming pool of the hotel of Booking BK-62LF42?`` -> yes).
``label_as_noun_fact``
    The same slots in a dialogue turn that states a fact (kinds fact, misstatement,
    restate, reask), but only for labels that are not noun phrases; a Russian quoted label.
``value_as_topic``
    A turn of kind ``fact`` mentions a literal value of the item (a number, date, code:
    an object of ``source_triples`` that is a literal, as its lexical form or as the
    dialogue writes it; not inside an entity's name, ``CL-0042`` in ``Claim CL-0042``) more
    often than the facts that turn states with that value: the extra mention is the value
    used as a topic (``Can we look at 249 today?``,
    ``Next on my list is LC-108630. For Artyom Semyonov, the ... is LC-108630.``).
    Booleans are left to the next row.
``yes_no_value``
    A turn stating a fact (fact, misstatement, restate) that uses yes/no (да/нет) as a
    value: ``... is yes``, ``: no``, ``— да``, ``на самом деле нет``, ``It's yes``.
``person_it``
    A person is called "it" (English ``it's a/an``, ``it is a/an``, ``this one is a/an``)
    or, in Russian, an object (``объект``), where the referent, the nearest entity label
    of the item before those words in the dialogue (else the item's first subject), is a
    person: its Russian label parses as a first name + surname/patronymic with pymorphy3,
    else its English label is two capitalised words and the entity's class is one other
    persons of the graph have.
``introduced_as_it``
    Any entity introduced as an "it" in a turn stating facts: English ``it's a/an``,
    ``it is a/an``, ``this one is a/an``; Russian ``объект типа «…»``, ``тип — …``.
``class_restated``
    The entity's class is stated although its name already says it (``Trip TR-0019 — it's
    a trip``, ``the hotel booking Booking BK-1``): the dialogue names the entity (its
    label, in the item's language), the label contains the head word of the entity's class
    (``rdf:type``; English: last word, Russian: first noun), and a turn says the whole
    class label outside every entity name of the item and outside relation labels (``the
    trip budget`` does not count; "order" in another order's name neither); Russian compared
    by lemma.
``en_plural_is``
    English: a relation label whose head word (the last before a preposition) is plural,
    used with "is"/"was": ``the trip expenses is 207,900``, ``What is the trip expenses of``.
``correction_before_intro``
    A turn of kind ``misstatement`` (a value said wrongly, later corrected) comes before
    the first turn of kind ``fact``, i.e. before the entity is introduced. The sub-counts
    tell whether a later fact turn stating nothing (re)introduces the entity, whether the
    slip names none of the item's entities, or whether the slip itself names the entity.
``same_speaker``
    Two consecutive turns have the same speaker.
``noise_pool`` (dataset level, per language)
    ``distinct / max``: how many distinct texts the turns of kind noise (and distractor)
    have, and how often the most frequent one occurs across the dataset.
``line_twice``
    A dialogue in which one line (the exact text of a turn of any kind) occurs twice.
``ru_name_nominative``
    Russian: a person's full name (first name + surname/patronymic, pymorphy3 Name/Surn/
    Patr) whose most likely reading is the nominative (not "Дмитрия Соболева", first a
    genitive), in quotes or not, right after a word that governs another case: a
    preposition, ``касается``, a transitive verb in the 1st/2nd person, imperative or
    infinitive (``разберём``, ``посмотрим сегодня``: adverbs between are skipped; a
    3rd-person verb is left alone, its name may be the subject: ``Какой кешбэк получит
    Борис Михайлов?``), or a common noun in an oblique case (an apposition:
    ``сотрудника «Дмитрий Лебедев»``).
``ru_label_nominative``
    Russian: a quoted label (any entity) whose first word can only be nominative (or
    nominative/accusative after a preposition that never takes the accusative) right after
    a preposition or ``касается``: ``по «Полис KS-2024-00061»``, ``к «Поездка TR-0003»``.
``ru_reask_nominative``
    Russian: a re-ask whose noun phrase after an imperative transitive verb
    (``повтори``, ``напомни``, ``уточни``...; only commas and ``пожалуйста``/``ещё раз``
    between) is nominative where the accusative differs: ``Повтори, пожалуйста, дата выезда?``.
``ru_gender``
    Russian: a person's name followed by a past-tense verb or short participle/adjective of
    the other gender: ``«Ксения Воробьёва» связан``.
``leak_question``
    The question contains the gold or one of its aliases (set: any member) as whole words;
    Russian is compared by lemma (any case); numbers by value, dates in ISO and as written.
    yes/no golds are skipped, and so is a choice question whose named options include the
    gold as a whole label (``Which is larger: A or B?``): the options are the point.
``leak_partial``
    A code-like token of the gold (3+ characters with a digit) in the question while the
    whole gold is not: ``What is the card number of Rodnik Bank card *9605?`` ->
    ``2201 **** **** 9605``.
``leak_bridge``
    The gold (or an alias) sits as whole words inside the label of another entity of the
    item's ``source_triples`` that the dialogue mentions and the question does not (a
    bridge: ``Granit Stroy office in Yekaterinburg`` -> ``Yekaterinburg``).
``duplicates``
    Items of the same language whose question and gold (casefolded, spaces collapsed)
    repeat an earlier item's: every item after the first of its group counts.
``tie_rounding``
    A rule item whose exact value (re-evaluated with the graph's rule without its
    ``kgs:rounding``, from the item's ``source_triples``) lies exactly on .5 at the rounding
    digit while the instruction does not state how ties round. ``eligible``: rule items
    with a rounding rule whose gold the re-evaluation reproduces.
``class_short_forms``
    A classification answer (the gold is the label of a ``kgs:bracket`` class of a rule)
    of several words (``power class B``, ``18% bracket``) with no alias that is a shorter
    writing of it and an instruction that does not list the allowed labels.
``day_count``
    A day count (a ``kgs:DaysBetween`` rule, or a question asking how many days) whose
    question and instruction do not say whether the count is inclusive (``inclusive``,
    ``including``, ``nights``, ``включительно``, ``ночей``...).
``set_separator``
    A set item whose instruction separates items by commas while a gold member contains
    a comma or is a number the dialogue writes with a comma (``14,317.82``, ``2 574,37``).
``correction_then_more``
    The sentence that corrects a value (it holds a value a misstatement turn said) of a
    relation the entity has several values of (a sum), and the very next statement (next
    sentence, else next fact turn) gives another value of that relation, so it can read as
    a further correction. The wording of that next statement is not judged.
``rule_given_away``
    The question names a rule (a ``kgs:Rule`` label in quotes, or the word
    ``rule``/``правило``; a rule label used as what is asked, ``free delivery``, is fine),
    asks for a rate (``Which rate, in percent``, ``Какая ставка``), or is a percent item
    whose gold is one of its rule's own rates (``kgs:rate``, ``kgs:defaultRate``, a case's).

Not measured here: whether the checker accepts every writing a careful reader would give
(that is the checker's tests' job), and grammar beyond the patterns above.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from kgsynth.errors import KgsynthError
from kgsynth.formats import locale
from kgsynth.formats.morph import analyzer, lemma_key
from kgsynth.kg import KnowledgeGraph
from kgsynth.kg.vocab import LABEL_PATH, RDF_TYPE, XSD, Operation, Rule, load_rules

ROOT = Path(__file__).resolve().parent.parent
LANGS = ("en", "ru")
FACT_KINDS = frozenset({"fact", "misstatement", "restate", "reask"})
STATING_KINDS = frozenset({"fact", "misstatement", "restate"})
NOISE_KINDS = frozenset({"noise", "distractor"})
EXAMPLES = 5

EN_PREPOSITIONS = frozenset(
    "in at on of for by from to with within into over under near about via per than".split()
)
EN_VERB_STARTS = frozenset("has have had is are was were does do did can belongs contains includes".split())
# nouns that name a part or a member of something: "part of trip" lacks its article
EN_RELATIONAL_HEADS = frozenset("part member section branch unit piece subsidiary division".split())
RU_NON_NOUN_POS = frozenset({"VERB", "INFN", "PRTS", "ADJS", "PRED", "PREP", "GRND", "CONJ"})
# prepositions that take the accusative (then a nominative-looking masc./neut. noun is fine)
RU_ACCUSATIVE_PREPS = frozenset("в во на за про через сквозь под".split())
RU_REASK_VERBS = frozenset("повтори повторите напомни напомните уточни уточните назови назовите скажи скажите".split())
TIE_WORDS = re.compile(r"half|\btie|\.5\b|0[.,]5|round(?:ed|ing)? up|половин|в большую сторону|вверх", re.I)
INCLUSIVE_WORDS = re.compile(
    r"inclusive|exclusive|including|excluding|both (?:the )?(?:first|start)|nights?\b|"
    r"включ|не считая|считая|ноч", re.I
)
DAY_QUESTION = re.compile(r"how many (?:calendar )?days|сколько (?:\w+ )?(?:дней|суток)|продолжительност", re.I)
RULE_WORD = {"en": re.compile(r"\brules?\b", re.I), "ru": re.compile(r"\bправил\w*", re.I)}
RATE_ASK = {
    "en": re.compile(r"\b(?:which|what)\s+(?:\w+\s+)?(?:rate|percentage)\b|\brate,? in per ?cent", re.I),
    "ru": re.compile(r"\bкак(?:ая|ой|ую|ова)\s+(?:\w+\s+)?(?:ставк|процент)|\bставк\w*\s+в\s+процентах", re.I),
}
YES_NO_VALUE = {
    # yes/no ending its clause: "… is yes.", ": no,", "— да."; not "there is no pool"
    "en": re.compile(r"(?:\b(?:is|are|was|were)|'s|:|—|–)\s+(?:yes|no)\s*(?=[.,;!?)]|$)", re.I),
    "ru": re.compile(r"(?:—|–|:|на самом деле)\s*(?:да|нет)\s*(?=[.,;!?)]|$)", re.I),
}
RESTATE_YES_NO = {"en": re.compile(r"^\s*(?:yes|no)\b", re.I), "ru": re.compile(r"^\s*(?:да|нет)\b", re.I)}
IT_IS_A = re.compile(r"\b(?:it's|it is|this one is)\s+an?\s+", re.I)
RU_OBJECT = re.compile(r"\bобъект\w*", re.I)
NUMBER_TOKEN = re.compile(r"(?<![\w\-*])\d+(?:[.,\u00a0\u202f ]\d+)*(?![\w\-])")


# ---------------------------------------------------------------------------- text helpers
def fold(text: str) -> str:
    """Casefold, ё as е, non-breaking spaces as spaces, typographic quotes as plain."""
    return (
        text.casefold().replace("ё", "е").replace("\u00a0", " ").replace("\u202f", " ")
        .replace("“", '"').replace("”", '"')
    )


def word_pattern(phrase: str) -> re.Pattern[str]:
    """``phrase`` (folded) as whole words: no word character or hyphen on either side."""
    return re.compile(rf"(?<![\w\-]){re.escape(fold(phrase))}(?![\w\-])")


def has_words(text: str, phrase: str) -> bool:
    return bool(phrase.strip()) and word_pattern(phrase).search(fold(text)) is not None


def count_words(text: str, phrases: Iterable[str]) -> int:
    """Non-overlapping whole-word occurrences of any of ``phrases`` in ``text``."""
    options = sorted({fold(p) for p in phrases if p.strip()}, key=len, reverse=True)
    if not options:
        return 0
    pattern = re.compile(rf"(?<![\w\-]){'|'.join(map(re.escape, options))}(?![\w\-])")
    return len(pattern.findall(fold(text)))


def ru_key(text: str) -> str:
    """Russian text by lemma, without guillemets, one space between words: two writings of
    a phrase in different cases get the same key ("у Москвы" -> "у москва")."""
    return re.sub(r"\s+", " ", lemma_key(text.replace("«", " ").replace("»", " "))).strip()


def has_lemmas(text: str, phrase: str) -> bool:
    """Russian: ``phrase`` in ``text`` in any case (every Cyrillic word by its lemma)."""
    key = ru_key(phrase)
    return bool(key) and word_pattern(key).search(ru_key(text)) is not None


def mentions(text: str, phrase: str, lang: str) -> bool:
    return has_words(text, phrase) or (lang == "ru" and has_lemmas(text, phrase))


def parse_number(token: str, lang: str | None = None) -> Decimal | None:
    """A number as a person writes it: en ``14,317.82``, ru ``2 574,37``; plain ``1460.00``."""
    token = token.replace("\u00a0", " ").replace("\u202f", " ").strip()
    tries = []
    if lang != "ru":
        tries.append(token.replace(",", "").replace(" ", ""))
    if lang != "en":
        tries.append(token.replace(" ", "").replace(",", "."))
    for t in tries:
        try:
            return Decimal(t)
        except InvalidOperation:
            continue
    return None


def numbers_in(text: str, lang: str) -> list[tuple[str, Decimal]]:
    out = []
    for m in NUMBER_TOKEN.finditer(text):
        value = parse_number(m.group(), lang)
        if value is not None:
            out.append((m.group(), value))
    return out


def quoted_spans(text: str) -> list[tuple[int, int, str]]:
    """Top-level «...» spans (nested quotes kept inside): (start of «, end after », content)."""
    spans, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "«":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "»" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1, text[start + 1 : i]))
    return spans


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if s]


# ---------------------------------------------------------------------------- Russian morphology
def _parses(word: str):
    return analyzer().parse(word)


def ru_person_gender(name: str) -> str | None:
    """"masc"/"femn" when ``name`` reads as a Russian person's name in the nominative: a
    first name (pymorphy3 Name), then one or two surnames/patronymics (Surn/Patr) of the
    same gender."""
    genders = {gender for case, gender in ru_name_readings(name) if case == "nomn"}
    return next(iter(genders)) if len(genders) == 1 else None


def ru_name_readings(name: str) -> list[tuple[str, str]]:
    """(case, gender) readings of ``name`` (2-3 capitalised Cyrillic words) as one person's
    name, most likely first (pymorphy3's order of the first word's parses): the first word
    a first name, the others surnames or patronymics, all in that case, singular and gender.
    "Дмитрия Соболева" reads first as a masculine genitive, then accusative, and last as a
    (rare) feminine nominative; "Виктория Белова" first as a feminine nominative."""
    words = name.split()
    if not 2 <= len(words) <= 3 or not all(re.fullmatch(r"[А-ЯЁ][а-яё]+(?:-[А-ЯЁ][а-яё]+)?", w) for w in words):
        return []
    readings = []
    for first in _parses(words[0]):
        tag = first.tag
        if "Name" not in tag.grammemes or "sing" not in tag.grammemes or tag.gender is None or tag.case is None:
            continue
        case, gender = str(tag.case), str(tag.gender)
        if (case, gender) not in readings and all(
            any({case, "sing"} <= set(p.tag.grammemes) and {"Surn", "Patr"} & set(p.tag.grammemes)
                and p.tag.gender in (gender, None) for p in _parses(w))
            for w in words[1:]
        ):
            readings.append((case, gender))
    return readings


def ru_nominative_only(name: str) -> str | None:
    """The gender of ``name`` when its most likely reading is a nominative person's name
    ("Денис Сорокин", "Виктория Белова"), not when that is another case ("Дмитрия Соболева")."""
    readings = ru_name_readings(name)
    return readings[0][1] if readings and readings[0][0] == "nomn" else None


def ru_label_is_noun(label: str) -> bool:
    """A Russian relation label reads as a noun phrase unless its first word is a verb, an
    infinitive, a short participle/adjective, a predicative or a preposition."""
    first = label.split()[0]
    if first.isupper():
        return True  # an abbreviation (ИНН, БИК)
    parses = _parses(first.casefold())
    return not parses or parses[0].tag.POS not in RU_NON_NOUN_POS


def english_label_is_noun(label: str) -> bool:
    """An English relation label reads as a noun phrase ("trip budget", "date of birth")
    unless it starts or ends with a preposition ("in country", "issued by"), starts with a
    verb form ("has a swimming pool"), has a participle or a 3rd-person verb before a
    preposition ("located in", "based at office", "works in"), or is a relational head +
    "of" + a bare noun ("part of trip")."""
    words = fold(label).split()
    if not words:
        return True
    if words[0] in EN_PREPOSITIONS or words[-1] in EN_PREPOSITIONS or words[0] in EN_VERB_STARTS:
        return False
    for a, b in itertools.pairwise(words):
        if b in EN_PREPOSITIONS and a.endswith(("ed", "en")):
            return False
    third_person = re.fullmatch(r"[a-z]+[^s]s", words[0]) and words[0] not in {"sales", "hours", "years"}
    if len(words) >= 2 and words[1] in EN_PREPOSITIONS and third_person:  # "works in", "lives in"
        return False
    return not (len(words) == 3 and words[0] in EN_RELATIONAL_HEADS and words[1] == "of")


# ---------------------------------------------------------------------------- the graph
@dataclass
class GraphInfo:
    """What the detectors need from the graph, read once."""

    labels: dict[str, dict[str, str]]  # IRI -> language -> label
    relations: dict[str, dict[str, str]]  # property IRI -> language -> label (predicates only)
    boolean_relations: set[str]
    types: dict[str, set[str]]  # IRI -> class IRIs
    rules: dict[str, Rule]
    person_classes: set[str] = field(default_factory=set)

    @classmethod
    def from_kg(cls, kg: KnowledgeGraph) -> GraphInfo:
        labels: dict[str, dict[str, str]] = defaultdict(dict)
        for entity, label in kg.select(
            f"SELECT ?e ?l WHERE {{ ?e {LABEL_PATH} ?l . FILTER(isIRI(?e) && isLiteral(?l)) }}"
        ):
            by_lang = labels[entity.value]
            lang = label.language or ""
            if lang not in by_lang or label.value < by_lang[lang]:
                by_lang[lang] = label.value
        predicates = [p.value for (p,) in kg.select("SELECT DISTINCT ?p WHERE { ?s ?p ?o }")]
        relations = {p: labels[p] for p in predicates if p in labels}
        boolean = {
            p.value for (p,) in kg.select(
                f"SELECT DISTINCT ?p WHERE {{ ?s ?p ?o . FILTER(isLiteral(?o) && datatype(?o) = <{XSD}boolean>) }}"
            )
        }
        types: dict[str, set[str]] = defaultdict(set)
        for entity, klass in kg.select(f"SELECT ?e ?c WHERE {{ ?e <{RDF_TYPE}> ?c . FILTER(isIRI(?e) && isIRI(?c)) }}"):
            types[entity.value].add(klass.value)
        try:
            rules = load_rules(kg)
        except KgsynthError as e:  # a graph whose rules do not validate: the rule rows stay empty
            print(f"warning: rules not loaded ({e})", file=sys.stderr)
            rules = {}
        info = cls(dict(labels), relations, boolean, dict(types), rules)
        info.person_classes = {
            c for iri, classes in info.types.items()
            if ru_person_gender(info.labels.get(iri, {}).get("ru", "")) for c in classes
        }
        return info

    def label(self, iri: str, lang: str) -> str | None:
        by_lang = self.labels.get(iri, {})
        return by_lang.get(lang) or by_lang.get("") or None

    def relation_labels(self, lang: str) -> dict[str, str]:
        """folded label -> property IRI, for the item language (untagged labels too)."""
        out = {}
        for p, by_lang in self.relations.items():
            label = by_lang.get(lang) or by_lang.get("")
            if label and len(label) > 1:
                out[fold(label)] = p
        return out

    def is_noun_label(self, prop: str, lang: str) -> bool:
        label = self.label(prop, lang) or ""
        if prop in self.boolean_relations:
            return False
        return ru_label_is_noun(label) if lang == "ru" else english_label_is_noun(label)

    def is_person(self, iri: str) -> bool:
        if ru_person_gender(self.labels.get(iri, {}).get("ru", "")):
            return True
        en = self.label(iri, "en") or ""
        return bool(
            re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+", en) and self.types.get(iri, set()) & self.person_classes
        )

    @staticmethod
    def class_head(class_label: str, lang: str) -> str:
        """The head word of a class label: English, the last word ("hotel booking" ->
        "booking"); Russian, the first noun ("бронирование гостиницы" -> "бронирование")."""
        return fold(class_label).split()[-1] if lang == "en" else _ru_head(class_label)

    def bracket_classes(self) -> dict[str, str]:
        """Class IRI of every rule bracket -> the rule IRI."""
        return {b.class_iri: r.iri for r in self.rules.values() for b in r.brackets}


def _ru_head(label: str) -> str:
    for word in label.split():
        parses = _parses(word.casefold())
        if parses and parses[0].tag.POS == "NOUN":
            return word
    return label.split()[0]


# ---------------------------------------------------------------------------- items
@dataclass
class Item:
    """One dataset row with its facts parsed."""

    raw: dict[str, Any]
    triples: list[tuple[str, str, ox.NamedNode | ox.Literal | ox.BlankNode]]

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Item:
        lines = raw.get("metadata", {}).get("source_triples") or raw.get("source_triples") or []
        triples = []
        for line in lines:
            try:
                (t,) = list(ox.parse(line.encode(), format=ox.RdfFormat.N_TRIPLES))
            except (SyntaxError, ValueError):
                continue
            triples.append((t.subject.value, t.predicate.value, t.object))
        return cls(raw, triples)

    @property
    def lang(self) -> str:
        return self.raw["language"]

    @property
    def turns(self) -> list[dict]:
        return self.raw["dialogue"]

    @property
    def question(self) -> str:
        return self.raw["question"]

    @property
    def meta(self) -> dict:
        return self.raw.get("metadata", {})

    @property
    def golds(self) -> list[str]:
        """The gold and its aliases; a set gold as its members."""
        out = []
        for text in [self.raw["gold"], *self.raw.get("gold_aliases", [])]:
            if self.raw["answer_format"] == "set":
                out.extend(m.strip() for m in re.split(r";\s*", text) if m.strip())
            else:
                out.append(text)
        return out

    def iris(self) -> list[str]:
        """Subjects and IRI objects of the source triples, in order, without repeats."""
        seen = []
        for s, _, o in self.triples:
            for iri in (s, o.value if isinstance(o, ox.NamedNode) else None):
                if iri and iri not in seen:
                    seen.append(iri)
        return seen

    def fact_values(self) -> list[str]:
        return list(self.meta.get("fact_values") or [])


# ---------------------------------------------------------------------------- detectors
# Each returns a truthy value (often the evidence) when the item shows the pattern.
def _relation_regex(info: GraphInfo, lang: str) -> re.Pattern[str]:
    labels = sorted(info.relation_labels(lang), key=len, reverse=True)
    return re.compile("|".join(re.escape(x) for x in labels)) if labels else re.compile(r"(?!x)x")


_EN_SLOTS = {
    # slot -> (regex with {L}, counts whatever the label is)
    "the L of": (r"\b(?:the|every|each|all|any|its|their)\s+({L})\s+of\b", False),
    "whose L is": (r"\bwhose\s+({L})\s+(?:is|are|was|were)\b", False),
    "the L is": (r"\bthe\s+({L})\s+(?:is|are|was|were)\b", False),
    "another L": (r"\banother\s+({L})\b", False),
    "L: value": (r"(?<![\w\-])({L})\s*(?::|—|–)\s", False),
    "has L value": (
        r"\b(?:has|have|had)\s+({L})\s+(?!(?:of|as|been|to|in|is|are|no|not|an?|the)\b)(?=[\w\"«“$€£])", True
    ),
    "linked by L": (r"\b(?:linked|connected|related)\s+(?:to\s+\S+\s+)?by\s+({L})\b", True),
}


class LabelSlots:
    """Finds raw relation labels in noun slots; built once per graph."""

    def __init__(self, info: GraphInfo):
        self.info = info
        self.by_lang = {lang: info.relation_labels(lang) for lang in LANGS}
        self.en = {}
        alternation = _relation_regex(info, "en").pattern
        for name, (template, always) in _EN_SLOTS.items():
            self.en[name] = (re.compile(template.replace("{L}", alternation), re.I), always)
        self.en_plural = re.compile(rf"\b(?:is|was)\s+the\s+({alternation})\s+of\b|\b({alternation})\s+(?:is|was)\b")
        ru_alt = _relation_regex(info, "ru").pattern
        self.any_label = {
            lang: re.compile(rf"(?<![\w\-])(?:{_relation_regex(info, lang).pattern})(?![\w\-])") for lang in LANGS
        }
        self.ru_dash = re.compile(rf"(?<![\w\-«])({ru_alt})\s*(?:—|–|:)\s", re.I)

    def plural_with_is(self, text: str) -> list[str]:
        """English: a relation label whose head is plural ("trip expenses") with "is"/"was"."""
        hits = []
        for m in self.en_plural.finditer(fold(text)):
            label = m.group(1) or m.group(2)
            if _plural_head(label):
                hits.append(m.group(0))
        return hits

    def find(self, text: str, lang: str, question: bool) -> list[str]:
        """The slots (with the label) where ``text`` uses a relation label as a noun."""
        hits = []
        labels = self.by_lang[lang]
        if lang == "en":
            for name, (pattern, always) in self.en.items():
                if not question and name == "has L value":
                    continue
                for m in pattern.finditer(text):
                    prop = labels.get(fold(m.group(1)))
                    written = (self.info.label(prop, lang) if prop else None) or ""
                    # the label as the graph writes it ("head", not the value "Head of department")
                    allowed = {written, written[:1].upper() + written[1:] if name == "L: value" else written}
                    if m.group(1) not in allowed:
                        continue
                    if always or not self.info.is_noun_label(prop, lang):
                        hits.append(f"{name}: {m.group(1)}")
            return hits
        for _, _, content in quoted_spans(text):
            if fold(content) in labels:
                hits.append(f"«L»: {content}")
        for m in self.ru_dash.finditer(fold(text)):
            prop = labels.get(fold(m.group(1)))
            if prop and not self.info.is_noun_label(prop, lang):
                hits.append(f"L —: {m.group(1)}")
        if question and re.match(r"\s*(?:Возьмите то, у чего|Через что)\b", text):
            hits.append("old template: " + text.split(",")[0][:20])
        return hits


def _plural_head(label: str) -> bool:
    """The head of an English noun phrase (the last word before a preposition) is plural."""
    words = []
    for word in fold(label).split():
        if word in EN_PREPOSITIONS:
            break
        words.append(word)
    head = words[-1] if words else ""
    return bool(re.fullmatch(r"[a-z]+[^su]s", head)) or head in {"people", "children", "data"}


def detect_en_plural_is(item: Item, ctx: Context) -> list[str]:
    if item.lang != "en":
        return []
    texts = [item.question, *(t["text"] for t in item.turns if t["kind"] in FACT_KINDS)]
    return [hit for text in texts for hit in ctx.slots.plural_with_is(text)]


def detect_label_as_noun_question(item: Item, ctx: Context) -> list[str]:
    return ctx.slots.find(item.question, item.lang, question=True)


WH_QUESTION = {
    "en": re.compile(r"^\W*(?:what|which|who|whom|whose|where|when|how)\b", re.I),
    "ru": re.compile(r"^\W*(?:как\w*|что|кто|где|когда|сколько|чей|чья|чь[её]|чьи)\b", re.I),
}


def detect_wh_yes_no(item: Item, ctx: Context) -> str | None:
    """A yes/no answer to a wh-question ("What is the swimming pool of the hotel …?" -> yes)."""
    if item.raw["answer_format"] == "yes_no" and WH_QUESTION[item.lang].search(item.question):
        return item.question
    return None


def detect_label_as_noun_fact(item: Item, ctx: Context) -> list[str]:
    hits = []
    for turn in item.turns:
        if turn["kind"] in FACT_KINDS:
            hits += ctx.slots.find(turn["text"], item.lang, question=False)
    return hits


def _literal_forms(item: Item) -> list[tuple[int, set[str]]]:
    """(fact index, writings) of each non-boolean literal fact: lexical form and dialogue form."""
    values = item.fact_values()
    out = []
    for i, (_, _, o) in enumerate(item.triples):
        if not isinstance(o, ox.Literal) or o.datatype.value == XSD + "boolean":
            continue
        forms = {o.value}
        if i < len(values) and values[i]:
            forms.add(values[i])
        out.append((i, {f for f in forms if f.strip()}))
    return out


def detect_value_as_topic(item: Item, ctx: Context) -> list[str]:
    hits = []
    # Russian is compared by lemma, so a declined name ("у страхового случая CL-0042") is
    # still recognised as the name that holds the code
    key = ru_key if item.lang == "ru" else fold
    literal_facts = [(i, {key(f) for f in forms}) for i, forms in _literal_forms(item)]
    misstated = key(" ".join(t["text"] for t in item.turns if t["kind"] == "misstatement"))
    names = sorted({key(label) for label in (ctx.info.label(i, item.lang) for i in item.iris()) if label},
                   key=len, reverse=True)
    for turn in item.turns:
        if turn["kind"] != "fact":
            continue
        text = key(turn["text"])
        for name in names:  # "CL-0042" inside "Claim CL-0042" is the name, not a mention of the value
            text = word_pattern(name).sub(" | ", text)
        stated = set(turn.get("facts") or [])
        done: set[frozenset[str]] = set()
        for _, forms in literal_facts:
            value = frozenset(forms)
            if value in done:
                continue
            done.add(value)
            expected = sum(1 for j, other in literal_facts if j in stated and other & value)
            expected += count_words(misstated, forms)  # a correction repeats the wrong value ("…, not 17,290")
            if count_words(text, forms) > expected:
                hits.append(f"{sorted(forms)[0]!r} in {turn['text']!r}")
    return hits


def detect_yes_no_value(item: Item, ctx: Context) -> list[str]:
    hits = []
    for turn in item.turns:
        if turn["kind"] in STATING_KINDS:
            text = turn["text"]
            if YES_NO_VALUE[item.lang].search(text) or (
                turn["kind"] == "restate" and RESTATE_YES_NO[item.lang].search(text)
            ):
                hits.append(text)
    return hits


def _label_positions(item: Item, ctx: Context) -> list[tuple[int, int, str]]:
    """(turn index, char offset, IRI) of every mention of an item entity's label."""
    out = []
    for iri in item.iris():
        label = ctx.info.label(iri, item.lang)
        if not label:
            continue
        pattern = word_pattern(label)
        for t, turn in enumerate(item.turns):
            for m in pattern.finditer(fold(turn["text"])):
                out.append((t, m.start(), iri))
    return sorted(out)


def _referent(item: Item, ctx: Context, turn: int, offset: int) -> str | None:
    before = [iri for t, o, iri in _label_positions(item, ctx) if (t, o) < (turn, offset)]
    if before:
        return before[-1]
    return item.triples[0][0] if item.triples else None


def detect_person_it(item: Item, ctx: Context) -> list[str]:
    hits = []
    pattern = IT_IS_A if item.lang == "en" else RU_OBJECT
    for t, turn in enumerate(item.turns):
        for m in pattern.finditer(turn["text"]):
            iri = _referent(item, ctx, t, len(fold(turn["text"][: m.start()])))
            if iri and ctx.info.is_person(iri):
                hits.append(turn["text"])
    return hits


def _strip_relation_labels(text: str, ctx: Context, lang: str) -> str:
    return ctx.slots.any_label[lang].sub(" ", fold(text))


RU_OBJECT_TALK = re.compile(r"объект\w* типа|\bтип\s+—|\bтип:", re.I)


def detect_introduced_as_it(item: Item, ctx: Context) -> list[str]:
    """English ``it's a/an <class>`` / ``this one is a/an``; Russian ``объект типа «…»``,
    ``тип — …`` (about any entity)."""
    pattern = IT_IS_A if item.lang == "en" else RU_OBJECT_TALK
    return [t["text"] for t in item.turns if t["kind"] in FACT_KINDS and pattern.search(t["text"])]


def _without_names(text: str, names: Sequence[str], ctx: Context, lang: str) -> str:
    """``text`` folded without relation labels and without any of the item's entity names
    (Russian: by lemma, so a declined name is a name too)."""
    rest = _strip_relation_labels(text, ctx, lang)
    key = fold if lang == "en" else ru_key
    rest = key(rest)
    for name in names:
        rest = word_pattern(key(name)).sub(" ", rest)
    return rest


def detect_class_restated(item: Item, ctx: Context) -> list[str]:
    hits = []
    lang = item.lang
    texts = [t["text"] for t in item.turns]
    names = sorted({ctx.info.label(i, lang) or "" for i in item.iris()} - {""}, key=len, reverse=True)
    for iri in item.iris():
        label = ctx.info.label(iri, lang)
        if not label or not any(has_words(text, label) for text in texts):
            continue
        for klass in ctx.info.types.get(iri, ()):
            class_label = ctx.info.label(klass, lang)
            if not class_label:
                continue
            head = ctx.info.class_head(class_label, lang)
            if not (has_words(label, head) if lang == "en" else has_words(ru_key(label), ru_key(head))):
                continue  # the name does not say the class ("Andrei Zakharov", an employee)
            for text in texts:
                rest = _without_names(text, names, ctx, lang)
                found = has_words(rest, class_label) if lang == "en" else has_lemmas(rest, class_label)
                if found:
                    whole = has_words(label, class_label) if lang == "en" else has_lemmas(label, class_label)
                    hits.append(f"{'whole class label' if whole else 'class head'} in the name: {text}")
    return hits


def detect_correction_before_intro(item: Item, ctx: Context) -> list[str]:
    """A misstatement before the first fact turn; the evidence says whether a later fact turn
    that states nothing introduces the entity ("re-introduced after the slip"), whether the
    misstatement names none of the item's entities, or whether it names the entity itself
    (the mildest case: the slip is the first thing said about it)."""
    kinds = [t["kind"] for t in item.turns]
    if "misstatement" not in kinds:
        return []
    slip = kinds.index("misstatement")
    first_fact = kinds.index("fact") if "fact" in kinds else len(kinds)
    if slip > first_fact:
        return []
    if any(t["kind"] == "fact" and not t.get("facts") for t in item.turns[slip + 1 :]):
        return ["re-introduced after the slip"]
    if not named_entities(item, ctx, item.turns[slip]["text"]):
        return ["the slip names no entity"]
    return ["the slip names the entity first"]


def detect_same_speaker(item: Item, ctx: Context) -> list[str]:
    turns = item.turns
    return [f"{a['kind']}->{b['kind']}" for a, b in itertools.pairwise(turns) if a["speaker"] == b["speaker"]]


def detect_line_twice(item: Item, ctx: Context) -> list[str]:
    counts = Counter(t["text"].strip() for t in item.turns)
    return [f"{text} ({n}x)" for text, n in counts.items() if n > 1]


_NAME_SPAN = re.compile(r"«?([А-ЯЁ][а-яё]+(?:-[А-ЯЁ][а-яё]+)?(?: [А-ЯЁ][а-яё]+(?:-[А-ЯЁ][а-яё]+)?){1,2})»?")
_WORD_BEFORE = re.compile(r"([А-Яа-яЁё]+)[\s«]*$")


def _governor(text: str, start: int) -> str | None:
    """The word before ``start`` that governs a case other than the nominative, if any:
    a preposition, «касается», a transitive verb (adverbs skipped), or an oblique noun."""
    left = text[:start]
    for _ in range(3):
        m = _WORD_BEFORE.search(left)
        if not m:
            return None
        word = m.group(1)
        parses = _parses(word.casefold())
        if not parses:
            return None
        top = parses[0].tag
        if word.casefold() == "касается":
            return word
        if top.POS == "PREP":
            return word
        speakers_verb = top.POS == "INFN" or {"1per", "2per", "impr"} & set(top.grammemes)
        if top.POS in ("VERB", "INFN") and "tran" in top and speakers_verb:
            return word  # the speaker's or listener's action ("разберём", "посмотри"): the name is its object
        if top.POS == "ADVB" or word.casefold() in ("ещё", "же", "пожалуйста"):
            left = left[: m.start()]
            continue
        common = top.POS == "NOUN" and not {"Name", "Surn", "Patr"} & set(top.grammemes)
        if common and all("nomn" not in p.tag and "accs" not in p.tag for p in parses if p.tag.POS == "NOUN"):
            return word  # an oblique common noun: "сотрудника «Дмитрий Лебедев»"
        return None
    return None


def detect_ru_name_nominative(item: Item, ctx: Context) -> list[str]:
    if item.lang != "ru":
        return []
    hits = []
    for text in [item.question, *(t["text"] for t in item.turns)]:
        for m in _NAME_SPAN.finditer(text):
            if not ru_nominative_only(m.group(1)):
                continue
            gov = _governor(text, m.start())
            if gov:
                hits.append(f"{gov} {m.group(0)}")
    return hits


def detect_ru_label_nominative(item: Item, ctx: Context) -> list[str]:
    if item.lang != "ru":
        return []
    hits = []
    for text in [item.question, *(t["text"] for t in item.turns)]:
        for start, _, content in quoted_spans(text):
            m = _WORD_BEFORE.search(text[:start])
            if not m or text[m.end():start].strip():
                continue
            gov = m.group(1).casefold()
            parses = _parses(gov)
            if gov != "касается" and not (parses and parses[0].tag.POS == "PREP"):
                continue
            first = re.match(r"[«\s]*([А-Яа-яЁё]+)", content)
            if not first:
                continue
            cases = {p.tag.case for p in _parses(first.group(1).casefold()) if p.tag.POS in ("NOUN", "ADJF", "PRTF")}
            if not cases or not cases <= {"nomn", "accs"}:
                continue
            if cases == {"nomn"} or gov not in RU_ACCUSATIVE_PREPS or gov == "касается":
                hits.append(f"{m.group(1)} «{content}»")
    return hits


def detect_ru_reask_nominative(item: Item, ctx: Context) -> list[str]:
    if item.lang != "ru":
        return []
    hits = []
    for turn in item.turns:
        if turn["kind"] not in ("reask", "clarify_q"):
            continue
        words = re.findall(r"[А-Яа-яЁё-]+|[,:;.?!—]", turn["text"])
        for i, word in enumerate(words):
            if word.casefold() not in RU_REASK_VERBS:
                continue
            j = i + 1
            while j < len(words) and (words[j] == "," or words[j].casefold() in ("пожалуйста", "ещё", "раз")):
                j += 1
            if j >= len(words) or not re.fullmatch(r"[А-Яа-яЁё-]+", words[j]):
                continue
            parses = [p for p in _parses(words[j].casefold()) if p.tag.POS in ("NOUN", "ADJF", "PRTF")]
            if any({"Apro", "Ques"} & set(p.tag.grammemes) for p in _parses(words[j].casefold())):
                continue  # an indirect question: "Напомни, какая там дата выезда?"
            if parses and any("nomn" in p.tag for p in parses) and not any("accs" in p.tag for p in parses):
                hits.append(turn["text"])
    return hits


def detect_ru_gender(item: Item, ctx: Context) -> list[str]:
    if item.lang != "ru":
        return []
    hits = []
    for text in [item.question, *(t["text"] for t in item.turns)]:
        for m in _NAME_SPAN.finditer(text):
            gender = ru_nominative_only(m.group(1))
            if not gender:
                continue
            after = re.match(r"[»\s]*([А-Яа-яЁё]+)", text[m.end():])
            if not after:
                continue
            parses = [p for p in _parses(after.group(1).casefold())
                      if p.tag.POS in ("PRTS", "ADJS") or (p.tag.POS == "VERB" and "past" in p.tag)]
            if parses and "plur" not in parses[0].tag and all(p.tag.gender not in (gender, None) for p in parses):
                hits.append(f"{m.group(0)} {after.group(1)}")
    return hits


def _gold_forms(item: Item) -> list[str]:
    forms = []
    for gold in item.golds:
        forms.append(gold)
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", gold):
            try:
                day = dt.date.fromisoformat(gold)
            except ValueError:
                continue
            forms += [locale.format_date(day, "en"), locale.format_date(day, "ru").removesuffix(" г.")]
    return forms


def _contains_gold(text: str, gold: str, lang: str) -> bool:
    number = parse_number(gold) if re.fullmatch(r"-?[\d.,\s\u00a0]+", gold) else None
    if number is not None:
        return any(value == number for _, value in numbers_in(text, lang))
    return mentions(text, gold, lang)


def named_entities(item: Item, ctx: Context, text: str) -> list[str]:
    """Labels of the item's entities that ``text`` names, longest first, each outside the
    longer ones ("Berezka Bank" inside "Berezka Bank card *3318" is not named by itself);
    Russian by lemma ("у Москвы" names "Москва")."""
    ru = item.lang == "ru"

    def key(x: str) -> str:
        return ru_key(x) if ru else fold(x)

    rest = key(text)
    found = []
    labels = {ctx.info.label(i, item.lang) or "" for i in item.iris()}
    for label in sorted((x for x in labels if x), key=len, reverse=True):
        pattern = word_pattern(key(label).strip())
        if pattern.search(rest):
            found.append(label)
            rest = pattern.sub(" | ", rest)
    return found


def is_choice_question(item: Item, ctx: Context) -> bool:
    """The question names two or more of the item's entities and the gold is one of them
    ("Which is larger: A or B?"): naming the options is the point, not a leak."""
    options = named_entities(item, ctx, item.question)
    return len(options) >= 2 and any(fold(g) == fold(o) for g in item.golds for o in options)


def detect_leak_question(item: Item, ctx: Context) -> list[str]:
    if item.raw["answer_format"] == "yes_no" or is_choice_question(item, ctx):
        return []
    return [g for g in _gold_forms(item) if _contains_gold(item.question, g, item.lang)]


def detect_leak_partial(item: Item, ctx: Context) -> list[str]:
    """A code-like token of the gold (3+ characters with a digit: "9605" of "2201 **** ****
    9605") in the question, when the whole gold is not there (that is leak_question)."""
    if item.raw["answer_format"] in ("yes_no", "number", "currency", "percent", "date"):
        return []
    if is_choice_question(item, ctx):
        return []
    if detect_leak_question(item, ctx):
        return []
    tokens = {t for g in item.golds for t in re.findall(r"[\w\-]+", g) if len(t) >= 3 and re.search(r"\d", t)}
    return [t for t in sorted(tokens) if has_words(item.question, t)]


def detect_leak_bridge(item: Item, ctx: Context) -> list[str]:
    if item.raw["answer_format"] == "yes_no":
        return []
    dialogue = " ".join(t["text"] for t in item.turns)
    golds = [g for g in item.golds if len(g) > 1]
    hits = []
    in_question = {fold(x) for x in named_entities(item, ctx, item.question)}
    for iri in item.iris():
        label = ctx.info.label(iri, item.lang)
        if not label or not has_words(dialogue, label) or any(fold(label) == fold(g) for g in golds):
            continue
        if fold(label) in in_question or has_words(item.question, label):
            continue  # named by the question itself: leak_question's case
        for gold in golds:
            if not re.fullmatch(r"[\d.,\s]+", gold) and mentions(label, gold, item.lang):
                hits.append(f"{gold} in {label}")
    return hits


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", fold(text)).strip()


def duplicate_ids(items: Sequence[Item]) -> dict[int, int]:
    """Index of every item that repeats an earlier one's language, question and gold -> the first."""
    first: dict[tuple[str, str, str], int] = {}
    out = {}
    for i, item in enumerate(items):
        key = (item.lang, _norm(item.question), _norm(item.raw["gold"]))
        if key in first:
            out[i] = first[key]
        else:
            first[key] = i
    return out


def _rule_of(item: Item, ctx: Context) -> Rule | None:
    iri = item.meta.get("rule_iri")
    return ctx.info.rules.get(iri) if iri else None


def exact_rule_value(item: Item, ctx: Context) -> Decimal | None:
    """The rule's value on the item's facts before rounding, when it reproduces the gold."""
    from kgsynth.synth.scenarios.rules import RuleEvaluationError, evaluate

    rule = _rule_of(item, ctx)
    if rule is None or rule.rounding is None:
        return None
    roles = {i.relation: i.role for i in rule.inputs}
    values: dict[str, list] = defaultdict(list)
    for _, p, o in item.triples:
        if p in roles:
            values[roles[p]].append(o)
    try:
        exact = evaluate(rule.model_copy(update={"rounding": None}), values).value
        rounded = evaluate(rule, values).value
    except (RuleEvaluationError, ValueError, TypeError, ArithmeticError):
        return None
    if not isinstance(exact, Decimal) or not isinstance(rounded, Decimal):
        return None
    # the gold is this value as the rule rounds it (not, say, the rule's rate)
    return exact if item.raw["gold"] == locale.plain_number(rounded, max(rule.rounding, 0)) else None


def tie_eligible(item: Item, ctx: Context) -> bool:
    return exact_rule_value(item, ctx) is not None


def detect_tie_rounding(item: Item, ctx: Context) -> str | None:
    exact = exact_rule_value(item, ctx)
    rule = _rule_of(item, ctx)
    if exact is None or rule is None or rule.rounding is None:
        return None
    scaled = exact.scaleb(rule.rounding)
    if abs(scaled - scaled.to_integral_value(rounding="ROUND_FLOOR")) != Decimal("0.5"):
        return None
    if TIE_WORDS.search(item.raw["format_instruction"]):
        return None
    return f"{exact} -> {item.raw['gold']}"


def class_eligible(item: Item, ctx: Context) -> bool:
    brackets = ctx.info.bracket_classes()
    return any(fold(ctx.info.label(c, item.lang) or "") == fold(item.raw["gold"]) for c in brackets)


def detect_class_short_forms(item: Item, ctx: Context) -> str | None:
    brackets = ctx.info.bracket_classes()
    gold = item.raw["gold"]
    match = [c for c in brackets if fold(ctx.info.label(c, item.lang) or "") == fold(gold)]
    if not match or len(gold.split()) < 2:
        return None
    rule = brackets[match[0]]
    siblings = [ctx.info.label(c, item.lang) or "" for c, r in brackets.items() if r == rule]
    instruction = item.raw["format_instruction"]
    if sum(1 for s in siblings if s and has_words(instruction, s)) >= 2:
        return None
    words = fold(gold).split()
    shorter = {" ".join(words[i:]) for i in range(1, len(words))} | {" ".join(words[:i]) for i in range(1, len(words))}
    if any(fold(a) in shorter for a in item.raw.get("gold_aliases", [])):
        return None
    return gold


def day_count_eligible(item: Item, ctx: Context) -> bool:
    rule = _rule_of(item, ctx)
    return bool(
        (rule is not None and rule.operation is Operation.days_between and (rule.unit or "days") != "nights")
        or DAY_QUESTION.search(item.question)
    )


def detect_day_count(item: Item, ctx: Context) -> str | None:
    if not day_count_eligible(item, ctx):
        return None
    if INCLUSIVE_WORDS.search(item.question) or INCLUSIVE_WORDS.search(item.raw["format_instruction"]):
        return None
    return item.question


def set_eligible(item: Item, ctx: Context) -> bool:
    return item.raw["answer_format"] == "set"


def detect_set_separator(item: Item, ctx: Context) -> list[str]:
    if item.raw["answer_format"] != "set":
        return []
    if not re.search(r"(?<!semi)comma|(?<!точку с )запят", item.raw["format_instruction"], re.I):
        return []
    hits = [m for m in item.golds if "," in m]
    written = [(tok, v) for t in item.turns for tok, v in numbers_in(t["text"], item.lang) if "," in tok]
    for member in item.golds:
        value = parse_number(member) if re.fullmatch(r"-?[\d.]+", member) else None
        hits += [tok for tok, v in written if value is not None and v == value]
    return hits


def detect_correction_then_more(item: Item, ctx: Context) -> list[str]:
    """The sentence that corrects a value (it holds a value a misstatement turn said) of a
    relation the entity has several values of, and the very next statement (the next
    sentence of that turn, else the next fact turn) gives another value of that relation."""
    misstated = " ".join(t["text"] for t in item.turns if t["kind"] == "misstatement")
    wrong = {tok for tok, _ in numbers_in(misstated, item.lang)}
    if not wrong:
        return []
    groups = Counter((s, p) for s, p, _ in item.triples)
    values = item.fact_values()
    statements = [(t, sentence) for t, turn in enumerate(item.turns) if turn["kind"] == "fact"
                  for sentence in sentences(turn["text"])]
    hits = []
    for n, (_, sentence) in enumerate(statements):
        if not any(tok in wrong for tok, _ in numbers_in(sentence, item.lang)):
            continue
        corrected = [i for i, v in enumerate(values) if i < len(item.triples) and v and v in sentence
                     and groups[item.triples[i][:2]] > 1]
        if not corrected or n + 1 >= len(statements):
            continue
        following = statements[n + 1][1]
        key = item.triples[corrected[0]][:2]
        others = [v for j, v in enumerate(values) if j < len(item.triples) and j not in corrected
                  and item.triples[j][:2] == key and v and v in following]
        if others:
            hits.append(f"{others[0]} right after {sentence!r}")
    return hits


def _rule_constants(rule: Rule) -> set[Decimal]:
    rates = [rule.rate, rule.default_rate, *(c.rate for c in rule.cases)]
    return {(r * 100).normalize() for r in rates if r is not None}


def detect_rule_given_away(item: Item, ctx: Context) -> list[str]:
    hits = []
    question = item.question
    for rule in ctx.info.rules.values():
        label = rule.labels.get(item.lang) or rule.labels.get("")
        quoted = _quoted_texts(question)
        if label and any(fold(q).strip() == fold(label) or ru_key(q) == ru_key(label) for q in quoted):
            hits.append(f"rule label in quotes: {label}")
    if RULE_WORD[item.lang].search(question):
        hits.append("the word rule")
    if RATE_ASK[item.lang].search(question):
        hits.append("asks for the rate")
    rule = _rule_of(item, ctx)
    gold = parse_number(item.raw["gold"]) if re.fullmatch(r"-?[\d.]+", item.raw["gold"]) else None
    percent = item.raw["answer_format"] == "percent"
    if rule is not None and gold is not None and percent and gold.normalize() in _rule_constants(rule):
        hits.append("gold is the rule's rate")
    return hits


def _quoted_texts(text: str) -> list[str]:
    """What stands in «…», “…” or "…"."""
    return [c for _, _, c in quoted_spans(text)] + re.findall(r'[“"]([^”"]+)[”"]', text)


# ---------------------------------------------------------------------------- rows
@dataclass
class Context:
    info: GraphInfo
    slots: LabelSlots


@dataclass(frozen=True)
class Row:
    key: str
    title: str
    definition: str
    detect: Callable[[Item, Context], Any] | None = None
    eligible: Callable[[Item, Context], bool] | None = None
    langs: tuple[str, ...] = LANGS


ROWS = (
    Row("label_as_noun_question", "relation label used as a noun (questions)",
        "raw relation label in a noun slot of the question (en: non-noun label after the/whose/…, any label in "
        "'has L value' or 'linked by L'; ru: «label» in quotes, verb-headed label before a dash, "
        "old 'Возьмите'/'Через что' templates)", detect_label_as_noun_question),
    Row("wh_yes_no", "a wh-question answered yes/no",
        "yes/no gold for a question opening with what/which/how… (ru: какой/что/сколько…), e.g. a boolean "
        "relation asked as a noun ('What is the swimming pool of …?')", detect_wh_yes_no),
    Row("label_as_noun_fact", "relation label used as a noun (fact turns)",
        "same slots in a turn stating a fact, non-noun labels only (ru: also «label» in quotes)",
        detect_label_as_noun_fact),
    Row("value_as_topic", "a value used as the topic",
        "a fact turn mentions a literal fact value more often than it states it (e.g. 'Can we look at 249 today?')",
        detect_value_as_topic),
    Row("yes_no_value", "yes/no used as a value",
        "a turn stating a fact says '… is yes', ': no', '— да', 'It's yes'", detect_yes_no_value),
    Row("person_it", "a person called 'it' / «объект»",
        "'it's a/an …' (ru: «объект») whose referent is a person (pymorphy3 name)", detect_person_it),
    Row("introduced_as_it", "an entity introduced as 'it's a …'",
        "en: 'it's a/an', 'this one is a/an' in a fact turn (any entity); ru: 'объект типа', 'тип —'",
        detect_introduced_as_it),
    Row("class_restated", "class stated that the name already gives",
        "a turn names the entity and, outside its label, its class head word, which the label contains "
        "('Trip TR-0019 — it's a trip')", detect_class_restated),
    Row("en_plural_is", "en: a plural label with 'is'",
        "a relation label with a plural head before 'is'/'was' ('the trip expenses is 207,900')",
        detect_en_plural_is, langs=("en",)),
    Row("correction_before_intro", "a correction before the entity is introduced",
        "a misstatement turn precedes the first fact turn", detect_correction_before_intro),
    Row("same_speaker", "same speaker twice in a row", "two consecutive turns have the same speaker",
        detect_same_speaker),
    Row("noise_pool", "noise lines across the dataset",
        "distinct noise/distractor lines / occurrences of the most frequent one"),
    Row("line_twice", "a line twice in one dialogue", "a dialogue in which one turn text occurs twice",
        detect_line_twice),
    Row("ru_name_nominative", "ru: a name in the nominative after a governing word",
        "a person's full name (pymorphy3 Name+Surn/Patr, nominative) after a preposition, «касается», a "
        "1st/2nd-person or imperative transitive verb, or an oblique noun", detect_ru_name_nominative, langs=("ru",)),
    Row("ru_label_nominative", "ru: a quoted label in the nominative after a preposition",
        "«…» whose first word can only be nominative (or nom./acc. after a non-accusative preposition) right "
        "after a preposition or «касается»", detect_ru_label_nominative, langs=("ru",)),
    Row("ru_reask_nominative", "ru: a re-ask with a nominative noun phrase",
        "'Повтори, пожалуйста, дата выезда?': nominative where the accusative differs after an imperative",
        detect_ru_reask_nominative, langs=("ru",)),
    Row("ru_gender", "ru: a name with a verb of the other gender",
        "a person's name followed by a past verb / short participle of the other gender ('Ксения … связан')",
        detect_ru_gender, langs=("ru",)),
    Row("leak_question", "answer leak: the question contains the gold",
        "gold or alias (set: a member) as whole words in the question (ru by lemma; numbers by value); "
        "yes/no and choice questions skipped", detect_leak_question),
    Row("leak_partial", "answer leak: a code of the gold in the question",
        "a 3+ character token of the gold with a digit ('9605' of '2201 **** **** 9605') in the question, "
        "the whole gold not", detect_leak_partial),
    Row("leak_bridge", "answer leak: the gold inside another mentioned name",
        "gold or alias as whole words inside the label of another source-triple entity the dialogue mentions "
        "(and the question does not)",
        detect_leak_bridge),
    Row("duplicates", "duplicates (same language, question and gold)",
        "items that repeat an earlier item's question and gold"),
    Row("tie_rounding", "ambiguous: a rounding tie",
        "exact rule value on .5 at the rounding digit, instruction silent on ties (of rule items with rounding)",
        detect_tie_rounding, tie_eligible),
    Row("class_short_forms", "ambiguous: a class answer with short forms",
        "multi-word bracket-class gold, no shorter alias, allowed labels not listed (of class answers)",
        detect_class_short_forms, class_eligible),
    Row("day_count", "ambiguous: a day count not said inclusive or not",
        "DaysBetween rule (days) or 'how many days', no inclusive/exclusive/nights wording (of day counts)",
        detect_day_count, day_count_eligible),
    Row("set_separator", "ambiguous: comma separator vs a comma inside a member",
        "set instruction says commas; a member has a comma or is written with one in the dialogue (of set items)",
        detect_set_separator, set_eligible),
    Row("correction_then_more", "ambiguous: another value right after a correction",
        "the statement right after a corrected value of a multi-valued relation gives another value of it",
        detect_correction_then_more),
    Row("rule_given_away", "the question gives the rule away",
        "question has a rule label in quotes or 'rule'/'правило', asks for the rate, or a percent gold is the "
        "rule's rate",
        detect_rule_given_away),
)


def load_items(dataset: Path) -> list[Item]:
    path = dataset / "items.jsonl" if dataset.is_dir() else dataset
    with path.open(encoding="utf-8") as f:
        return [Item.of(json.loads(line)) for line in f if line.strip()]


def measure(items: Sequence[Item], ctx: Context) -> dict[str, Any]:
    """Every row's counts by language, with sub-counts and examples."""
    totals = Counter(item.lang for item in items)
    result: dict[str, Any] = {"items": {**{lang: totals.get(lang, 0) for lang in LANGS}, "all": len(items)}, "rows": {}}
    duplicates = duplicate_ids(items)
    for row in ROWS:
        counts: Counter[str] = Counter()
        eligible: Counter[str] = Counter()
        details: Counter[str] = Counter()  # items per kind of evidence
        shapes: Counter[str] = Counter()  # items per shape
        examples: list[dict] = []
        if row.key == "noise_pool":
            entry = _noise_pool(items)
        else:
            for index, item in enumerate(items):
                if item.lang not in row.langs:
                    continue
                if row.eligible is not None and not row.eligible(item, ctx):
                    continue
                eligible[item.lang] += 1
                found = index in duplicates if row.key == "duplicates" else row.detect(item, ctx)
                if not found:
                    continue
                counts[item.lang] += 1
                evidence = found if isinstance(found, list) else [found] if isinstance(found, str) else []
                kinds = {_detail_key(row.key, e) for e in evidence} - {None}
                if row.key == "duplicates":
                    other = items[duplicates[index]]
                    same_cell = other.meta.get("difficulty") == item.meta.get("difficulty")
                    kinds = {"same difficulty" if same_cell else "another difficulty"}
                    evidence = [f"repeats {other.raw.get('id')}"]
                details.update(kinds)
                shapes[str(item.meta.get("shape"))] += 1
                if len(examples) < EXAMPLES:
                    examples.append({"id": item.raw.get("id"), "language": item.lang, "question": item.question,
                                     "evidence": evidence[:3]})
            entry = {
                "count": {**{lang: counts.get(lang, 0) for lang in row.langs}, "all": sum(counts.values())},
                "eligible": (
                    {**{lang: eligible.get(lang, 0) for lang in row.langs}, "all": sum(eligible.values())}
                    if row.eligible is not None else None
                ),
                "details": dict(details.most_common()),
                "by_shape": dict(shapes.most_common()),
                "examples": examples,
            }
        result["rows"][row.key] = {"title": row.title, "definition": row.definition, **entry}
    return result


def _detail_key(row: str, evidence: str) -> str | None:
    """A short kind of one piece of evidence, for the sub-counts (None: no sub-count)."""
    if row in ("label_as_noun_question", "label_as_noun_fact"):
        return "slot " + evidence.rsplit(": ", 1)[0]
    if row in ("class_restated", "correction_before_intro", "rule_given_away"):
        return evidence.split(":")[0]
    if row == "same_speaker":
        return evidence
    if row in ("ru_name_nominative", "ru_label_nominative"):
        return "after " + evidence.split()[0].casefold()
    return None


def _noise_pool(items: Sequence[Item]) -> dict[str, Any]:
    by_lang: dict[str, Counter[str]] = {lang: Counter() for lang in LANGS}
    twice: Counter[str] = Counter()
    for item in items:
        lines = Counter(t["text"].strip() for t in item.turns if t["kind"] in NOISE_KINDS)
        by_lang.setdefault(item.lang, Counter()).update(lines)
        if any(n > 1 for n in lines.values()):
            twice[item.lang] += 1
    stats = {}
    for lang, lines in by_lang.items():
        top = lines.most_common(1)
        stats[lang] = {
            "distinct": len(lines),
            "max": top[0][1] if top else 0,
            "most_frequent": top[0][0] if top else None,
            "dialogues_with_a_noise_line_twice": twice.get(lang, 0),
        }
    return {"count": stats, "eligible": None, "details": {}, "by_shape": {}, "examples": []}


# ---------------------------------------------------------------------------- output
def _cell(row: dict, lang: str) -> str:
    if row.get("count") is None:
        return ""
    if isinstance(row["count"].get(lang), dict):  # the noise pool
        s = row["count"][lang]
        return f"{s['distinct']} lines, max {s['max']}×"
    if lang not in row["count"]:
        return "–"
    n = row["count"][lang]
    if row.get("eligible"):
        return f"{n} / {row['eligible'][lang]}"
    return str(n)


def markdown(result: dict, title: str) -> str:
    items = result["items"]
    lines = [
        (f"Artefacts of issue 12 in {title}: {items['all']} items ({items['en']} en, {items['ru']} ru); "
         "counts are items (a / b: of b eligible items)."),
        "",
        "| pattern | en | ru | all | what is counted |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for row in result["rows"].values():
        all_cell = "" if isinstance(row["count"].get("en"), dict) else _cell(row, "all")
        lines.append(f"| {row['title']} | {_cell(row, 'en')} | {_cell(row, 'ru')} | {all_cell} | {row['definition']} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("dataset", type=Path, help="a dataset folder (with items.jsonl) or an items.jsonl file")
    parser.add_argument("--graph", type=Path, nargs="+", default=[ROOT / "data" / "demo"],
                        help="the graph it came from (files or folders)")
    parser.add_argument("--json", type=Path, help="also write every count, sub-count and example here")
    parser.add_argument("--labels", action="store_true", help="also list how each relation label is classified")
    args = parser.parse_args(argv)
    kg = KnowledgeGraph.load(*args.graph, lang=LANGS)
    info = GraphInfo.from_kg(kg)
    ctx = Context(info, LabelSlots(info))
    items = load_items(args.dataset)
    result = measure(items, ctx)
    result["dataset"] = str(args.dataset)
    result["relation_labels"] = {
        lang: {
            label: ("noun" if info.is_noun_label(p, lang) else "not a noun")
            for label, p in sorted(ctx.slots.by_lang[lang].items())
        }
        for lang in LANGS
    }
    print(markdown(result, str(args.dataset)))
    if args.labels:
        for lang in LANGS:
            non = [label for label, kind in result["relation_labels"][lang].items() if kind != "noun"]
            print(f"\n{lang} relation labels read as not a noun phrase ({len(non)}): {', '.join(non)}")
    if args.json:
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
