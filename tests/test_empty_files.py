"""No empty dataset file is written: ``datasets.load_dataset`` fails on an empty JSONL (and an
empty Parquet) file, so a file that would hold no rows is left out, and out of the manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DEMO

from kgsynth._files import JsonlWriter
from kgsynth.dataset.splits import SPLITS, DatasetWriter
from kgsynth.errors import KgsynthError
from kgsynth.eval.dataset import load_rules
from kgsynth.filters import StructureFilter
from kgsynth.kg import KnowledgeGraph
from kgsynth.pipeline.config import SynthConfig
from kgsynth.pipeline.run import synthesize

datasets = pytest.importorskip("datasets")


def _files(out: Path) -> set[str]:
    return {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}


def _load_every_file(out: Path, tmp_path: Path, monkeypatch) -> dict[str, int]:
    """Rows of every JSONL and Parquet file in ``out``, each read by ``datasets.load_dataset``."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    rows = {}
    for name in sorted(_files(out)):
        kind = {".jsonl": "json", ".parquet": "parquet"}.get(Path(name).suffix)
        if kind:
            assert (out / name).stat().st_size > 0, name
            loaded = datasets.load_dataset(kind, data_files=str(out / name), split="train", cache_dir=str(tmp_path / "hf"))
            rows[name] = len(loaded)
    return rows


def test_a_run_without_rules_or_rejections_writes_no_empty_file(tmp_path, monkeypatch):
    """A graph without rules (the demo less rules.ttl and library.ttl), simple questions:
    nothing is rejected and there is no rule to state, so neither file is written."""
    files = [p for p in sorted(DEMO.glob("*.ttl")) if p.name not in ("rules.ttl", "library.ttl")]
    kg = KnowledgeGraph.load(*files, lang=("en", "ru"))
    out = tmp_path / "out"
    result = synthesize(kg, SynthConfig.model_validate({"sampling": {"shapes": ["simple"]}, "dataset": {"n": 20}}), out)
    rows = _load_every_file(out, tmp_path, monkeypatch)
    splits = {f"{name}.{suffix}" for name in SPLITS for suffix in ("jsonl", "parquet")}
    assert rows == dict.fromkeys(sorted(splits), result.items)  # no rejections.jsonl, no private/rules.jsonl
    assert set(result.manifest["files"]) == splits and _files(out) == splits | {"manifest.json", "filter_report.json"}
    assert result.manifest["filters"]["structure"]["rejected"] == 0 and result.manifest["answers"] == {}
    assert load_rules(out) == {}  # kgsynth eval's rules = "given": no rule, nothing to give


def test_a_run_that_keeps_no_item_writes_no_split_files(demo_kg, tmp_path, monkeypatch):
    """Every item rejected: the splits would be empty, so only the rejections and rules are
    written; a finished dataset of an earlier run in the folder loses its split files."""
    out = tmp_path / "out"
    synthesize(demo_kg, SynthConfig.model_validate({"dataset": {"n": 20}}), out)
    assert {"items.jsonl", "items.parquet"} <= _files(out)
    monkeypatch.setattr(StructureFilter, "reason", lambda self, item: "rejected by the test")
    with pytest.raises(KgsynthError, match="wrote no item.*structure rejected most"):
        synthesize(demo_kg, SynthConfig.model_validate({"dataset": {"n": 20, "seed": 1}}), out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["items"] == 0 and set(manifest["files"]) == {"rejections.jsonl", "private/rules.jsonl"}
    assert _files(out) == {*manifest["files"], "manifest.json", "filter_report.json"}
    rows = _load_every_file(out, tmp_path, monkeypatch)
    assert set(rows) == set(manifest["files"]) and all(rows.values())


def test_the_writers_leave_no_file_for_no_rows(tmp_path):
    with DatasetWriter(tmp_path / "ds") as writer:
        pass
    assert writer.paths == [] and _files(tmp_path / "ds") == set()
    (tmp_path / "old.jsonl").write_text('{"a": 1}\n', encoding="utf-8")  # an earlier run's file goes too
    with JsonlWriter(tmp_path / "old.jsonl") as empty:
        pass
    assert empty.rows == 0 and not (tmp_path / "old.jsonl").exists() and not (tmp_path / "old.jsonl.partial").exists()
