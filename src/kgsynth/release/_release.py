"""``kgsynth release``: version N of a benchmark, whose items repeat no subgraph and no
question of an earlier release, with a diff against the previous release and a dataset card."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from pydantic import Field

from kgsynth._config import Strict
from kgsynth._files import JsonlWriter, read_jsonl, sha256_file, write_json_atomic
from kgsynth.errors import KgsynthError
from kgsynth.kg import KnowledgeGraph
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import Progress, SynthResult, synthesize
from kgsynth.release._card import DEFAULT_LICENSE, card
from kgsynth.release._facts import GraphRecord, fact_digest, triples
from kgsynth.release._version import check_newer, next_version
from kgsynth.synth.scenarios.published import Published
from kgsynth.synth.scenarios.scenario import question_digest

CARD = "README.md"
HISTORY = "private/history.jsonl"  # every release's items so far: release, subgraph_id, question (its digest)
FACTS = "private/facts.txt"  # fact_digest of each triple of this release's graph, sorted, one per line
ENTITIES = "private/entities.txt"  # the graph's entity IRIs, sorted, one per line
CHANGES = "private/changes.jsonl"  # the entities and facts new since the previous release (none without one)


class ReleaseSettings(Strict):
    name: str = Field("kgsynth benchmark", min_length=1, description="the dataset card's title, before the version")
    license: str = Field(DEFAULT_LICENSE, min_length=1, description="the dataset's license, as a hub's license id (cc-by-4.0 "
                         "when unset: set the license of the graph the items come from)")


class ReleaseConfig(SynthConfig):
    """A synth config with a ``[release]`` section (``dataset.version`` is the release's version)."""

    release: ReleaseSettings = ReleaseSettings()


@dataclass(frozen=True)
class Previous:
    """What a release folder tells the next one."""

    folder: Path
    version: str
    releases: tuple[str, ...]  # every version up to this one
    history: tuple[dict, ...]
    graph: GraphRecord

    @property
    def published(self) -> Published:
        return Published(frozenset(row["subgraph_id"] for row in self.history), frozenset(row["question"] for row in self.history))


@dataclass(frozen=True)
class ReleaseResult:
    out: Path
    section: dict  # the manifest's ``release`` section
    synth: SynthResult


def read_previous(folder: Path) -> Previous:
    """The release in ``folder``, its files checked against its manifest; one line when it is not one."""
    if not folder.is_dir():
        what = "a file" if folder.exists() else "missing"
        raise KgsynthError(f"the previous release {folder} is {what}: give the folder kgsynth release wrote")
    path = folder / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KgsynthError(f"{folder} is not a kgsynth release: it has no manifest.json") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise KgsynthError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    section = manifest.get("release") if isinstance(manifest, dict) else None
    if not isinstance(section, dict) or not isinstance(section.get("version"), str) or not isinstance(manifest.get("files"), dict):
        raise KgsynthError(f"{folder} is not a kgsynth release: {path} has no 'release' section (a dataset of kgsynth synth "
                           "is no release)")
    for name in (HISTORY, FACTS, ENTITIES):
        recorded, file = manifest["files"].get(name), folder / name
        if not file.is_file():
            raise KgsynthError(f"the previous release {folder} lacks {name}: write it again with kgsynth release")
        if sha256_file(file) != recorded:
            raise KgsynthError(f"{file} does not match {path} (changed after kgsynth release wrote it): "
                               "write it again with kgsynth release")
    try:
        history = tuple(read_jsonl(folder / HISTORY))
        if not all(isinstance(row.get("subgraph_id"), str) and isinstance(row.get("question"), str) for row in history):
            raise ValueError("a row without subgraph_id or question")
    except (UnicodeDecodeError, ValueError, AttributeError) as e:
        raise KgsynthError(f"{folder / HISTORY} is not a release history: {e}") from None
    graph = GraphRecord(frozenset(_lines(folder / FACTS)), frozenset(_lines(folder / ENTITIES)))
    releases = section.get("releases", [section["version"]])
    if not isinstance(releases, list) or not releases or not all(isinstance(v, str) for v in releases) or releases[-1] != section["version"]:
        raise KgsynthError(f"{folder} is not a kgsynth release: release.releases in {path} is not the list of versions up to "
                           f"{section['version']} (found {json.dumps(releases)[:80]})")
    return Previous(folder, section["version"], tuple(releases), history, graph)


def _check_not_another_release(out: Path, version: str) -> None:
    """A folder holding another release is never written over (the same release is: a resumed or repeated run)."""
    try:
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return  # no finished dataset there, or one synthesize will name
    section = manifest.get("release") if isinstance(manifest, dict) else None
    if isinstance(section, dict) and section.get("version") != version:
        raise KgsynthError(f"{out} holds release {section.get('version')}: write release {version} to another folder")


def _check_same_graph(previous: Previous, graph: GraphRecord) -> None:
    """A graph that shares no entity with the previous release's is another graph, not its next state."""
    if previous.graph.entities and not previous.graph.entities & graph.entities:
        raise KgsynthError(f"the previous release {previous.folder} was made from another graph: none of its "
                           f"{len(previous.graph.entities):,} entities is in this one; give the release of this graph")


def release_version(version: str | None, previous: Previous | None, today: date) -> str:
    """``version``, checked to be greater than the previous release's, or else the next one
    after it (:func:`next_version`: 1.0.0 without one)."""
    before = previous.version if previous else None
    version = next_version(before, today) if version is None else version
    check_newer(version, before, str(previous.folder) if previous else "")
    return version


def release(kg: KnowledgeGraph, config: ReleaseConfig, out: Path, previous: Previous | None = None, version: str | None = None,
            progress: Progress | None = None, today: date | None = None) -> ReleaseResult:
    """Write the next release into ``out``: ``synthesize`` with what earlier releases published
    left out, then the history, the graph's record, the diff and the dataset card.

    ``previous`` is :func:`read_previous` of the last release's folder; ``version`` goes
    through :func:`release_version` and replaces ``config.dataset.version``; ``today`` is
    the release's date (default: today, UTC).

    Raises:
        KgsynthError: the version is not greater than the previous release's, ``out`` is
            the previous release's folder, the graph is a SPARQL endpoint (a release lists
            every fact of its graph), or what ``synthesize`` raises.
    """
    today = today or datetime.now(UTC).date()
    if previous and out.resolve() == previous.folder.resolve():
        raise KgsynthError(f"the new release would overwrite the previous one in {out}: write it to another folder")
    if kg.is_remote:
        raise KgsynthError("a release records every fact of its graph for the next one's diff: read the graph from files, not an endpoint")
    version = release_version(version, previous, today)
    _check_not_another_release(out, version)
    graph = GraphRecord.of(kg)
    if previous:
        _check_same_graph(previous, graph)
    config = config.model_copy(update={"dataset": config.dataset.model_copy(update={"version": version})})
    published = previous.published if previous else Published()
    result = synthesize(kg, config, out, progress, published)
    items = list(read_jsonl(out / "items.jsonl"))
    history = _history(items, version)
    _check_unpublished(history, published)
    with JsonlWriter(out / HISTORY) as writer:
        for row in [*(previous.history if previous else ()), *history]:
            writer.write(row)
    _write_lines(out / FACTS, graph.facts)
    _write_lines(out / ENTITIES, graph.entities)
    before = previous.graph if previous else GraphRecord(frozenset(), frozenset())
    new_facts, new_entities = graph.facts - before.facts, graph.entities - before.entities
    # a first release's changes would be the whole graph; nothing new: no file (JsonlWriter writes no empty one)
    changes = previous is not None and _write_changes(out / CHANGES, kg, new_entities, new_facts)
    if not changes:
        (out / CHANGES).unlink(missing_ok=True)  # an earlier run's
    section = {
        "version": version,
        "previous": previous.version if previous else None,
        "releases": [*(previous.releases if previous else ()), version],
        "date": today.isoformat(),
        "items": len(items),
        "items_by_language": dict(sorted(Counter(row["language"] for row in items).items())),
        "items_by_shape": dict(sorted(Counter(row["metadata"]["shape"] for row in items).items())),
        "graph": {"facts": len(graph.facts), "entities": len(graph.entities)},
        "new": {
            "entities": len(new_entities),
            "facts": len(new_facts),
            "subgraphs": len({row["subgraph_id"] for row in history}),
            "items": len(items),
            "items_on_new_facts": sum(1 for row in items if any(fact_digest(t) in new_facts for t in row["metadata"]["source_triples"])),
        },
        "removed": {"entities": len(before.entities - graph.entities), "facts": len(before.facts - graph.facts)},
        "left_out": {"subgraphs": len(published.subgraph_ids), "questions": len(published.questions)},
        "files": {"history": HISTORY, "facts": FACTS, "entities": ENTITIES, "changes": CHANGES if changes else None},
    }
    languages = sorted(section["items_by_language"])
    (out / CARD).write_text(card(config.release.name, config.release.license, languages, section), encoding="utf-8")
    _add_to_manifest(out, section, [CARD, HISTORY, FACTS, ENTITIES, *([CHANGES] if changes else [])])
    return ReleaseResult(out=out, section=section, synth=result)


def _add_to_manifest(out: Path, section: dict, written: list[str]) -> None:
    """The synth manifest with the ``release`` section and the sha256 of the files the release wrote."""
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    files = {name: digest for name, digest in manifest["files"].items() if name not in (CARD, CHANGES)}  # an earlier run's
    files |= {name: sha256_file(out / name) for name in written}
    manifest["files"] = dict(sorted(files.items()))
    manifest["release"] = section
    write_json_atomic(out / "manifest.json", manifest)


def _history(items: list[dict], version: str) -> list[dict]:
    """One row per subgraph and question of the release's items, sorted."""
    pairs = {(row["metadata"]["subgraph_id"], question_digest(row["question"])) for row in items}
    return [{"release": version, "subgraph_id": s, "question": q} for s, q in sorted(pairs)]


def _check_unpublished(history: list[dict], published: Published) -> None:
    """The pipeline leaves out what is published; this says so loudly if it ever did not."""
    repeats = [row for row in history if row["subgraph_id"] in published.subgraph_ids or row["question"] in published.questions]
    if repeats:
        raise KgsynthError(f"internal error: {len(repeats)} items repeat an earlier release (e.g. subgraph {repeats[0]['subgraph_id']})")


def _write_changes(path: Path, kg: KnowledgeGraph, entities: frozenset[str], facts: frozenset[str]) -> bool:
    """The new entities (IRIs) and facts (N-Triples), one row each; whether there was any."""
    new_triples = sorted({triple for triple, _ in triples(kg) if fact_digest(triple) in facts})
    with JsonlWriter(path) as writer:
        for iri in sorted(entities):
            writer.write({"kind": "entity", "value": iri})
        for triple in new_triples:
            writer.write({"kind": "fact", "value": triple})
    return writer.rows > 0


def _write_lines(path: Path, values: frozenset[str]) -> None:
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text("".join(f"{value}\n" for value in sorted(values)), encoding="utf-8")
    os.replace(tmp, path)


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise KgsynthError(f"{path} is not UTF-8 text: write the release again with kgsynth release") from None
