"""`kgsynth release`: two (then three) releases from two batches of the demo graph, each
loadable by `datasets.load_dataset(folder, "questions")` and by `kgsynth eval`, whose items
repeat no subgraph and no question of an earlier release, with a diff the test recomputes
from the graph files itself."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pyoxigraph as ox
import pytest
from conftest import DEMO

from kgsynth.cli._app import run
from kgsynth.kg import KnowledgeGraph
from kgsynth.queries import enumerate_subgraphs
from kgsynth.release import next_version, version_key

TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
DROPPED_CLASSES = {"Employee", "Order", "Customer", "Policy", "Claim", "Booking"}


def _demo_quads() -> list[ox.Quad]:
    return [q for path in sorted(DEMO.glob("*.ttl")) for q in ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)]


def _first_batch(path: Path) -> None:
    """The demo graph less every second member of six classes (and every triple naming one),
    as N-Quads: the first document batch; the whole demo graph (Turtle) is the second."""
    quads = _demo_quads()
    members = sorted({q.subject.value for q in quads if q.predicate.value == TYPE and q.object.value.rsplit("/", 1)[-1] in DROPPED_CLASSES})
    dropped = set(members[::2])
    kept = [q for q in quads if q.subject.value not in dropped and getattr(q.object, "value", None) not in dropped]
    with path.open("wb") as f:
        ox.serialize(kept, f, format=ox.RdfFormat.N_QUADS)


def _facts(quads) -> tuple[set[str], set[str]]:
    """(triples in N-Triples, subject IRIs) of the triples without a blank node, as an
    Oxigraph store holds them (``1979.50`` as ``1979.5``: the form ``source_triples`` has)."""
    store = ox.Store()
    store.extend(ox.Quad(q.subject, q.predicate, q.object) for q in quads)
    triples, subjects = set(), set()
    for q in store:
        if not (isinstance(q.subject, ox.BlankNode) or isinstance(q.object, ox.BlankNode)):
            triples.add(f"{q.subject} {q.predicate} {q.object} .")
            subjects.add(q.subject.value)
    return triples, subjects


def _release(*args: str) -> int:
    return run(["release", "--n", "40", "--seed", "3", *args])


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("releases")
    batch1 = root / "batch1.nq"
    _first_batch(batch1)
    folders = {"batch1": batch1, "v1": root / "v1", "v2": root / "v2", "v3": root / "v3"}
    assert _release("--graph", str(batch1), "--out", str(folders["v1"])) == 0
    assert _release("--graph", str(DEMO), "--previous", str(folders["v1"]), "--out", str(folders["v2"])) == 0
    assert _release("--graph", str(DEMO), "--previous", str(folders["v2"]), "--version", "2030.01", "--out", str(folders["v3"])) == 0
    return folders


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def _items(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "items.jsonl").read_text(encoding="utf-8").splitlines()]


def _normalised(question: str) -> str:
    return " ".join(question.casefold().split())


def test_versions_and_history(releases):
    v1, v2, v3 = (_manifest(releases[k]) for k in ("v1", "v2", "v3"))
    assert (v1["version"], v2["version"], v3["version"]) == ("1.0.0", "1.1.0", "2030.01")
    assert (v1["release"]["previous"], v2["release"]["previous"], v3["release"]["previous"]) == (None, "1.0.0", "1.1.0")
    assert v3["release"]["releases"] == ["1.0.0", "1.1.0", "2030.01"]
    history = [json.loads(line) for line in (releases["v3"] / "private/history.jsonl").read_text().splitlines()]
    for key in ("v1", "v2", "v3"):  # every release's items, each subgraph with each of its questions once
        items, version = _items(releases[key]), _manifest(releases[key])["version"]
        assert {row["subgraph_id"] for row in history if row["release"] == version} == {i["metadata"]["subgraph_id"] for i in items}
        assert sum(row["release"] == version for row in history) == len(items)  # en and ru ask different questions


def test_items_do_not_repeat_an_earlier_release(releases):
    seen_subgraphs: set[str] = set()
    seen_questions: set[str] = set()
    for key in ("v1", "v2", "v3"):
        items = _items(releases[key])
        assert len(items) == _manifest(releases[key])["items"] > 0
        subgraphs = {i["metadata"]["subgraph_id"] for i in items}
        questions = {_normalised(i["question"]) for i in items}
        assert not subgraphs & seen_subgraphs, key
        assert not questions & seen_questions, key
        seen_subgraphs |= subgraphs
        seen_questions |= questions
    v3 = _manifest(releases["v3"])["release"]["left_out"]  # v3 was given v2 only: v1 came through v2's history
    assert v3["subgraphs"] == len({i["metadata"]["subgraph_id"] for k in ("v1", "v2") for i in _items(releases[k])})


def test_diff_matches_the_graph_files(releases):
    old_facts, old_entities = _facts(ox.parse(path=str(releases["batch1"]), format=ox.RdfFormat.N_QUADS))
    new_facts, new_entities = _facts(_demo_quads())
    assert old_facts < new_facts
    v1, v2, v3 = (_manifest(releases[k])["release"] for k in ("v1", "v2", "v3"))
    assert v1["graph"] == {"facts": len(old_facts), "entities": len(old_entities)}
    assert v2["graph"] == {"facts": len(new_facts), "entities": len(new_entities)}
    assert v2["new"]["facts"] == len(new_facts - old_facts) and v2["new"]["entities"] == len(new_entities - old_entities)
    assert v2["removed"] == {"facts": 0, "entities": 0}
    assert v3["new"]["facts"] == v3["new"]["entities"] == 0  # the same graph again
    changes = [json.loads(line) for line in (releases["v2"] / "private/changes.jsonl").read_text().splitlines()]
    assert {c["value"] for c in changes if c["kind"] == "fact"} == new_facts - old_facts
    assert {c["value"] for c in changes if c["kind"] == "entity"} == new_entities - old_entities
    items = _items(releases["v2"])
    on_new = sum(1 for i in items if set(i["metadata"]["source_triples"]) & (new_facts - old_facts))
    assert v2["new"]["items"] == len(items) and v2["new"]["items_on_new_facts"] == on_new > 0
    assert v2["new"]["subgraphs"] == len({i["metadata"]["subgraph_id"] for i in items})
    assert all(set(i["metadata"]["source_triples"]) <= new_facts for i in items)  # source triples read as the graph's facts


def test_dataset_hub_loads_every_config(releases, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    import datasets

    for key in ("v1", "v2"):
        manifest = _manifest(releases[key])
        for config in ("questions", "dialogues", "answers", "mapping"):
            loaded = datasets.load_dataset(str(releases[key]), config, cache_dir=str(tmp_path / "hf"))
            assert list(loaded) == ["test"] and loaded["test"].num_rows == manifest["items"], (key, config)
        card = (releases[key] / "README.md").read_text(encoding="utf-8")
        assert card.startswith("---\n") and f"# kgsynth benchmark {manifest['version']}" in card


def test_kgsynth_eval_reads_a_release(releases):
    from kgsynth.eval.dataset import load_dataset, verified_rows

    for key in ("v1", "v2", "v3"):
        items, manifest = load_dataset(releases[key])
        assert len(items) == manifest["items"] == manifest["release"]["items"]
        for name in ("README.md", "private/history.jsonl"):
            assert name in manifest["files"]
        verified_rows(releases[key], "private/history.jsonl", manifest, dict)  # its hash is the one recorded


def test_subgraph_ids_are_the_same_in_two_loads(releases):
    """A subgraph's id is a hash of its facts: the same facts in two graphs (another file
    format, other triples around them) give the same id."""
    first = KnowledgeGraph.load(releases["batch1"], lang=("en", "ru"))
    second = KnowledgeGraph.load(DEMO, lang=("en", "ru"))
    for shape in ("simple", "rule_application"):
        ids = [{frozenset(f.triple for f in s.facts): s.id for s in enumerate_subgraphs(kg, shape)} for kg in (first, second)]
        common = ids[0].keys() & ids[1].keys()
        assert len(common) > 50, shape
        assert all(ids[0][facts] == ids[1][facts] for facts in common), shape


def test_version_rules():
    today = date(2025, 8, 3)
    assert next_version(None, today) == "1.0.0"
    assert next_version("1.4.2", today) == "1.5.0"
    assert next_version("2025.06", today) == "2025.08"
    assert next_version("2025.08", today) == "2025.08.1"
    assert next_version("2025.08.1", today) == "2025.08.2"
    assert version_key("2025.08.1") > version_key("2025.08") > version_key("1.5.0") > version_key("1.4.10") > version_key("1.4.9")


def _error(capsys, code: int) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("error: "), captured.err
    return lines[0]


def test_bad_inputs_are_one_line(releases, capsys, tmp_path):
    v1, demo = releases["v1"], str(DEMO)
    out = str(tmp_path / "out")
    assert "not greater than 1.0.0" in _error(capsys, _release("--graph", demo, "--previous", str(v1), "--version", "1.0.0", "--out", out))
    assert "not greater than 1.0.0" in _error(capsys, _release("--graph", demo, "--previous", str(v1), "--version", "0.9.9", "--out", out))
    assert "neither semantic" in _error(capsys, _release("--graph", demo, "--version", "v2", "--out", out))
    assert "overwrite the previous" in _error(capsys, _release("--graph", demo, "--previous", str(v1), "--out", str(v1)))
    assert "no manifest.json" in _error(capsys, _release("--graph", demo, "--previous", str(tmp_path), "--out", out))
    assert "is missing" in _error(capsys, _release("--graph", demo, "--previous", str(tmp_path / "nowhere"), "--out", out))
    synth_only = tmp_path / "synth-only"  # a dataset kgsynth synth wrote: no release section
    shutil.copytree(v1, synth_only)
    manifest = _manifest(synth_only)
    del manifest["release"]
    (synth_only / "manifest.json").write_text(json.dumps(manifest))
    assert "no 'release' section" in _error(capsys, _release("--graph", demo, "--previous", str(synth_only), "--out", out))
    tampered = tmp_path / "tampered"
    shutil.copytree(v1, tampered)
    with (tampered / "private/history.jsonl").open("a") as f:
        f.write('{"release":"1.0.0","subgraph_id":"x","question":"y"}\n')
    assert "does not match" in _error(capsys, _release("--graph", demo, "--previous", str(tampered), "--out", out))
    releases_a_string = tmp_path / "releases-a-string"
    shutil.copytree(v1, releases_a_string)
    manifest = _manifest(releases_a_string)
    manifest["release"]["releases"] = "1.0.0"
    (releases_a_string / "manifest.json").write_text(json.dumps(manifest))
    assert 'release.releases in {} is not the list of versions up to 1.0.0 (found "1.0.0")'.format(
        releases_a_string / "manifest.json") in _error(capsys, _release("--graph", demo, "--previous", str(releases_a_string), "--out", out))
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_a_folder_holding_a_release_is_not_written_over_by_another(releases, capsys, tmp_path):
    v1 = tmp_path / "v1"
    shutil.copytree(releases["v1"], v1)
    before = {p: p.read_bytes() for p in v1.rglob("*") if p.is_file()}
    assert _error(capsys, _release("--graph", str(DEMO), "--version", "2.0.0", "--out", str(v1))) == f"error: {v1} holds release 1.0.0: write release 2.0.0 to another folder"
    assert {p: p.read_bytes() for p in v1.rglob("*") if p.is_file()} == before


def test_a_previous_release_of_another_graph_is_refused(releases, capsys, tmp_path):
    other = tmp_path / "other.nt"
    other.write_text('<http://other.example/a> <http://www.w3.org/2000/01/rdf-schema#label> "A"@en .\n')
    message = _error(capsys, _release("--graph", str(other), "--previous", str(releases["v1"]), "--out", str(tmp_path / "out")))
    assert message.startswith(f"error: the previous release {releases['v1']} was made from another graph: none of its ")
    assert message.endswith("entities is in this one; give the release of this graph") and not (tmp_path / "out").exists()


def test_a_reworded_question_an_earlier_release_asked_is_rejected(releases):
    """A template question is left out when planned; a model's rewording is checked as the
    scenario is kept (the fake here: an item whose question an earlier release asked)."""
    from kgsynth.dataset.splits import item_from_row
    from kgsynth.pipeline.config import SynthConfig
    from kgsynth.pipeline.run import PUBLISHED, _Outcome, _Wording
    from kgsynth.synth.scenarios.published import Published
    from kgsynth.synth.scenarios.scenario import question_digest

    item = item_from_row(_items(releases["v1"])[0])
    asked = Published(questions=frozenset({question_digest(f"  {item.question.upper()} ")}))
    outcome = _Outcome(items=[item])
    assert not _Wording(SynthConfig(), [], None, None, asked).keep(outcome)
    assert outcome.items == [] and [r["filter"] for r in outcome.rejections] == [PUBLISHED]
    assert _Wording(SynthConfig(), [], None, None, Published(subgraph_ids=frozenset({"x"}))).keep(_Outcome(items=[item]))


def test_a_question_is_not_asked_again_over_changed_facts(releases, tmp_path):
    """Facts that change between batches (a new value of a fact v1 asked about) give a new
    subgraph id but the same question: the question alone keeps such a scenario out."""
    from decimal import Decimal

    from kgsynth.kg import load_rules
    from kgsynth.pipeline.config import SynthConfig
    from kgsynth.pipeline.run import plan_cells

    v1_items = _items(releases["v1"])
    asked = {t for i in v1_items for t in i["metadata"]["source_triples"]}
    store = ox.Store()
    store.extend(ox.Quad(q.subject, q.predicate, q.object) for q in ox.parse(path=str(releases["batch1"]), format=ox.RdfFormat.N_QUADS))
    edited = []
    for q in store:
        o = q.object
        if f"{q.subject} {q.predicate} {o} ." in asked and isinstance(o, ox.Literal) and o.datatype.value.endswith(("#decimal", "#integer")):
            o = ox.Literal(str(Decimal(o.value) + 1), datatype=o.datatype)
        edited.append(ox.Quad(q.subject, q.predicate, o))
    graph = tmp_path / "edited.nq"
    with graph.open("wb") as f:
        ox.serialize(edited, f, format=ox.RdfFormat.N_QUADS)

    v1_subgraphs = {i["metadata"]["subgraph_id"] for i in v1_items}
    v1_questions = {_normalised(i["question"]) for i in v1_items}
    kg = KnowledgeGraph.load(graph, lang=("en", "ru"))
    scenarios = [s for plan in plan_cells(kg, SynthConfig(), load_rules(kg)) for s in plan.scenarios]
    same_question = [s for s in scenarios if s.subgraph_id not in v1_subgraphs and _normalised(s.question["en"]) in v1_questions]
    assert same_question  # the case exists in this graph

    out = tmp_path / "v2"
    assert run(["release", "--graph", str(graph), "--previous", str(releases["v1"]), "--n", "600", "--out", str(out)]) == 0
    items = _items(out)
    assert not {_normalised(i["question"]) for i in items} & v1_questions
    assert not {i["metadata"]["subgraph_id"] for i in items} & v1_subgraphs
    rejections = [json.loads(line) for line in (out / "rejections.jsonl").read_text().splitlines()]
    assert not [r for r in rejections if r["filter"] == "published"]  # left out when planned, never worded
