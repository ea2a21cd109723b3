"""Episodic, not encyclopaedic: a question a model can answer from world knowledge (the
UTC offsets of Sochi and Yekaterinburg) is marked, and by default not asked offline.

Expected sets come from the graph itself, read with rdflib (an engine kgsynth does not use):
which entities the graph marks world-known, which facts are about them alone, and which
subgraphs those facts answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rdflib
from conftest import DEMO, ROOT
from rdflib.namespace import OWL, RDF, RDFS

from kgsynth.dataset.splits import item_from_row, read_items
from kgsynth.errors import KgsynthError
from kgsynth.formats.answers import AnswerFormat
from kgsynth.kg import KnowledgeGraph, load_rules
from kgsynth.kg.vocab import KGS, WorldKnowledge
from kgsynth.pipeline.config import SynthConfig, load_config
from kgsynth.pipeline.run import synthesize
from kgsynth.queries import Shape, sample_subgraphs
from kgsynth.synth.dialogues.dialogue import DialogueSettings
from kgsynth.synth.dialogues.item import make_item
from kgsynth.synth.scenarios.scenario import ScenarioBuilder, said_by_name

WORLD_KNOWN = rdflib.URIRef(KGS + "worldKnown")
PUBLIC = ("http://dbpedia.org/resource/", "http://www.wikidata.org/entity/")
RETRIEVAL = [(shape, hops) for shape in ("simple", "set", "conditional", "comparison", "multihop_set") for hops in (2,)]
RETRIEVAL += [("multihop", hops) for hops in (2, 3, 4)]


@pytest.fixture(scope="module")
def demo_rdf() -> rdflib.Graph:
    graph = rdflib.Graph()
    for path in sorted(DEMO.glob("*.ttl")):
        graph.parse(path)
    return graph


def _marked(graph: rdflib.Graph) -> set[str]:
    """Instances of the classes marked world-known (and of their subclasses)."""
    classes = {c for c, v in graph.subject_objects(WORLD_KNOWN) if v.toPython() is True}
    classes |= {sub for c in list(classes) for sub in graph.transitive_subjects(RDFS.subClassOf, c)}
    return {str(e) for c in classes for e in graph.subjects(RDF.type, c)}


def _linked(graph: rdflib.Graph) -> set[str]:
    return {str(e) for e, t in graph.subject_objects(OWL.sameAs) if str(t).startswith(PUBLIC)}


@pytest.fixture(scope="module")
def world(demo_rdf) -> set[str]:
    return _marked(demo_rdf) | _linked(demo_rdf)


@pytest.fixture(scope="module")
def builders(demo_kg):
    rules = load_rules(demo_kg)
    return {policy: ScenarioBuilder(demo_kg, rules, world_knowledge=policy) for policy in ("skip", "closed_book", "keep")}


@pytest.fixture(scope="module")
def subgraphs(demo_kg):
    return [sg for shape, hops in RETRIEVAL for sg in sample_subgraphs(demo_kg, shape, limit=2000, seed=0, hops=hops)]


# ---------------------------------------------------------------------------- which entities
def test_the_demo_marks_its_real_places_both_ways(demo_kg, demo_rdf, world):
    """Countries and cities are marked by class and linked to DBpedia: the two agree, and
    kgsynth reads the same set."""
    assert _marked(demo_rdf) == _linked(demo_rdf) == world
    classes = {str(c) for e in world for c in demo_rdf.objects(rdflib.URIRef(e), RDF.type)}
    assert classes == {"https://kgsynth.example/demo/City", "https://kgsynth.example/demo/Country"}
    known = WorldKnowledge.of(demo_kg)
    marked_classes = {str(c) for c, v in demo_rdf.subject_objects(WORLD_KNOWN) if v.toPython() is True}
    assert known.known == world | marked_classes and not known.unknown


def test_a_fact_is_world_knowledge_only_between_world_entities(demo_kg, demo_rdf, world):
    known = WorldKnowledge.of(demo_kg)
    facts = [(s, p, o) for s, p, o in demo_rdf if isinstance(s, rdflib.URIRef) and not isinstance(o, rdflib.BNode)
             and p not in (RDF.type, RDFS.label, OWL.sameAs) and not str(p).startswith(KGS)]  # what questions ask
    expected = {(s, p, o) for s, p, o in facts if str(s) in world and (isinstance(o, rdflib.Literal) or str(o) in world)}
    got = {(s, p, o) for s, p, o in facts if known.fact(str(s), str(p), None if isinstance(o, rdflib.Literal) else str(o))}
    assert got == expected
    # a fictional entity's fact about a real city (who lives in Kazan) stays episodic
    assert any(str(s) not in world and str(o) in world for s, _, o in facts)


GRAPH = """
@prefix kgs: <https://w3id.org/kgsynth/vocab#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix schema: <http://schema.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix ex: <https://example.org/> .
ex:Place kgs:worldKnown true .
ex:City rdfs:subClassOf ex:Place .
ex:Invented kgs:worldKnown false .
ex:paris a ex:City .                                                   # by its class's superclass
ex:atlantis a ex:City ; kgs:worldKnown false .                          # its own statement wins
ex:rome owl:sameAs <http://www.wikidata.org/entity/Q220> .              # linked to Wikidata
ex:berlin skos:exactMatch <https://de.dbpedia.org/resource/Berlin> .    # any DBpedia chapter
ex:oslo schema:sameAs <https://en.wikipedia.org/wiki/Oslo> .
ex:shop owl:sameAs <https://example.com/shops/1> .                       # not a public graph
ex:zork a ex:Invented ; owl:sameAs <http://dbpedia.org/resource/Zork> .  # a class's statement beats a link
ex:both a ex:Invented, ex:City .                                         # one class says true
ex:deliveryFee kgs:worldKnown false .                                    # the shop's own tariff
"""


def test_statements_come_before_classes_before_links(tmp_path):
    (tmp_path / "g.ttl").write_text(GRAPH)
    known = WorldKnowledge.of(KnowledgeGraph.load(tmp_path / "g.ttl"))
    ex = "https://example.org/"
    said = {name: known.entity(ex + name) for name in ("paris", "atlantis", "rome", "berlin", "oslo", "shop", "zork", "both")}
    assert said == {"paris": True, "atlantis": False, "rome": True, "berlin": True, "oslo": True, "shop": False,
                    "zork": False, "both": True}
    assert known.entity("http://www.wikidata.org/entity/Q90") and known.entity("http://dbpedia.org/resource/Paris")
    assert not known.entity("https://www.wikidata.org/wiki/Special:Search")
    assert known.fact(ex + "paris", ex + "population", None) and known.fact(ex + "paris", ex + "twin", ex + "rome")
    assert not known.fact(ex + "paris", ex + "deliveryFee", None)  # a relation marked false
    assert not known.fact(ex + "shop", ex + "city", ex + "paris")  # a fact of an invented entity about Paris


def test_the_documented_example_reads_back(tmp_path):
    doc = (ROOT / "docs" / "vocabulary.md").read_text(encoding="utf-8").split("## World knowledge", 1)[1]
    (tmp_path / "example.ttl").write_text(doc.split("```turtle\n", 1)[1].split("```", 1)[0], encoding="utf-8")
    known = WorldKnowledge.of(KnowledgeGraph.load(tmp_path / "example.ttl"))
    ex = "https://kgsynth.example/demo/"
    assert known.entity(ex + "city-sochi") and not known.entity(ex + "city-zelenoborsk")
    assert known.fact(ex + "city-sochi", ex + "utcOffset", None) and not known.fact(ex + "city-sochi", ex + "deliveryFee", None)


def test_a_value_that_is_not_a_boolean_is_an_error_naming_the_entity(tmp_path):
    (tmp_path / "g.ttl").write_text('<https://example.org/x> <https://w3id.org/kgsynth/vocab#worldKnown> "yes" .\n')
    with pytest.raises(KgsynthError, match=r"<https://example.org/x> kgs:worldKnown .*not a boolean"):
        WorldKnowledge.of(KnowledgeGraph.load(tmp_path / "g.ttl"))


# ---------------------------------------------------------------------------- which questions
def _answered_by_world(sg, world: set[str], graph: rdflib.Graph) -> bool:
    """Independently: the subgraph's world facts decide its answer (every fact is one; or a
    conditional's fact that alone picks the answer out of the graph)."""
    def is_world(f) -> bool:
        return f.subject.value in world and (f.object.kind == "literal" or f.object.value in world)

    def term(node):
        if node.kind == "iri":
            return rdflib.URIRef(node.value)
        return rdflib.Literal(node.value, lang=node.lang, datatype=rdflib.URIRef(node.datatype) if node.datatype else None)

    if all(is_world(f) for f in sg.facts):
        return True
    if sg.shape is not Shape.conditional:
        return False
    answer = sg.answer[0].value
    for f in filter(is_world, sg.facts):
        s, p, o = term(f.subject), rdflib.URIRef(f.relation.value), term(f.object)
        if f.subject.value == answer and set(graph.subjects(p, o)) == {s}:
            return True
        if f.object.value == answer and set(graph.objects(s, p)) == {o}:
            return True
    return False


def test_world_answerable_subgraphs_of_every_retrieval_shape(subgraphs, builders, world, demo_rdf):
    builder = builders["skip"]
    expected = [sg.id for sg in subgraphs if _answered_by_world(sg, world, demo_rdf)]
    assert [sg.id for sg in subgraphs if builder.world_answerable(sg)] == expected
    shapes = {sg.shape for sg in subgraphs if sg.id in set(expected)}
    assert {Shape.simple, Shape.comparison, Shape.conditional, Shape.multihop} <= shapes
    # the example is one of them; a chain from an invented entity to a city is not
    comparisons = [sg for sg in subgraphs if sg.shape is Shape.comparison and sg.id in set(expected)]
    assert comparisons and all(f.subject.value in world for sg in comparisons for f in sg.facts)
    assert any(sg.shape is Shape.multihop and sg.facts[0].subject.value not in world and sg.facts[-1].subject.value in world
               and sg.id not in set(expected) for sg in subgraphs)


def test_they_are_skipped_flagged_or_left_to_the_closed_book_filter(subgraphs, builders):
    world = [sg for sg in subgraphs if builders["skip"].world_answerable(sg)]
    other = [sg for sg in subgraphs if not builders["skip"].world_answerable(sg)][:300]
    for sg in world:
        assert list(builders["skip"].build(sg)) == []
        kept = list(builders["keep"].build(sg))
        # none where the question asks for what a name says ("the city of the office in Novosibirsk")
        assert (kept or any(said_by_name(f) for f in sg.facts)) and all(s.world_knowledge for s in kept)
        checked = list(builders["closed_book"].build(sg))
        assert checked == [s for s in kept if s.answer_format is not AnswerFormat.yes_no]
    assert sum(builders["skip"].world_skipped.values()) >= len(world)
    for sg in other:  # the rest is built as before, unflagged, whatever the policy
        built = list(builders["skip"].build(sg))
        assert built == list(builders["keep"].build(sg)) and not any(s.world_knowledge for s in built)


def test_rule_items_about_invented_entities_are_unaffected(demo_kg, builders, world):
    rules = list(sample_subgraphs(demo_kg, "rule_application", limit=400, seed=0))
    assert rules and not any(f.subject.value in world for sg in rules for f in sg.facts)
    for sg in rules[:100]:
        assert list(builders["skip"].build(sg)) == list(builders["keep"].build(sg))


def test_the_flag_reaches_the_item_and_the_files(subgraphs, builders, tmp_path):
    sg = next(sg for sg in subgraphs if builders["keep"].world_answerable(sg))
    scenario = next(builders["keep"].build(sg))
    item = make_item(scenario, "en", DialogueSettings(), seed=0)
    assert item.metadata.world_knowledge
    row = json.loads(item.model_dump_json())
    del row["metadata"]["world_knowledge"]  # a dataset written before the flag
    row |= {"gold_items": [row["gold"]]}
    assert not item_from_row(row).metadata.world_knowledge


# ---------------------------------------------------------------------------- the switch
def test_the_switch_resolves_auto_by_the_closed_book_filter():
    llm = {"base_url": "http://127.0.0.1:9/v1"}
    assert SynthConfig().world_policy == "skip"
    assert SynthConfig.model_validate({"llm": llm}).world_policy == "closed_book"
    assert SynthConfig.model_validate({"llm": llm | {"guessers": []}}).world_policy == "skip"
    assert SynthConfig.model_validate({"llm": llm, "filters": {"order": ["structure", "judge"]}}).world_policy == "skip"
    for value in ("skip", "keep"):
        assert SynthConfig.model_validate({"llm": llm, "sampling": {"world_knowledge": value}}).world_policy == value
    with pytest.raises(ValueError, match="world_knowledge"):
        SynthConfig.model_validate({"sampling": {"world_knowledge": "maybe"}})
    assert load_config(ROOT / "configs" / "default.toml") == SynthConfig()


def _run(demo_kg: KnowledgeGraph, out: Path, world_knowledge: str) -> list:
    """A small dataset of the shapes that ask about places (every format, every difficulty)."""
    config = SynthConfig.model_validate({
        "sampling": {"shapes": ["simple", "conditional", "multihop", "comparison"], "world_knowledge": world_knowledge},
        "dataset": {"n": 400}})
    synthesize(demo_kg, config, out)
    return list(read_items(out / "items.jsonl"))


def _world_items(items, world: set[str]) -> list:
    """Items whose every source triple is about world-known entities alone."""
    def about_world(triple: str) -> bool:
        s, _, o = triple.split(" ", 2)
        return s.strip("<>") in world and (not o.startswith("<") or o.split(">")[0].strip("<") in world)
    return [i for i in items if all(about_world(t) for t in i.metadata.source_triples)]


def test_a_default_run_asks_nothing_world_knowledge_answers(demo_kg, tmp_path, world):
    items = _run(demo_kg, tmp_path, "auto")
    retrieval = [i for i in items if i.metadata.rule_kind == "none"]
    assert retrieval and not _world_items(items, world) and not any(i.metadata.world_knowledge for i in items)
    # facts of invented entities about real places are still asked (who lives in Kazan)
    assert any(any(t.split(" ", 2)[2].split(">")[0].strip("<") in world for t in i.metadata.source_triples) for i in retrieval)


def test_keep_builds_them_flagged(demo_kg, tmp_path, world):
    items = _run(demo_kg, tmp_path, "keep")
    flagged = [i for i in items if i.metadata.world_knowledge]
    assert flagged and {i.id for i in _world_items(items, world)} <= {i.id for i in flagged}
