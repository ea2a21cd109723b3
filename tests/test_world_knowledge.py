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

from kgsynth.cli._app import run
from kgsynth.dataset.splits import item_from_row, read_items
from kgsynth.errors import KgsynthError
from kgsynth.formats.answers import AnswerFormat
from kgsynth.kg import KnowledgeGraph, load_rules
from kgsynth.kg.vocab import KGS, WorldKnowledge, public_iri
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


FREEBASE_IDS = [
    "http://example.org/fb15k237/entity_m_027rn",  # FB15k-237
    "http://rdf.freebase.com/ns/m.027rn",
    "https://kg.example/m/027rn",
    "https://kg.example/things#m_0d05w3",
    "https://kg.example/film:m.09c7w0",
    "https://kg.example/m.0_2_",
    "http://rdf.freebase.com/ns/g.11b6vfxqz5",
    "https://kg.example/topic_g_1hb_kf6n9",
]
LOCAL_NAMES = [
    "https://example.org/m_0",  # nothing after the 0
    "https://example.org/item_m_data",
    "https://example.org/mom",
    "https://example.org/m.0abe",  # vowels: not Freebase's alphabet
    "https://example.org/mm_027rn",  # not after a separator
    "https://example.org/m_027rn/page",  # not the IRI's end
    "https://example.org/m_0123456789",  # nine characters after the 0
    "https://example.org/m-027rn",
    "https://example.org/g.1bcd",  # too short for a g. id
    "https://example.org/g_0bcdfghj",  # a g. id starts g.1
    "http://rdf.freebase.com/ns/en.paris",  # a Freebase key, not an id
]


@pytest.mark.parametrize("iri", FREEBASE_IDS)
def test_an_iri_ending_in_a_freebase_id_is_world_known_in_any_namespace(iri):
    assert public_iri(iri) and WorldKnowledge().entity(iri)
    assert not WorldKnowledge(unknown=[iri]).entity(iri)  # the entity's own kgs:worldKnown false wins


@pytest.mark.parametrize("iri", LOCAL_NAMES)
def test_an_ordinary_local_name_is_not_a_freebase_id(iri):
    assert not public_iri(iri) and not WorldKnowledge().entity(iri)


def test_no_demo_iri_is_taken_for_a_public_one(demo_rdf):
    iris = {str(t) for triple in demo_rdf for t in triple if isinstance(t, rdflib.URIRef)}
    own = {i for i in iris if i.startswith("https://kgsynth.example/")}
    assert len(own) > 500 and not any(map(public_iri, own))


def test_a_link_to_a_freebase_iri_makes_an_entity_world_known_and_says_why(tmp_path):
    (tmp_path / "g.ttl").write_text(
        "<https://example.org/film> <http://www.w3.org/2002/07/owl#sameAs> <http://rdf.freebase.com/ns/m.0bth54> .\n")
    known = WorldKnowledge.of(KnowledgeGraph.load(tmp_path / "g.ttl"))
    assert known.entity("https://example.org/film") and known.known == {"https://example.org/film"}
    assert known.why("https://example.org/film") == "marked kgs:worldKnown or linked to a public graph"
    assert known.why(FREEBASE_IDS[0]) == "its IRI ends in a Freebase id"
    assert known.why("http://www.wikidata.org/entity/Q90") == "an IRI of a public graph"


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


def test_the_command_line_sets_the_switch_and_names_itself_in_a_bad_value(tmp_path, capsys):
    assert run(["synth", "--world-knowledge", "maybe", "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip() == ("error: --world-knowledge maybe: sampling.world_knowledge: "
                                               "Input should be 'auto', 'skip' or 'keep'")


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


# ---------------------------------------------------------------------------- rules over real entities
PEOPLE = """
@prefix fb: <http://example.org/fb/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
fb:born rdfs:label "date of birth"@en, "дата рождения"@ru .
fb:died rdfs:label "date of death"@en, "дата смерти"@ru .
fb:height rdfs:label "height"@en, "рост"@ru .
"""
REAL = [("m_0d1x", "Lynn Redgrave", "Линн Редгрейв", "1943-03-08", "2010-05-02", "1.78"),
        ("m_02mj", "Anthony Quinn", "Энтони Куинн", "1915-04-21", "2001-06-03", "1.87"),
        ("m_0bth", "Greta Garbo", "Грета Гарбо", "1905-09-18", "1990-04-15", "1.70"),
        ("m_09qt", "Jean Gabin", "Жан Габен", "1904-05-17", "1976-11-15", "1.74")]
INVENTED = [("person-anna", "Anna Orlova", "Анна Орлова", "1950-02-11", "2019-08-30", "1.64"),
            ("person-boris", "Boris Volkov", "Борис Волков", "1938-12-01", "2004-01-17", "1.91")]
LIBRARY = """
@prefix kgs: <https://w3id.org/kgsynth/vocab#> .
@prefix fb: <http://example.org/fb/> .
fb:r-age a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Interval ; kgs:operation kgs:YearsBetween ;
  kgs:input [ kgs:role "start" ; kgs:relation fb:born ] , [ kgs:role "end" ; kgs:relation fb:died ] .
fb:r-leap a kgs:Rule ; kgs:origin kgs:Library ; kgs:kind kgs:Calendar ; kgs:operation kgs:LeapYear ;
  kgs:input [ kgs:role "date" ; kgs:relation fb:born ] .
"""
INVENTED_RULE = """
@prefix kgs: <https://w3id.org/kgsynth/vocab#> .
@prefix fb: <http://example.org/fb/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
fb:r-tall a kgs:Rule ; kgs:kind kgs:Threshold ; kgs:operation kgs:Compare ;
  kgs:input [ kgs:role "amount" ; kgs:relation fb:height ] ;
  kgs:threshold "1.80"^^xsd:decimal ; kgs:comparison kgs:GreaterOrEqual .
"""


def _people(folder: Path, people: list, rules: str) -> Path:
    lines = [PEOPLE] + [f'fb:{iri} rdfs:label "{en}"@en, "{ru}"@ru ; fb:born "{born}"^^xsd:date ; '
                        f'fb:died "{died}"^^xsd:date ; fb:height "{height}"^^xsd:decimal .'
                        for iri, en, ru, born, died, height in people]
    (folder / "people.ttl").write_text("\n".join(lines), encoding="utf-8")
    (folder / "rules.ttl").write_text(rules, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def people_kg(tmp_path_factory) -> KnowledgeGraph:
    return KnowledgeGraph.load(_people(tmp_path_factory.mktemp("people"), REAL + INVENTED, LIBRARY + INVENTED_RULE))


def _rule_subgraphs(kg: KnowledgeGraph, rule: str) -> list:
    return [sg for sg in sample_subgraphs(kg, "rule_application", limit=200, per_anchor=10, seed=0)
            if sg.rule.value.endswith(rule)]


def test_a_library_rule_over_real_entities_is_world_knowledge(people_kg):
    """"How old was Lynn Redgrave when they died?": a model knows both dates and how ages are counted."""
    builders = {policy: ScenarioBuilder(people_kg, load_rules(people_kg), world_knowledge=policy)
                for policy in ("skip", "closed_book", "keep")}
    library = _rule_subgraphs(people_kg, "r-age") + _rule_subgraphs(people_kg, "r-leap")
    real = {f"http://example.org/fb/{p[0]}" for p in REAL}
    world = [sg for sg in library if sg.mention[0].value in real]
    assert len(world) == 2 * len(REAL) and len(library) == 2 * len(REAL + INVENTED)
    assert [sg for sg in library if builders["skip"].world_answerable(sg)] == world
    for sg in world:
        assert list(builders["skip"].build(sg)) == []
        kept = list(builders["keep"].build(sg))
        assert kept and all(s.world_knowledge for s in kept)
        # a leap year is yes/no, which the closed-book guessers never answer: it stays out
        assert list(builders["closed_book"].build(sg)) == [s for s in kept if s.answer_format is not AnswerFormat.yes_no]
    assert builders["skip"].world_skipped == {"rule_application": len(world)}
    assert builders["skip"].world_example in real
    for sg in (sg for sg in library if sg not in world):  # the same rules over invented people
        built = list(builders["skip"].build(sg))
        assert built and built == list(builders["keep"].build(sg)) and not any(s.world_knowledge for s in built)


def test_an_invented_rule_over_real_entities_is_not(people_kg):
    """Whether Lynn Redgrave is tall by the graph's own 1.80 m: no model knows that threshold."""
    builders = {policy: ScenarioBuilder(people_kg, load_rules(people_kg), world_knowledge=policy) for policy in ("skip", "keep")}
    invented = _rule_subgraphs(people_kg, "r-tall")
    assert len(invented) == len(REAL + INVENTED)
    assert all(f.subject.value.split("/")[-1] in {p[0] for p in REAL + INVENTED} for sg in invented for f in sg.facts)
    assert not any(builders["skip"].world_answerable(sg) for sg in invented)
    for sg in invented:
        built = list(builders["skip"].build(sg))
        assert built and built == list(builders["keep"].build(sg)) and not any(s.world_knowledge for s in built)


def _synth(tmp_path: Path, people: list, *options: str) -> int:
    """``kgsynth synth`` on the people with the library rules; its exit code."""
    (tmp_path / "graph").mkdir(parents=True)
    graph = _people(tmp_path / "graph", people, LIBRARY)
    return run(["synth", "--graph", str(graph), "--n", "8", "--out", str(tmp_path / "out"), *options])


def test_a_run_left_with_nothing_but_world_knowledge_says_so_in_one_line(tmp_path, capsys):
    assert _synth(tmp_path, REAL) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"error: no scenario to build: {2 * len(REAL)} subgraphs answerable from world knowledge were left out: "
                   "their entities are real, e.g. <http://example.org/fb/" + err.split("e.g. <http://example.org/fb/", 1)[1])
    assert err.endswith('> (its IRI ends in a Freebase id); --world-knowledge keep (sampling.world_knowledge = "keep") '
                        "builds them, flagged metadata.world_knowledge")
    assert len(err.splitlines()) == 1 and not (tmp_path / "out" / "items.jsonl").exists()


def test_keep_builds_them_and_a_run_that_left_some_out_notes_it(tmp_path, capsys):
    assert _synth(tmp_path / "keep", REAL, "--world-knowledge", "keep") == 0
    kept = list(read_items(tmp_path / "keep" / "out" / "items.jsonl"))
    assert kept and all(i.metadata.world_knowledge for i in kept)
    assert _synth(tmp_path / "auto", REAL + INVENTED) == 0
    items = list(read_items(tmp_path / "auto" / "out" / "items.jsonl"))
    assert items and not any(i.metadata.world_knowledge for i in items)
    notes = json.loads((tmp_path / "auto" / "out" / "manifest.json").read_text(encoding="utf-8"))["notes"]
    assert notes[0].startswith(f"{2 * len(REAL)} subgraphs answerable from world knowledge were left out")
    assert f"note: {notes[0]}" in capsys.readouterr().err
