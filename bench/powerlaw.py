"""Deterministic power-law knowledge graphs for benchmarks and tests.

``powerlaw_lines(triples, seed)`` yields exactly ``triples`` distinct N-Triples lines:

- entity-entity facts over 39 relations, subjects and objects drawn from independent
  Zipf-like rankings (a few hubs, a long tail), relations Zipf-distributed too;
- typed literal facts (``xsd:decimal``, ``xsd:date``, ``xsd:integer``) over 11 more
  relations, about 18% of the facts. Each literal relation is functional (an entity has
  it once) except ``purchaseAmount``, and relations read by the same rule are given to
  the same entities, so rules find many entities to apply to;
- an English ``rdfs:label`` for every entity; entities 1, 1001, 2001... are deliberate
  homonyms of the entity before them;
- six ``kgs:Rule`` resources of all five kinds written as in ``docs/vocabulary.md``.

The same (triples, seed) always gives the same lines, in the same order.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import pyoxigraph as ox

BASE = "https://kgsynth.example/bench/"
KGS = "https://w3id.org/kgsynth/vocab#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
LABEL = f"<{RDFS}label>"
XSD = "http://www.w3.org/2001/XMLSchema#"

LITERAL_SHARE = 0.18  # of the facts (label and rule triples not counted)
ENTITIES_PER_TRIPLE = 0.1
DEGREE_EXPONENT = 0.65  # Zipf exponent of subject and object degrees (largest in-degree ~5k at 1M)
RELATION_EXPONENT = 0.8  # Zipf exponent of relation frequencies
HOMONYM_EVERY = 1000

ENTITY_RELATIONS = tuple(
    """
    locatedIn partOf memberOf worksFor knows owns produces supplies foundedBy managedBy bornIn livesIn
    studiedAt playsFor directedBy writtenBy publishedBy awardedTo nominatedFor marriedTo childOf
    sponsors competesWith acquired investsIn hosts borders twinnedWith speaks follows influencedBy
    composedBy performedBy designedBy operates headquarteredIn affiliatedWith successorOf capitalOf
    """.split()
)
_ADJECTIVES = tuple(
    """
    Amber Bold Calm Dusty Eager Fair Golden Hidden Ivory Jolly Keen Lucky Misty Noble Olive Proud Quiet
    Rapid Silver Tidy Upper Vivid Wild Young Zesty Brisk Crimson Distant Early Frosty Gentle Hollow
    """.split()
)
_NOUNS = tuple(
    """
    Harbor Meadow River Summit Valley Forest Bridge Castle Garden Island Lantern Market Orchard Prairie
    Quarry Ridge Station Tower Union Village Willow Academy Bakery Canyon Dock Estate Foundry Gallery
    Hall Inn Junction Kiln
    """.split()
)


@dataclass(frozen=True)
class Attribute:
    """A literal relation: values drawn uniformly from [low, high] (dates: days after 2015-01-01).

    ``after`` makes a date the value of another attribute of the same entity plus
    [low, high] days; ``multi`` gives an entity one to four values instead of one.
    """

    name: str
    datatype: str  # "decimal", "date" or "integer"
    low: int
    high: int
    after: str | None = None
    multi: bool = False


# Attributes in one group go to the same entities; weights split the literal budget.
ATTRIBUTE_GROUPS: tuple[tuple[float, tuple[Attribute, ...]], ...] = (
    (3, (Attribute("monthlySalary", "decimal", 30_000, 400_000), Attribute("residencyZone", "integer", 1, 3))),
    (2, (Attribute("claimAmount", "decimal", 1_000, 90_000), Attribute("deductible", "decimal", 500, 20_000))),
    (2, (Attribute("startDate", "date", 0, 3_650), Attribute("endDate", "date", 0, 45, after="startDate"))),
    (1, (Attribute("annualSpend", "decimal", 5_000, 900_000),)),
    (
        2,
        (
            Attribute("purchaseAmount", "decimal", 100, 30_000, multi=True),
            Attribute("monthlyLimit", "decimal", 20_000, 60_000),
        ),
    ),
    (1, (Attribute("population", "integer", 100, 9_000_000),)),
    (1, (Attribute("foundingDate", "date", -40_000, 3_000),)),
)
_EPOCH = date(2015, 1, 1)

# Six rules of all five kinds; they read only the attributes above.
RULES = f"""\
<{BASE}rule/income-tax> a kgs:Rule ; rdfs:label "income tax"@en ;
  kgs:statement "Income tax is 13% of the monthly salary."@en ;
  kgs:kind kgs:Arithmetic ; kgs:operation kgs:PercentOf ; kgs:rate 0.13 ; kgs:rounding 0 ; kgs:unit "USD" ;
  kgs:input [ kgs:role "amount" ; kgs:relation <{BASE}rel/monthlySalary> ] .
<{BASE}rule/residency-tax> a kgs:Rule ; rdfs:label "residency tax"@en ;
  kgs:statement "Zone 1 pays 13%, zone 2 pays 20%, others 30%."@en ;
  kgs:kind kgs:Conditional ; kgs:defaultRate 0.3 ;
  kgs:case [ kgs:when 1 ; kgs:rate 0.13 ] , [ kgs:when 2 ; kgs:rate 0.2 ] ;
  kgs:input [ kgs:role "amount" ; kgs:relation <{BASE}rel/monthlySalary> ] ,
            [ kgs:role "condition" ; kgs:relation <{BASE}rel/residencyZone> ] .
<{BASE}rule/deductible> a kgs:Rule ; rdfs:label "deductible check"@en ;
  kgs:statement "A claim is paid when it exceeds the deductible."@en ;
  kgs:kind kgs:Threshold ; kgs:comparison kgs:GreaterThan ;
  kgs:input [ kgs:role "amount" ; kgs:relation <{BASE}rel/claimAmount> ] ,
            [ kgs:role "threshold" ; kgs:relation <{BASE}rel/deductible> ] .
<{BASE}rule/return-window> a kgs:Rule ; rdfs:label "return window"@en ;
  kgs:statement "A return is accepted within 14 days."@en ;
  kgs:kind kgs:Interval ; kgs:operation kgs:WithinDays ; kgs:maxDays 14 ;
  kgs:input [ kgs:role "start" ; kgs:relation <{BASE}rel/startDate> ] ,
            [ kgs:role "end" ; kgs:relation <{BASE}rel/endDate> ] .
<{BASE}rule/overlimit> a kgs:Rule ; rdfs:label "overlimit penalty"@en ;
  kgs:statement "Spending over the monthly limit costs 10% of the excess."@en ;
  kgs:kind kgs:Arithmetic ; kgs:operation kgs:PercentOfExcess ; kgs:rate 0.1 ; kgs:unit "USD" ;
  kgs:input [ kgs:role "amount" ; kgs:relation <{BASE}rel/purchaseAmount> ; kgs:aggregate kgs:Sum ] ,
            [ kgs:role "limit" ; kgs:relation <{BASE}rel/monthlyLimit> ] .
<{BASE}rule/loyalty-tier> a kgs:Rule ; rdfs:label "loyalty tier"@en ;
  kgs:statement "Annual spend sets the loyalty tier."@en ;
  kgs:kind kgs:Classification ;
  kgs:bracket [ kgs:upperBound 100000 ; kgs:class <{BASE}tier/bronze> ] ,
              [ kgs:lowerBound 100000 ; kgs:upperBound 500000 ; kgs:class <{BASE}tier/silver> ] ,
              [ kgs:lowerBound 500000 ; kgs:class <{BASE}tier/gold> ] ;
  kgs:input [ kgs:role "amount" ; kgs:relation <{BASE}rel/annualSpend> ] .
<{BASE}tier/bronze> rdfs:label "bronze"@en .
<{BASE}tier/silver> rdfs:label "silver"@en .
<{BASE}tier/gold> rdfs:label "gold"@en .
"""


def rule_lines() -> list[str]:
    """The rules as N-Triples lines, blank nodes renamed ``_:rule1``, ``_:rule2``... in order."""
    prefixes = f"@prefix kgs: <{KGS}> . @prefix rdfs: <{RDFS}> .\n"
    names: dict[str, str] = {}

    def term(t: ox.NamedNode | ox.BlankNode | ox.Literal) -> str:
        return f"_:rule{names.setdefault(t.value, str(len(names) + 1))}" if isinstance(t, ox.BlankNode) else str(t)

    triples = ox.parse(prefixes + RULES, format=ox.RdfFormat.TURTLE)
    return [f"{term(t.subject)} {term(t.predicate)} {term(t.object)} .\n" for t in triples]


def entity(i: int) -> str:
    return f"<{BASE}e{i}>"


def relation(name: str) -> str:
    return f"<{BASE}rel/{name}>"


def label(i: int) -> str:
    """An English name unique to entity ``i`` (homonyms are made by the caller)."""
    a, n = len(_ADJECTIVES), len(_NOUNS)
    name = f"{_ADJECTIVES[i % a]} {_NOUNS[i // a % n]}"
    return name if i < a * n else f"{name} {i // (a * n) + 1}"


def _literal(attribute: Attribute, rng: random.Random, base: int) -> tuple[str, int]:
    """An attribute value as N-Triples text and as a number (dates: days after the epoch)."""
    value = base + rng.randint(attribute.low, attribute.high)
    if attribute.datatype == "date":
        return f'"{(_EPOCH + timedelta(days=value)).isoformat()}"^^<{XSD}date>', value
    if attribute.datatype == "decimal":  # canonical form (no trailing zeros), as Oxigraph stores it
        lexical = f"{value}.{rng.randrange(100):02d}".rstrip("0").rstrip(".")
        return f'"{lexical}"^^<{XSD}decimal>', value
    return f'"{value}"^^<{XSD}integer>', value


def _literal_lines(rng: random.Random, entities: int, budget: int) -> list[str]:
    total_weight = sum(weight for weight, _ in ATTRIBUTE_GROUPS)
    lines: list[str] = []
    for weight, attributes in ATTRIBUTE_GROUPS:
        per_entity = sum(2.5 if a.multi else 1 for a in attributes)
        holders = rng.sample(range(entities), min(entities, round(budget * weight / total_weight / per_entity)))
        for i in sorted(holders):
            values: dict[str, int] = {}
            for attribute in attributes:
                for _ in range(rng.randint(1, 4) if attribute.multi else 1):
                    base = values[attribute.after] if attribute.after else 0
                    text, values[attribute.name] = _literal(attribute, rng, base)
                    lines.append(f"{entity(i)} {relation(attribute.name)} {text} .\n")
    return lines


def _zipf_cum_weights(n: int, exponent: float) -> list[float]:
    return list(itertools.accumulate(1 / (rank + 1) ** exponent for rank in range(n)))


def _edge_lines(rng: random.Random, entities: int, count: int) -> list[str]:
    """``count`` distinct entity-entity facts, no self-loops, Zipf subjects/objects/relations."""
    degree = _zipf_cum_weights(entities, DEGREE_EXPONENT)
    subject_rank = rng.sample(range(entities), entities)  # rank -> entity: hubs are random entities
    object_rank = rng.sample(range(entities), entities)
    relation_weights = _zipf_cum_weights(len(ENTITY_RELATIONS), RELATION_EXPONENT)
    seen: set[tuple[int, int, int]] = set()
    lines: list[str] = []
    while len(lines) < count:
        k = count - len(lines)
        subjects = rng.choices(subject_rank, cum_weights=degree, k=k)
        objects = rng.choices(object_rank, cum_weights=degree, k=k)
        relations = rng.choices(range(len(ENTITY_RELATIONS)), cum_weights=relation_weights, k=k)
        for s, r, o in zip(subjects, relations, objects, strict=True):
            if s != o and (s, r, o) not in seen:
                seen.add((s, r, o))
                lines.append(f"{entity(s)} {relation(ENTITY_RELATIONS[r])} {entity(o)} .\n")
    return lines


def powerlaw_lines(triples: int, seed: int = 0) -> Iterator[str]:
    """Exactly ``triples`` distinct N-Triples lines of a power-law graph with rules (see module doc)."""
    rules = rule_lines()
    entities = max(20, int(triples * ENTITIES_PER_TRIPLE))
    facts = triples - entities - len(rules)
    if facts < 10:
        raise ValueError(f"{triples} triples is too few for a power-law graph with rules")
    rng = random.Random(seed)
    literals = _literal_lines(rng, entities, round(facts * LITERAL_SHARE))
    yield from rules
    for i in range(entities):
        name = label(i - 1 if i % HOMONYM_EVERY == 1 else i)
        yield f'{entity(i)} {LABEL} "{name}"@en .\n'
    yield from literals
    yield from _edge_lines(rng, entities, facts - len(literals))


def write_ntriples(path: str | Path, triples: int, seed: int = 0) -> Path:
    """Write ``powerlaw_lines(triples, seed)`` to ``path`` and return the path."""
    path = Path(path)
    with path.open("w", encoding="utf-8") as out:
        out.writelines(powerlaw_lines(triples, seed))
    return path
