"""Dataset files: every item as JSONL and Parquet, the public/private split, a manifest.

Rows have one fixed schema (``datasets.load_dataset("json"/"parquet", ...)`` reads every
file): the gold is always a string (a set's members joined by "; ") with ``gold_items``
listing the members, and decimals are strings. Files are written to a temporary name and
renamed, so a killed run never leaves a half-written file; nothing time-dependent is
written, so the same seed and config give byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kgsynth.synth.item import Item

SET_SEPARATOR = "; "
_PARQUET_BATCH = 2_000

# file stem -> the columns of a row (a public file never holds a gold answer)
SPLITS = {
    "items": None,  # everything
    "public/dialogues": ("public_id", "language", "dialogue"),
    "public/questions": ("public_id", "language", "question", "format_instruction", "answer_format", "constraints"),
    "private/answers": ("public_id", "gold", "gold_items", "gold_aliases"),
    "private/mapping": ("public_id", "id", "scenario_id", "subgraph_id", "cell", "source_triples"),
}


def public_id(item: Item, version: str, seed: int) -> str:
    """An opaque id for the public files: reveals nothing of the content hash."""
    return hashlib.sha256(f"{version}:{seed}:{item.id}".encode()).hexdigest()[:12]


def item_row(item: Item, version: str, seed: int) -> dict:
    row = item.model_dump(mode="json")
    gold = item.gold if isinstance(item.gold, list) else [item.gold]
    m = item.metadata
    row |= {
        "public_id": public_id(item, version, seed),
        "gold": SET_SEPARATOR.join(gold),
        "gold_items": gold,
        "scenario_id": m.scenario_id,
        "subgraph_id": m.subgraph_id,
        "cell": f"{m.category}/{m.difficulty.value}/{m.answer_format.value}",
        "source_triples": list(m.source_triples),
    }
    return row


def item_from_row(row: dict) -> Item:
    """The item a row of ``items.jsonl`` / ``items.parquet`` was written from."""
    fields = {k: row[k] for k in Item.model_fields}
    fields["gold"] = row["gold_items"] if row["answer_format"] == "set" else row["gold"]
    return Item.model_validate(fields)


def read_items(path: Path) -> Iterator[Item]:
    """Items of a dataset's ``items.jsonl``."""
    return (item_from_row(row) for row in read_jsonl(path))


def _prototype_row() -> dict:
    from decimal import Decimal

    from kgsynth.synth.dialogue import Turn
    from kgsynth.synth.formats import AnswerFormat, Constraints
    from kgsynth.synth.item import ItemMetadata

    metadata = {name: _PROTOTYPE_VALUES.get(name, "x") for name in ItemMetadata.model_fields}
    item = Item(
        id="x",
        language="en",
        dialogue=(Turn(speaker="x", role="x", text="x", kind="fact", facts=(0,)),),
        question="x",
        format_instruction="x",
        answer_format=AnswerFormat.number,
        constraints=Constraints(tolerance=Decimal(0), unit="x", rounding=0, range=(Decimal(0), Decimal(1)), max_words=1),
        gold="x",
        gold_aliases=["x"],
        metadata=ItemMetadata.model_validate(metadata),
    )
    return item_row(item, "x", 0)


_PROTOTYPE_VALUES = {
    "difficulty": "easy", "answer_format": "number", "position": "start", "answer_in_dialogue": False,
    "fact_turns": (0,), "fact_to_turn": (0,), "fact_values": ("x",), "speakers": ("x",), "source_triples": ("x",),
    **dict.fromkeys(("turns", "fact_turn_count", "links", "noise_turns", "clarifications", "reasks", "corrections",
                     "padding_turns", "token_length", "seed"), 0),
}


def _json_line(row: dict) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"


class DatasetWriter:
    """Streams rows into every split as JSONL and Parquet (in batches, bounded memory)."""

    def __init__(self, out: Path):
        self.out = out
        self._stack = ExitStack()
        self._jsonl: dict[str, object] = {}
        self._parquet: dict[str, pq.ParquetWriter] = {}
        self._buffers: dict[str, list[dict]] = {name: [] for name in SPLITS}
        self._schemas: dict[str, pa.Schema] = {}
        self.paths: list[Path] = []

    def __enter__(self) -> DatasetWriter:
        for name in SPLITS:
            path = self._tmp(f"{name}.jsonl")
            self._jsonl[name] = self._stack.enter_context(path.open("w", encoding="utf-8", newline="\n"))
        return self

    def _tmp(self, relative: str) -> Path:
        final = self.out / relative
        final.parent.mkdir(parents=True, exist_ok=True)
        self.paths.append(final)
        return final.with_name(final.name + ".partial")

    def write(self, row: dict) -> None:
        for name, columns in SPLITS.items():
            part = row if columns is None else {c: row[c] for c in columns}
            self._jsonl[name].write(_json_line(part))
            self._buffers[name].append(part)
            if len(self._buffers[name]) >= _PARQUET_BATCH:
                self._flush(name)

    def _flush(self, name: str) -> None:
        rows, self._buffers[name] = self._buffers[name], []
        if not rows:
            return
        if name not in self._parquet:
            # A fully populated prototype row fixes every column's type: a first batch
            # whose optional fields are all empty would otherwise type them as null.
            columns = SPLITS[name]
            prototype = _PROTOTYPE if columns is None else {c: _PROTOTYPE[c] for c in columns}
            self._schemas[name] = pa.Table.from_pylist([prototype]).schema
            self._parquet[name] = pq.ParquetWriter(self._tmp(f"{name}.parquet"), self._schemas[name])
        self._parquet[name].write_table(pa.Table.from_pylist(rows, schema=self._schemas[name]))

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            for name in SPLITS:
                self._flush(name)
            for writer in self._parquet.values():
                writer.close()
        self._stack.close()
        if exc_type is None:
            for final in self.paths:
                os.replace(final.with_name(final.name + ".partial"), final)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_json_atomic(path: Path, data: object) -> None:
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_jsonl(path: Path) -> Iterator[dict]:
    """Rows of a JSONL file; a last line cut off by a killed writer is ignored."""
    with path.open(encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                return
            yield json.loads(line)


def write_jsonl(path: Path, rows: Iterable[dict]) -> None:
    tmp = path.with_name(path.name + ".partial")
    with tmp.open("w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(_json_line(row))
    os.replace(tmp, path)


_PROTOTYPE = _prototype_row()
