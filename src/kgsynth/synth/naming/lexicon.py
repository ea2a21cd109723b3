"""How relations and entities are put into words, in English and Russian.

A relation is spoken through a *noun form*: what its value is to the subject ("monthly
salary", "city of residence"; «месячная зарплата»), and an *inverse noun form*: what the
subject is to the value ("employee" for works-in, "order" for ordered-by; «сотрудник»).
Every question and fact turn is built from these, so a label such as "located in" or
"ordered by" is never put where a noun belongs; a boolean relation is said as a sentence
and asked as a yes/no question. A graph may give the forms with ``kgs:nounForm``,
``kgs:inverseNounForm``, ``kgs:yesForm``, ``kgs:noForm`` and ``kgs:questionForm``
(docs/vocabulary.md); otherwise they come from the label:

* English: a noun phrase is used as it is; a label that starts with a preposition keeps
  the words after it ("in country" -> "country"); a verb-like label (a participle or a verb
  followed by a preposition: "located in", "works in", "ordered by") gets the class of its
  values, or the last noun after its preposition ("placed at store" -> "store"); labels that
  read as paths (FB15k-237's "award award category category of") are replaced by the
  last segment of the IRI first.
* Russian: a label that is a noun phrase (pymorphy: an adjective or a noun first) is used
  and declined by its head; a verb-like label ("находится в стране") keeps its last noun
  ("страна"); anything else, and an English label in a Russian sentence, is named as a
  field: «значение «nationality»», which declines through «значение».

Russian names are declined (``morph.decline``): people word by word, noun phrases by
their head ("Заказ ORD-1" -> "заказа ORD-1"), and a proper name that pymorphy cannot
decline ("Парус Страхование") gets its class before it: «страховой компании «Парус
Страхование»».
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from decimal import Decimal
from functools import cache

import pyoxigraph as ox
from pydantic import BaseModel, ConfigDict

from kgsynth.formats import locale, morph
from kgsynth.formats.answers import has_word
from kgsynth.kg import REGION_MARK, KnowledgeGraph, local_name
from kgsynth.kg.vocab import KGS, LABEL_PATH, RDF_TYPE, XSD
from kgsynth.queries import Node, share_field_names
from kgsynth.synth.naming.words import inflection, relation_words, russian_of

FORM_TERMS = {
    "noun": KGS + "nounForm", "inverse_noun": KGS + "inverseNounForm", "yes": KGS + "yesForm", "no": KGS + "noForm",
    "question": KGS + "questionForm",
}
_FORMS_QUERY = """SELECT ?p ?term ?form WHERE { VALUES ?term { %s } ?p ?term ?form }""" % " ".join(
    f"<{t}>" for t in FORM_TERMS.values()
)
_CLASS_QUERY = "SELECT ?e ?c WHERE {\n#VALUES\n?e <%s> ?c }" % RDF_TYPE
_OWN_RELATIONS = "SELECT DISTINCT ?e ?p WHERE {\n#VALUES\n?e ?p ?o }"
_LEARN_BATCH = 500  # entities per query: a VALUES block a server takes in one POST
# kinds too vague to name an entity by («у места «Tacoma»» says less than «у Tacoma»)
_VAGUE_KINDS = frozenset({"место", "объект", "территория", "регион", "населённый пункт"})
_DOMAINS_QUERY = "SELECT ?c ?d WHERE { ?c <%sdomain> ?d }" % KGS
_PREPOSITIONS = frozenset("in at by of for on to from with into about as under over per within".split())
_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
_YES_NO = {"en": ("yes", "no"), "ru": ("да", "нет")}
_DATE_WORD = re.compile(r"\bdate\b")
# a person's gender as graphs record it: a relation so named (schema:gender, foaf:gender, Freebase's
# people/person/gender, Wikidata's P21) whose value, or its label, says "female"
_GENDER_QUERY = ("SELECT ?g ?label WHERE {\n#VALUES\n?e ?p ?g . FILTER(REGEX(STR(?p), \"(gender|sex|P21)$\", \"i\"))\n"
                 f"OPTIONAL {{ ?g {LABEL_PATH} ?label }} }}")
_FEMALE = frozenset({"female", "woman", "f", "женский", "женщина", "q6581072"})
# Russian nouns of a person that name a woman in their feminine («супруга», «подруга»)
_FEMININE_RU = {"супруг": "супруга", "друг": "подруга", "партнёр": "партнёрша", "актёр": "актриса",
                "студент": "студентка", "победитель": "победительница"}


def is_cyrillic(text: str) -> bool:
    return bool(_CYRILLIC.search(text))


class Lexicon:
    """Noun forms of relations and names of entities, read once per graph.

    Args:
        kg: the graph: ``kgs:*Form`` literals on properties, ``rdf:type`` of entities.
    """

    def __init__(self, kg: KnowledgeGraph):
        self.kg = kg
        self._forms: dict[str, dict[str, dict[str, str]]] = {}  # relation IRI -> form -> lang -> text
        for prop, term, form in kg.select(_FORMS_QUERY):
            if isinstance(form, ox.Literal):
                name = next(k for k, v in FORM_TERMS.items() if v == term.value)
                self._forms.setdefault(prop.value, {}).setdefault(name, {})[form.language or ""] = form.value
        self._classes: dict[str, Node | None] = {}  # entity IRI -> its class
        self._class_nodes: dict[str, Node] = {}  # class IRI -> the class with its labels
        self._kinds: dict[str, str | None] = {}  # entity IRI -> its Russian kind noun, for Latin names
        self._typed: dict[str, str | None] = {}  # entity IRI -> the type its relations' paths name, in English
        self._domains: dict[str, str] = {}  # class (or category, rule) IRI -> local name of its kgs:domain
        self._women: dict[str, bool] = {}  # entity IRI -> whether a gender relation says she is a woman
        rows = sorted(kg.select(_DOMAINS_QUERY), key=lambda row: (row[0].value, row[1].value), reverse=True)
        for cls, domain in rows:
            if isinstance(domain, ox.NamedNode):  # the first domain by IRI wins (written last)
                self._domains[cls.value] = local_name(domain.value)
        # the last entity named and its names by (language, case): a scenario's question, its
        # wording and each fact about the entity name it again
        self._named: tuple[Node | None, dict[tuple[str, str], str]] = (None, {})

    # ------------------------------------------------------------------ relations
    def form(self, relation: Node, name: str, lang: str) -> str | None:
        """A form the graph gives for ``relation`` (``noun``, ``inverse_noun``, ``yes``, ``no``)."""
        by_lang = self._forms.get(relation.value, {}).get(name, {})
        return by_lang.get(lang) or (by_lang.get("") if lang == "en" else None)

    def noun(self, relation: Node, lang: str, value: Node | None = None) -> str:
        """What the relation's value is to its subject, as a noun phrase in the nominative."""
        given = self.form(relation, "noun", lang)
        if given:
            return given
        value_class = self.class_of(value) if value is not None and value.kind == "iri" else None
        if lang == "en":
            return english_noun(relation.labels.get("en") or relation.label, relation.value,
                                value_class.label_in("en") if value_class else None)
        return russian_noun(relation.labels.get("ru"), self.noun(relation, "en", value),
                            value_class.labels.get("ru") if value_class else None)

    def stating_noun(self, relation: Node, lang: str, value: Node) -> str:
        """The noun of a sentence or question that states ``value``: :meth:`noun`, except that
        a date whose value is only a year is named by the year ("the year of death is 1969",
        «год смерти — 1969»), as a person says it; a rule's question, which asks of the date,
        keeps :meth:`noun`."""
        noun = self.noun(relation, lang, value)
        if not value.is_year:
            return noun
        if lang == "en":
            return _DATE_WORD.sub("year", noun)
        return "год" + noun[4:] if noun == "дата" or noun.startswith("дата ") else noun

    def in_value_gender(self, noun: str, value: Node) -> str:
        """A Russian noun of a person in the gender of the person it names: «супруга» of a
        woman, where the relation's noun is «супруг»."""
        if not any(w in _FEMININE_RU for w in noun.split()) or not self.is_woman(value):
            return noun
        words = noun.split()
        at = next(i for i, w in enumerate(words) if w in _FEMININE_RU)
        feminine = _FEMININE_RU[words[at]]
        return " ".join([*(morph.agree(w, feminine) for w in words[:at]), feminine, *words[at + 1:]])  # «бывшая партнёрша»

    def is_woman(self, node: Node) -> bool:
        """Whether an entity is a woman: her Russian name says so, or a gender relation of hers does."""
        if node.kind != "iri":
            return False
        gender = morph.person_gender(node.labels.get("ru", ""))
        if gender:
            return gender == "femn"
        if node.value not in self._women:
            said = (t for row in self.kg.select(_GENDER_QUERY, (("e",), [(ox.NamedNode(node.value),)])) for t in row if t)
            self._women[node.value] = any(
                (local_name(t.value) if isinstance(t, ox.NamedNode) else t.value).casefold() in _FEMALE for t in said)
        return self._women[node.value]

    def inverse_noun(self, relation: Node, lang: str, subject: Node | None = None) -> str:
        """What the subject is to the relation's value ("employee" of a department)."""
        given = self.form(relation, "inverse_noun", lang)
        if given:
            return given
        subject_class = self.class_of(subject) if subject is not None and subject.kind == "iri" else None
        label = subject_class.labels.get(lang) if subject_class else None
        if label and (lang == "en" or is_cyrillic(label)):
            return label.lower() if lang == "en" and not label.isupper() else label
        # the type a path-shaped IRI files the relation under ("film" of film/film/genre)
        typed = relation_words(relation.value, relation.labels.get("en") or relation.label).subject_noun
        if typed is None and subject is not None and subject.kind == "iri":
            typed = self._kind_by_relations(subject)  # what the subject's other relations say it is
        said = typed if lang == "en" or typed is None else russian_of(typed)
        if said:
            return said
        return "entry" if lang == "en" else "объект"

    def yes_no(self, relation: Node, value: bool, lang: str) -> str | None:
        """The graph's statement of a boolean fact, with ``{s}`` for the subject, or None."""
        return self.form(relation, "yes" if value else "no", lang)

    def yes_no_question(self, relation: Node, subject: Node | str, lang: str) -> str:
        """A boolean relation asked as a yes/no question about ``subject`` (an entity or a
        nominative noun phrase): the graph's ``kgs:questionForm`` ("Does {s} have a swimming
        pool?"), else its ``kgs:yesForm`` after "Is it true that", else the noun, marked."""
        asked = self.form(relation, "question", lang)
        if asked:
            return fill_subject(asked, subject, lang, self)
        statement = self.yes_no(relation, True, lang)
        if statement:
            opening = "Is it true that" if lang == "en" else "Верно ли, что"
            return f"{opening} {fill_subject(statement, subject, lang, self)}?"
        noun = self.noun(relation, lang)
        if lang == "en":
            return fill_subject(f"Is {{s}} marked as “{noun}”: yes or no?", subject, lang, self)
        return fill_subject(f"{noun[:1].upper()}{noun[1:]} у {{s:gent}} — да или нет?", subject, lang, self)

    # ------------------------------------------------------------------ entities
    def class_of(self, node: Node | None) -> Node | None:
        """The entity's class (the first by IRI when it has several), with its labels."""
        if node is None or node.kind != "iri":
            return None
        if node.value not in self._classes:
            self._learn_classes([node.value])
        return self._classes[node.value]

    def learn(self, nodes: Iterable[Node]) -> None:
        """Look up together what the entities are (their class, the type their relations'
        IRIs name) where not looked up yet: one query for hundreds of entities costs about
        what four queries for one do, and a run names tens of thousands."""
        iris = sorted({n.value for n in nodes if n.kind == "iri"})
        for start in range(0, len(iris), _LEARN_BATCH):
            batch = iris[start:start + _LEARN_BATCH]
            self._learn_classes([i for i in batch if i not in self._classes])
            self._learn_types([i for i in batch if i not in self._typed])

    def _learn_classes(self, iris: list[str]) -> None:
        if not iris:
            return
        found: dict[str, list[str]] = defaultdict(list)
        for entity, cls in self.kg.select(_CLASS_QUERY, (("e",), [(ox.NamedNode(i),) for i in iris])):
            if isinstance(cls, ox.NamedNode):
                found[entity.value].append(cls.value)
        first = {iri: min(classes) for iri, classes in found.items()}
        unknown = [ox.NamedNode(c) for c in set(first.values()) if c not in self._class_nodes]
        for term, labels in self.kg.labels(unknown).items():
            self._class_nodes[term.value] = Node.from_term(term, self.kg.pick_label(term, labels), labels)
        for iri in iris:
            self._classes[iri] = self._class_nodes[first[iri]] if iri in first else None

    def _learn_types(self, iris: list[str]) -> None:
        if not iris:
            return
        kinds: dict[str, Counter[str]] = {iri: Counter() for iri in iris}
        for entity, relation in self.kg.select(_OWN_RELATIONS, (("e",), [(ox.NamedNode(i),) for i in iris])):
            if typed := relation_words(relation.value, None).subject_noun:
                kinds[entity.value][typed] += 1
        for iri, counted in kinds.items():
            self._typed[iri] = min(counted, key=lambda k: (-counted[k], k)) if counted else None

    def domain(self, entity_class: Node | None, *entities: Node) -> str | None:
        """The local name of the ``kgs:domain`` ("travel") of ``entity_class``, else of the
        first of ``entities`` whose class has one (docs/vocabulary.md: entities get their
        domain through their class). A graph without domains costs no query."""
        if not self._domains:
            return None
        if entity_class is not None and entity_class.value in self._domains:
            return self._domains[entity_class.value]
        classes = (self.class_of(e) for e in entities)
        return next((self._domains[c.value] for c in classes if c is not None and c.value in self._domains), None)

    def name(self, node: Node, lang: str, case: str = "nomn") -> str:
        """How a sentence names ``node``: a literal as the dialogue writes it, an entity by
        its label, declined in Russian (a proper name after its declined class)."""
        if node.kind == "literal":
            return spoken_value(node, lang)
        if node is not self._named[0]:
            self._named = (node, {})
        names = self._named[1]
        if (lang, case) not in names:
            names[lang, case] = self._entity_name(node, lang, case)
        return names[lang, case]

    def referent(self, node: Node, lang: str, case: str = "nomn") -> str:
        """How a sentence names ``node`` as what it speaks of (a subject, the dialogue's topic):
        :meth:`name`, with "the" before an English common noun ("the article number of the
        detective novel"), which a value leaves bare ("the category is books")."""
        name = self.name(node, lang, case)
        if lang != "en" or node.kind != "iri" or name.startswith(("the ", "a ", "an ")):
            return name
        label = node.label_in("en")
        if label[:1].islower() and " " in label:  # a kind of thing written lower-case ("business trip"), not an adjective
            return inflection().a(name)
        # lower-cased here because it is a common noun (_common_noun_en), not a name written so ("eBay");
        # or a common noun that opens with an abbreviation ("USB-C cable")
        if name[:1].islower() or self._common_noun_en(node, label):
            return f"the {name}"
        return name

    def _entity_name(self, node: Node, lang: str, case: str) -> str:
        label = node.label_in(lang)
        if lang == "en":
            if self._takes_the(node, label) or self._name_takes_the(node, label):
                return f"the {label}"
            lower = self._common_noun_en(node, label) and not label.split()[0].isupper()
            return label[:1].lower() + label[1:] if lower else label
        if not is_cyrillic(label):
            # a Latin name does not decline: an oblique case says it through its kind («у фильма «Alexander»»)
            kind = self._russian_kind(node) if case != "nomn" else None
            return f"{morph.decline(kind, case)} «{label}»" if kind else label
        if label[:1].isupper() and morph.starts_with_common_noun(label):
            label = label[:1].lower() + label[1:]  # "Отель «Аврора»" inside a sentence: "у отеля «Аврора»"
        if case == "nomn":
            return label
        declined = morph.decline(label, case)
        if declined != label or not morph.is_proper_name(label):
            return declined
        cls = self.class_of(node)
        cls_label = cls.labels.get("ru") if cls else None
        if not cls_label or not is_cyrillic(cls_label):
            return label
        return f"{morph.decline(cls_label.lower(), case)} «{label.strip('«»')}»"

    def _russian_kind(self, node: Node) -> str | None:
        """What an entity is, as a Russian noun a sentence can decline: its class's Russian
        label, else the type most of its relations' IRIs file it under ("film" of
        film/film/genre: «фильм»). None for a person (a name is said bare, as Russian
        editors leave a Latin name) and for a kind too vague to help."""
        if node.value not in self._kinds:
            cls = self.class_of(node)
            given = cls.labels.get("ru") if cls else None
            kind = given.lower() if given and is_cyrillic(given) and not given.isupper() else given
            if not kind or not is_cyrillic(kind):
                typed = self._kind_by_relations(node)
                kind = russian_of(typed) if typed else None
            vague = kind is None or kind in _VAGUE_KINDS or morph.animate(kind)
            self._kinds[node.value] = None if vague else kind
        return self._kinds[node.value]

    def _kind_by_relations(self, node: Node) -> str | None:
        """The English noun of the type most of the entity's relations' IRIs file them under
        ("film" for film/film/genre, film/film/country ...), or None."""
        if node.value not in self._typed:
            self._learn_types([node.value])
        return self._typed[node.value]

    @staticmethod
    def _common_noun_en(node: Node, label: str) -> bool:
        """Whether an English label is a common noun phrase written with a capital only
        because it opens the label ("Rain jacket", "Head of department"): its other words
        are lower case and its Russian label opens with a common noun, which Russian writes
        lower-case inside a sentence too. Names ("Moscow", "Yantar Bank") keep theirs."""
        russian = node.labels.get("ru", "")
        if not (label[:1].isupper() and is_cyrillic(russian)):  # the cheap signs first: most labels stop here
            return False
        first, *rest = label.split()
        opens = label[1:2].islower() or (first.isupper() and len(first) > 1 and rest != [])  # "Rain jacket", "USB-C cable"
        return opens and all(not w[:1].isupper() for w in rest) and morph.starts_with_common_noun(russian)

    def _takes_the(self, node: Node, label: str) -> bool:
        """Whether an English label is a description that needs "the": it says its class in
        lower case after a name ("Pine store", "Sokol Bank card *1") or has a complement
        ("Management board of Kedr Pharma"). Names ("Orient Hotel", "Booking BK-1") do not."""
        words = label.split()
        # both signs need a lower-case word after the first: most names have none and cost no query
        if not label[:1].isupper() or not any(w.islower() for w in words[1:]):
            return False
        if any(w.islower() and nxt in ("of", "in") for w, nxt in zip(words, words[1:], strict=False)):
            return True
        cls = self.class_of(node)
        return cls is not None and _class_head(cls.label_in("en").casefold(), "en") in words[1:]

    def _name_takes_the(self, node: Node, label: str) -> bool:
        """Whether an English proper name is said with "the", as English says "the University
        of Portland", "the 58th Primetime Emmy Awards", "the Pacific Ocean", "the Tampa Bay
        Buccaneers": an ordinal first; a name with a complement ("of", "for", "in"), a
        state's first word ("United ..."), or a head such as Ocean, Awards, Zone; a team's
        plural. Not people's names, nor titles of works ("Eternal Sunshine of the Spotless Mind")."""
        # the name before a bracket or a comma ("Queens College, City University of New York")
        words = label.split(" (")[0].split(",")[0].split()
        if len(words) < 2 or words[0].casefold() == "the" or any(w.endswith("'s") for w in words):
            return False  # "Newell's Old Boys", "Macy's": a possessive is the name's own determiner
        if _ORDINAL.fullmatch(words[0]):
            return True
        head = REGION_MARK.sub("", words[-1]).casefold()  # a name kept with its region ("Comedy-GB"): its head without it
        by_words = (words[0] in _THE_OPENERS or head in _THE_HEADS
                    or any(w in _COMPLEMENTS for w in words[1:-1]))
        plural = (words[-1].endswith("s") and not words[-1].endswith("ss")) or words[-1] == "Sox"
        if not (by_words or plural):  # most names: what the entity is cannot change the answer, and costs queries
            return False
        kind = self._english_kind(node) or ""  # unknown on a graph without types (DBpedia's names alone)
        if kind in _WORK_KINDS or self.is_person(node):
            return False
        return by_words or "team" in kind

    def is_person(self, node: Node) -> bool:
        """Whether an entity is a person, asked about with "who": its Russian label reads as a
        person's name, or what it is (its class, the type its relations name) is someone."""
        if node.kind != "iri":
            return False
        if morph.person_gender(node.labels.get("ru", "")) is not None:
            return True
        cls = self.class_of(node)
        if cls is not None:
            russian = cls.labels.get("ru") or russian_of(cls.label_in("en").casefold()) or ""
            return morph.animate(russian)
        # by the types its relations name: people are filed as persons ("people/person/..."); an
        # award winner may be a company, so only "person" says someone
        return self._kind_by_relations(node) == "person"

    def _english_kind(self, node: Node) -> str | None:
        """What the entity is, in English: its class's label, else the type its relations' IRIs name."""
        cls = self.class_of(node)
        label = cls.labels.get("en") if cls else None
        return label.casefold() if label else self._kind_by_relations(node)


_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")
# nouns whose value names a kind or a title, said without an article
_NAMING_NOUNS = frozenset("title level status type category grade class rank tier segment purpose tariff".split())
_COMPLEMENTS = frozenset({"of", "for", "in", "on"})
# "University" is none: "the University of Portland" takes "the" by its "of", "University College Dublin" none
_THE_OPENERS = frozenset({"United", "Republic", "Kingdom", "Federation", "Commonwealth"})
_THE_HEADS = frozenset("ocean sea river gulf channel mountains alps islands east empire republic kingdom union "
                       "federation zone awards games olympics powers states senate congress parliament navy army "
                       "party council commission organization organisation association".split())
# kinds whose names are titles, said without an article whatever their words
_WORK_KINDS = frozenset({"film", "tv program", "album", "book", "song", "work", "composition", "computer videogame",
                         "award nominated work", "award winning work", "netflix genre", "software"})


def spoken_value(node: Node, lang: str) -> str:
    """A literal as a person would say it: dates with month names, grouped numbers, yes/no."""
    value = node.python
    if isinstance(value, bool):
        return _YES_NO[lang][0 if value else 1]
    if node.is_year:
        return node.value
    if isinstance(value, dt.datetime):
        return locale.format_date(value.date(), lang)
    if isinstance(value, dt.date):
        return locale.format_date(value, lang)
    if isinstance(value, int):
        return locale.format_number(value, lang)
    if isinstance(value, Decimal):
        return locale.format_number(locale.as_written(value), lang)
    return node.value


# ---------------------------------------------------------------------- fallbacks from labels
@cache
def english_noun(label: str, iri: str, value_class: str | None = None) -> str:
    """A noun phrase for a relation that has only its label (see the module docstring)."""
    text = relation_words(iri, label).noun
    words = text.split()
    if not words:
        return "value"
    if words[0].lower() in _PREPOSITIONS and len(words) > 1:
        return " ".join(words[1:])
    # "located in", "ordered by", "works in", "nominated for"; not "returned product"
    verb_like = words[-1].lower() in _PREPOSITIONS or (
        len(words) > 1 and words[1].lower() in _PREPOSITIONS and words[0].lower().endswith(("ed", "s"))
    ) or (len(words) == 1 and words[0].lower().endswith("ed"))
    if not verb_like:
        return text
    if value_class:
        return value_class.lower()
    after = [w for w in words[1:] if w.lower() not in _PREPOSITIONS]
    if after and words[-1].lower() not in _PREPOSITIONS:
        return after[-1]
    return f"“{text}” value"


@cache
def russian_noun(label_ru: str | None, english: str, value_class: str | None = None) -> str:
    """A Russian noun phrase for a relation that has only its label (see the module docstring)."""
    if label_ru and is_cyrillic(label_ru):
        words = label_ru.split()
        if words[0].isupper() or morph.nominative_head(words[0]) is not None:  # "ИНН", "дата рождения"
            return label_ru
        if value_class and is_cyrillic(value_class):
            return value_class.lower()
        nouns = [w for w in words[1:] if morph.analyzer().parse(w.casefold())[0].tag.POS == "NOUN"]
        if nouns:
            return morph.analyzer().parse(nouns[-1].casefold())[0].normal_form
        return f"значение «{label_ru}»"
    return russian_of(english) or f"значение «{english}»"


# ---------------------------------------------------------------------- what a dialogue needs
class EntityWording(BaseModel):
    """The scenario's entity as the dialogue names it in one language."""

    model_config = ConfigDict(frozen=True)

    name: str
    cases: dict[str, str] = {}  # Russian: the name in gent, datv, accs
    cls: str | None = None  # the class noun ("employee", «сотрудник»)
    cls_cases: dict[str, str] = {}  # Russian: the class noun in datv, accs
    cls_in_name: bool = False  # the name already says it ("Trip TR-0019", «страховая компания «Берег»»)
    domain: str | None = None  # local name of the kgs:domain of the entity's class ("travel")

    def writings(self) -> tuple[str, ...]:
        """How a turn may write the entity, casefolded: the bare name ("frying pan" also finds
        "the frying pan" and the name as a value) and its Russian cases."""
        return tuple(w.casefold() for w in (self.name.removeprefix("the "), *self.cases.values()) if w)


class FactWording(BaseModel):
    """One fact's words: the relation's noun alone and with its subject, or a whole yes/no sentence."""

    model_config = ConfigDict(frozen=True)

    noun: str
    which: str  # "what" / the Russian "какой" agreeing with the noun
    short: str  # the noun once its subject is named, without a word the name repeats ("budget" of "Trip TR-1")
    noun_of: str  # the noun with its subject: "budget of Trip TR-1", «месячная зарплата у Ивана Смирнова»
    value: str | None = None  # an entity value as written: «отдел маркетинга «Кедр Фарма»», "Pine store"
    spoken: str | None = None  # ... with the article a sentence puts before it ("the Pine store")
    statement: str | None = None  # a boolean fact as a whole sentence


class Wording(BaseModel):
    model_config = ConfigDict(frozen=True)

    entity: EntityWording
    facts: tuple[FactWording, ...]


def naming(subject: Node | str, lang: str, lexicon: Lexicon) -> Callable[[str], str]:
    """How a sentence names ``subject`` in a case: an entity as its referent, a noun
    phrase in the nominative (a multi-hop bridge: "the hotel of Booking BK-1") declined by its head."""
    if isinstance(subject, Node):
        said: dict[str, str] = {}  # one name, asked in a case or two, often twice

        def name(case: str) -> str:
            if case not in said:
                said[case] = lexicon.referent(subject, lang, case)
            return said[case]
        return name
    return lambda case: morph.decline(subject, case) if lang == "ru" else subject


def fill_subject(template: str, subject: Node | str, lang: str, lexicon: Lexicon) -> str:
    """``template`` with its ``{s}`` / ``{s:case}`` slots naming ``subject`` (see :func:`naming`)."""
    name = naming(subject, lang, lexicon)

    def slot(match: re.Match) -> str:
        said = name(match.group(1) or "nomn")
        # a Russian phrase ending in a clause («сотрудник, у которого …») closes it before the sentence goes on
        goes_on = match.end() < len(template) and template[match.end()] not in "?.!,"
        return f"{said}," if goes_on and lang == "ru" and ", " in said and not isinstance(subject, Node) else said
    return _SUBJECT_SLOT.sub(slot, template)


_SUBJECT_SLOT = re.compile(r"\{s(?::(\w+))?\}")
_CASES = ("gent", "datv", "accs")


def wording(lexicon: Lexicon, entity: Node, entity_class: Node | None, facts, lang: str) -> Wording:
    """Everything the template verbaliser says about ``entity`` and ``facts`` in ``lang``."""
    label = lexicon.referent(entity, lang)
    cls = entity_class.label_in(lang) if entity_class else None
    if cls and lang == "en" and not cls.isupper():
        cls = cls.lower()
    cases = {case: lexicon.name(entity, lang, case) for case in _CASES} if lang == "ru" else {}
    cls_cases = {case: morph.decline(cls, case) for case in ("datv", "accs")} if cls and lang == "ru" else {}
    in_name = bool(cls) and class_in_name(cls, (label, *cases.values()), lang)
    domain = lexicon.domain(entity_class, entity, *(f.subject for f in facts[:1]))
    entity_words = share_field_names(EntityWording(name=label, cases=cases, cls=cls, cls_cases=cls_cases,
                                                   cls_in_name=in_name, domain=domain))
    facts_words = tuple(_fact_wording(lexicon, fact, lang) for fact in facts)
    return share_field_names(Wording(entity=entity_words, facts=facts_words))


def class_in_name(cls: str, names: tuple[str, ...], lang: str) -> bool:
    """Whether a name already says its class: it holds the class's head word ("booking" of
    "hotel booking" in "Booking BK-1"; «карта» of «банковская карта» in «карты «Сокол Банк» *1»),
    or, in Russian, opens with a common noun before a quoted name, which says its kind in
    other words («отель «Аврора»» of «гостиница»: «гостиница отель «Аврора»» says it twice)."""
    head = _class_head(cls, lang)
    if lang == "en":
        return any(has_word(name.casefold(), head) for name in names)
    if " «" in names[0] and morph.starts_with_common_noun(names[0]) and _opens_with_noun(names[0]):
        return True
    return any(morph.lemma(word) == head for name in names for word in _WORD.findall(name))


def _opens_with_noun(name: str) -> bool:
    """Whether a Russian name's first word is a noun («отель «Аврора»»), not an adjective («новая «Аврора»»)."""
    parse = morph.nominative_head(name.split(" ", 1)[0])
    return parse is not None and parse.tag.POS == "NOUN"


@cache
def _class_head(cls: str, lang: str) -> str:
    """English: the last word before a preposition ("type" of "type of insurance"); Russian:
    the lemma of the first noun ("бронирование" of «бронирование гостиницы»)."""
    words = cls.casefold().split()
    if lang == "en":
        before = words[: next((i for i, w in enumerate(words) if w in _PREPOSITIONS), len(words))]
        return (before or words)[-1]
    head = next((w for w in words if (p := morph.nominative_head(w)) is not None and p.tag.POS == "NOUN"), words[0])
    return morph.lemma(head)


@cache
def shortened(noun: str, name: str, lang: str) -> str:
    """``noun`` once its subject is named, without the words that repeat the subject's
    ``name``: "budget" for "trip budget" and "return date" for "return date of the trip" of
    "Trip TR-1"; «бюджет» for «бюджет поездки» and «дата возвращения» for «дата возвращения
    из поездки» of «поездка TR-1»; else ``noun``."""
    words = noun.split()
    if len(words) < 2:
        return noun
    short = _short_form(words, name, lang)
    # a bare "date" or "number" could be any of the subject's dates or numbers: keep the whole noun
    return noun if short.casefold() in _TOO_VAGUE else short


_TOO_VAGUE = frozenset("date number amount sum value total дата номер сумма число значение".split())


def _short_form(words: list[str], name: str, lang: str) -> str:
    noun = " ".join(words)
    if lang == "en":
        named = name.casefold()
        if "of" in words[1:-1]:  # "return date of the trip" of "Trip TR-1": "return date"
            at = words.index("of", 1)
            if all(has_word(named, w) for w in words[at + 1:] if w != "the"):
                return " ".join(words[:at])
        rest = words[1:]  # not a preposition or a participle left alone: "country of use", "city served" stay
        if rest[0] in _PREPOSITIONS or (len(rest) == 1 and rest[0].endswith("ed")):
            return noun
        return " ".join(rest) if has_word(named, words[0].casefold()) else noun
    if not _last_is_dependent(tuple(words)) or _repeated_case(words[-1], name) is None:
        return noun
    kept = words[:-2] if morph.analyzer().parse(words[-2].casefold())[0].tag.POS == "PREP" else words[:-1]
    return " ".join(kept) or noun


@cache
def _last_is_dependent(words: tuple[str, ...]) -> bool:
    """Whether the last word of a Russian noun depends on a noun before it («цель поездки»,
    «расходы на поездку»), rather than being the head after its adjectives («возвращённый
    товар», where «товар» reads as an accusative too)."""
    return any(morph.analyzer().parse(w.casefold())[0].tag.POS == "NOUN" for w in words[:-1])


@cache
def _repeated_case(word: str, name: str) -> str | None:
    """The case of ``word`` when it is the head noun of ``name`` said again as a dependent
    («поездки» of «поездка TR-1»: "gent"), else None."""
    if morph.lemma(word) not in {morph.lemma(w) for w in _WORD.findall(" ".join(name.split()[:2]))}:
        return None
    parses = morph.analyzer().parse(word.casefold())
    parse = next((p for p in parses if p.tag.POS == "NOUN" and p.tag.case != "nomn"), None)
    return parse.tag.case if parse else None


def noun_of(noun: str, subject: Callable[[str], str], lang: str, chained: bool = False) -> str:
    """The relation's noun with its subject (``subject(case)`` names it in a case), without
    the article: "budget of Trip TR-1", «месячная зарплата у Ивана Смирнова». A Russian noun
    whose dependent repeats the subject takes the subject in that dependent's place and
    case: «держатель карты «Сокол Банк» *1», «расходы на поездку TR-1». ``chained``: a
    bridge inside a longer phrase, the subject in the genitive without «у» («отдел сотрудника»)."""
    if lang == "en":
        name = subject("nomn")
        return f"{shortened(noun, name, 'en')} of {name}"
    words = noun.split()
    case = _repeated_case(words[-1], subject("nomn")) if _last_is_dependent(tuple(words)) else None
    if case:
        return " ".join([*words[:-1], subject(case)])
    return f"{noun} {subject('gent')}" if chained else f"{noun} у {subject('gent')}"


_WORD = re.compile(r"[A-Za-zА-Яа-яЁё]+")


def _fact_wording(lexicon: Lexicon, fact, lang: str) -> FactWording:
    noun = lexicon.stating_noun(fact.relation, lang, fact.object)
    if lang == "ru" and fact.object.kind == "iri":
        noun = lexicon.in_value_gender(noun, fact.object)
    which = "what" if lang == "en" else morph.agree("какой", noun)
    subject = naming(fact.subject, lang, lexicon)
    boolean = fact.object.kind == "literal" and fact.object.datatype == XSD + "boolean"
    statement = _yes_no_sentence(lexicon, fact, fact.object.python, noun, lang) if boolean else None
    # an entity value as the dialogue writes it: its label (Russian lower-case where it opens with a
    # common noun, «отдел маркетинга …»), without and with the article a sentence puts before it
    # ("the Pine store", "the plush bear": a common noun is never said bare)
    spoken = lexicon.referent(fact.object, lang) if fact.object.kind == "iri" else None
    written = spoken.removeprefix("the ") if spoken and lang == "en" else spoken
    if spoken and lang == "en":
        name = lexicon.name(fact.object, "en").removeprefix("the ")
        if noun.split()[-1] in _NAMING_NOUNS or (name[:1].islower() and " " not in name):
            # a category's value, a title: said bare ("the tariff is flexible", "the job title is managing director")
            spoken = written = name
    return share_field_names(FactWording(
        noun=noun, which=which, short=shortened(noun, subject("nomn"), lang), noun_of=noun_of(noun, subject, lang),
        value=written, spoken=spoken, statement=statement,
    ))


def _yes_no_sentence(lexicon: Lexicon, fact, value: bool, noun: str, lang: str) -> str:
    """A boolean fact said as a statement ("Pavel is a tax resident"), never as "… is yes"."""
    given = lexicon.yes_no(fact.relation, value, lang)
    if given:
        return fill_subject(given, fact.subject, lang, lexicon)
    if lang == "en":
        return f"{{s}} is {'' if value else 'not '}marked as “{noun}”".replace("{s}", lexicon.referent(fact.subject, "en"))
    return f"У {lexicon.name(fact.subject, 'ru', 'gent')} {'' if value else 'не '}отмечено: «{noun}»"
