"""A DBpedia-shaped graph from WebNLG 2020's triples (third-party; ../shared/external/webnlg2020).

    python bench/webnlg_graph.py --out /tmp/webnlg.nt.gz            # every distinct triple
    python bench/webnlg_graph.py --out /tmp/webnlg.ttl --max-triples 1000 --lang en

A second real graph nobody on the team wrote, in DBpedia's modelling style (the first,
FB15k-237, is Freebase's): ``train_en.jsonl.gz`` and ``train_ru.jsonl.gz`` hold one JSON line
per text with the ``[subject, predicate, object]`` strings the WebNLG corpus writes. The graph
holds each distinct triple of the files read once (both languages by default; the Russian
texts carry the same English DBpedia names and add 17 triples of their own), written with
pyoxigraph as N-Triples, or Turtle for a ``.ttl`` name (gzip when the name ends in ``.gz``).
The corpus is CC BY-NC-SA 4.0: it is read from ``../shared/external`` and never copied here.

How a corpus triple becomes RDF:

- subject: ``http://dbpedia.org/resource/<Name>``, the name as written; only what an IRI cannot
  hold is percent-encoded (a space as ``%20``: ``Al_Anderson_(NRBQ band)``; ``"`` as ``%22``);
  non-ASCII letters stay (DBpedia IRIs are IRIs: ``Tarō_Asō``).
- predicate: ``http://dbpedia.org/ontology/<predicate>``, as written (camelCase), even where
  DBpedia has it under ``http://dbpedia.org/property/`` (``1stRunwayLengthFeet``,
  ``LCCN_number``), holds a slash (``associatedBand/associatedMusicalArtist``) or, in the
  Russian file only, spaces (``backup pilot``, percent-encoded). No predicate has a label: a
  DBpedia dump without its ontology file has none, and kgsynth is to word bare camelCase names.
- object, the way the corpus marks it: ``"..."`` (quoted) is a literal of the text inside the
  quotes; ``"..."^^<iri>`` / ``"..."^^xsd:name`` / ``"..."@lang`` would keep that datatype or
  language (the 2020 training files have none); ``<iri>`` is that IRI (one homepage); an object
  that starts with a quote but is not one quoted string (``"52.0"(minutes)``, ``"Squeezed" or
  "smashed" fried chicken ...``) is a literal of the whole text as written. An unquoted object
  is an entity when it is a DBpedia name, and a literal when it is a bare value, which the
  corpus writes unquoted as well: a number (``94``, ``597.0``), a date (``1793-10-23``,
  ``2011-Aug-27``) or a value with words and spaces but no underscore (``0.0482
  (kilometrePerSeconds)``, ``30.0 g``, ``682, 817, 214``, ``United States of America``), which no
  DBpedia name is (names have underscores for spaces).

Kept as found, not cleaned (the point is a real graph with real typing mess):

- every literal is a plain string (xsd:string), its text exactly as written: the corpus gives
  no datatype, so numbers (``"1.8"``, ``597.0``), dates (``"1932-03-15"``, ``1793-10-23``) and
  numbers with units in the string (``1.2 (litres)``, ``"52.0"(minutes)``) are all strings; a
  quoted and an unquoted number both become the same kind of plain string (the corpus never
  writes both for one subject and predicate);
- names as written, misspellings and variants included (``Al_Anderson_(NRBQ band)`` with a
  space), predicates as written (``fullname`` beside ``fullName``, ``leaderName`` beside
  ``leader``, ``1stRunwayLengthFeet``), values as written (``1516.6700000000003 (days)``,
  ``8514837.14  (square kilometres)`` with two spaces).

Added: an English ``rdfs:label`` for every DBpedia entity (subject or entity object): its name
with underscores as spaces, as DBpedia's labels read (``Aarhus_Airport`` -> "Aarhus Airport"@en).
No Russian labels: WebNLG does not give entity names in Russian reliably, and none is made up.
The homepage IRI is not a DBpedia entity and has no label.

Not added: ``rdf:type``. A text's ``category`` is the topic of its triple set, not the class of
its first subject: of the 724 first subjects of English texts, 28 come under several categories
(``United_States`` under 9) and many under one wrong one (``Belgium`` and ``Iraq`` as Airport,
``Jazz`` as Artist, ``Apollo_11`` as Astronaut, ``Brazil`` as Company, ``Tennis`` as University,
``BBC`` as ComicsCharacter). No ``owl:sameAs`` either: the IRIs are DBpedia's own.

``--max-triples N`` keeps the first N distinct triples in file order (English first); the labels
of their entities come on top.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pyoxigraph as ox

ROOT = Path(__file__).resolve().parents[1]
WEBNLG = ROOT.parent / "shared" / "external" / "webnlg2020"
LANGS = ("en", "ru")

DBR = "http://dbpedia.org/resource/"
DBO = "http://dbpedia.org/ontology/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
LABEL = ox.NamedNode(RDFS + "label")

CorpusTriple = tuple[str, str, str]

# What an IRI cannot hold (RFC 3987: space, controls, "<>{}|\^`), as %XX; '%' itself only when
# it does not start an escape already.
_NOT_IN_IRI = re.compile(r'[\x00-\x20"<>{}|\\^`\x7f]|%(?![0-9A-Fa-f]{2})')
_QUOTED = re.compile(r'"(.*)"', re.S)
_TYPED = re.compile(r'"(.*)"\^\^(?:<([^<>]*)>|xsd:(\w+))', re.S)
_LANG = re.compile(r'"(.*)"@([A-Za-z]+(?:-[A-Za-z0-9]+)*)', re.S)
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")
_DATE = re.compile(r"\d{4}-(?:\d\d|[A-Za-z]{3})-\d{1,2}")


def texts(lang: str, limit: int | None = None, folder: Path = WEBNLG) -> Iterator[dict]:
    """The JSON records of ``train_<lang>.jsonl.gz``, the first ``limit`` of them."""
    with gzip.open(folder / f"train_{lang}.jsonl.gz", "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            if limit is not None and i >= limit:
                return
            yield json.loads(line)


def distinct_triples(records: Iterable[dict]) -> list[CorpusTriple]:
    """Each ``[subject, predicate, object]`` of the records once, in order of first appearance."""
    seen: dict[CorpusTriple, None] = {}
    for record in records:
        for s, p, o in record["triples"]:
            seen.setdefault((s, p, o), None)
    return list(seen)


def iri(base: str, name: str) -> ox.NamedNode:
    """``base`` + ``name``, percent-encoding only what an IRI cannot hold."""
    return ox.NamedNode(base + _NOT_IN_IRI.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), name))


def entity(name: str) -> ox.NamedNode:
    return iri(DBR, name)


def predicate(name: str) -> ox.NamedNode:
    return iri(DBO, name)


def is_bare_value(obj: str) -> bool:
    """An unquoted object that is a value, not a DBpedia name: a number, a date, or words with
    spaces and no underscore (a number with its unit, a list of area codes)."""
    return bool(_NUMBER.fullmatch(obj) or _DATE.fullmatch(obj) or (" " in obj and "_" not in obj))


def object_term(obj: str) -> ox.NamedNode | ox.Literal:
    """The RDF object of a corpus object string, marked the way the corpus marks it (see the
    module docstring)."""
    if obj.startswith('"'):
        if m := _TYPED.fullmatch(obj):
            datatype = m.group(2) if m.group(2) is not None else XSD + m.group(3)
            return ox.Literal(m.group(1), datatype=ox.NamedNode(datatype))
        if m := _LANG.fullmatch(obj):
            return ox.Literal(m.group(1), language=m.group(2))
        if m := _QUOTED.fullmatch(obj):
            return ox.Literal(m.group(1))
        return ox.Literal(obj)  # a quote, then more than one quoted string: the text as written
    if obj.startswith("<") and obj.endswith(">"):
        return ox.NamedNode(obj[1:-1])
    if is_bare_value(obj):
        return ox.Literal(obj)
    return entity(obj)


def label(name: str) -> ox.Literal:
    """DBpedia's English label of a resource name: underscores read as spaces."""
    return ox.Literal(name.replace("_", " "), language="en")


def rdf_triples(corpus: Iterable[CorpusTriple], max_triples: int | None = None) -> list[ox.Triple]:
    """The graph: each corpus triple as RDF (the first ``max_triples``), then an English label for
    every DBpedia entity in them."""
    out: list[ox.Triple] = []
    names: dict[str, None] = {}
    for s, p, o in corpus:
        if max_triples is not None and len(out) >= max_triples:
            break
        obj = object_term(o)
        out.append(ox.Triple(entity(s), predicate(p), obj))
        names.setdefault(s, None)
        if isinstance(obj, ox.NamedNode) and obj.value.startswith(DBR):
            names.setdefault(o, None)
    out.extend(ox.Triple(entity(n), LABEL, label(n)) for n in names)
    return out


def build(langs: Iterable[str] = LANGS, max_triples: int | None = None, folder: Path = WEBNLG) -> list[ox.Triple]:
    corpus = distinct_triples(r for lang in langs for r in texts(lang, folder=folder))
    return rdf_triples(corpus, max_triples)


def write(triples: Iterable[ox.Triple], out: Path) -> None:
    """N-Triples, or Turtle for a ``.ttl`` name; gzip when the name ends in ``.gz``."""
    name = out.name.removesuffix(".gz")
    fmt = ox.RdfFormat.TURTLE if name.endswith(".ttl") else ox.RdfFormat.N_TRIPLES
    prefixes = {"dbr": DBR, "dbo": DBO, "rdfs": RDFS} if fmt == ox.RdfFormat.TURTLE else None
    data = ox.serialize(triples, format=fmt, prefixes=prefixes)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.name.endswith(".gz"):
        with gzip.open(out, "wb") as f:
            f.write(data)
    else:
        out.write_bytes(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="an .nt or .ttl file, .gz for gzip")
    parser.add_argument("--max-triples", type=int, default=None,
                        help="keep the first N distinct corpus triples (default: all)")
    parser.add_argument("--lang", nargs="+", choices=LANGS, default=list(LANGS), help="the files read (default: en ru)")
    parser.add_argument("--webnlg", type=Path, default=WEBNLG,
                        help=f"the folder of train_*.jsonl.gz (default: {WEBNLG})")
    args = parser.parse_args()
    if not args.webnlg.is_dir():
        sys.exit(f"{args.webnlg} is not there: this script needs ../shared/external/webnlg2020")
    triples = build(args.lang, args.max_triples, args.webnlg)
    write(triples, args.out)
    labels = sum(1 for t in triples if t.predicate == LABEL)
    print(f"{len(triples):,} triples in {args.out}: {len(triples) - labels:,} from WebNLG, {labels:,} labels")


if __name__ == "__main__":
    main()
