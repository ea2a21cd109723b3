"""Dataset files: every item as JSONL and Parquet, the public/private split, a manifest.

Rows have one fixed schema (``datasets.load_dataset("json"/"parquet", ...)`` reads every
file; it fails on a file without rows, so a file that would have none is not written): the
gold is always a string (a set's members joined by "; ") with ``gold_items`` listing the
members, and decimals are strings. Files are written to a temporary name and
renamed, so a killed run never leaves a half-written file; nothing time-dependent is
written, so the same seed and config give byte-identical files.

``items`` and the private files keep the cell and scenario order, where an English item
sits next to its Russian twin; the public files do not (``public_order``): their rows go
by ``public_id``, an opaque hash, and no row sits next to one of its own scenario, so a
reader of the public files cannot pair the twins (nor their ``public_id``s) by position.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import shutil
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa
import pyarrow.json as pj
import pyarrow.parquet as pq

from kgsynth._files import json_line, read_jsonl
from kgsynth.synth.dialogues.item import Item
from kgsynth.synth.scenarios.scenario import cell_key

SET_SEPARATOR = "; "

# file stem -> the columns of a row (a public file never holds a gold answer)
SPLITS = {
    "items": None,  # everything
    "public/dialogues": ("public_id", "language", "dialogue"),
    "public/questions": ("public_id", "language", "question", "format_instruction", "answer_format", "constraints"),
    "private/answers": ("public_id", "gold", "gold_items", "gold_aliases"),
    "private/mapping": ("public_id", "id", "scenario_id", "subgraph_id", "cell", "source_triples", "sources"),
}


def row_from_dump(row: dict, version: str, seed: int) -> dict:
    """The file row of an item given as ``Item.model_dump(mode="json")``."""
    gold = row["gold"] if isinstance(row["gold"], list) else [row["gold"]]
    m = row["metadata"]
    return row | {
        "public_id": hashlib.sha256(f"{version}:{seed}:{row['id']}".encode()).hexdigest()[:12],
        "gold": SET_SEPARATOR.join(gold),
        "gold_items": gold,
        "scenario_id": m["scenario_id"],
        "subgraph_id": m["subgraph_id"],
        "cell": cell_key(m["category"], m["difficulty"], m["answer_format"]),
        "source_triples": list(m["source_triples"]),
        "sources": list(m["sources"]),
    }


def item_from_row(row: dict) -> Item:
    """The item a row of ``items.jsonl`` / ``items.parquet`` was written from."""
    fields = {k: row[k] for k in Item.model_fields if k in row}
    fields["gold"] = row["gold_items"] if row["answer_format"] == "set" else row["gold"]
    return Item.model_validate(fields)


def read_items(path: Path) -> Iterator[Item]:
    """Items of a dataset's ``items.jsonl``."""
    return (item_from_row(row) for row in read_jsonl(path))


def _prototype_row() -> dict:
    from decimal import Decimal

    from kgsynth.formats.answers import AnswerFormat, Choices, Constraints
    from kgsynth.synth.dialogues.dialogue import Turn
    from kgsynth.synth.dialogues.item import CriterionScore, ItemMetadata, Review

    metadata = {name: _PROTOTYPE_VALUES.get(name, "x") for name in ItemMetadata.model_fields}
    item = Item(
        id="x",
        language="en",
        dialogue=(Turn(speaker="x", role="x", text="x", kind="fact", facts=(0,)),),
        question="x",
        format_instruction="x",
        answer_format=AnswerFormat.number,
        constraints=Constraints(
            tolerance=Decimal(0), unit="x", rounding=0, range=(Decimal(0), Decimal(1)), max_words=1,
            choices=Choices(en=("x",), ru=("x",)), day_count=True, years="calendar", signed=True,
        ),
        gold="x",
        gold_aliases=["x"],
        metadata=ItemMetadata.model_validate(metadata),
        review=Review(model="x", total=0, criteria=(CriterionScore(name="x", score=0, rationale="x"),)),
    )
    return row_from_dump(item.model_dump(mode="json"), "x", 0)


_PROTOTYPE_VALUES = {
    "difficulty": "easy", "answer_format": "number", "position": "start", "answer_in_dialogue": False, "world_knowledge": False,
    "fact_turns": (0,), "fact_to_turn": (0,), "fact_values": ("x",), "speakers": ("x",), "source_triples": ("x",), "sources": ("x",),
    **dict.fromkeys(("turns", "fact_turn_count", "links", "inputs", "bridged", "summed", "noise_turns", "clarifications", "reasks", "corrections",
                     "confusable_turns", "padding_turns", "token_length", "seed"), 0),
}


def _project(name: str, row: dict) -> dict:
    columns = SPLITS[name]
    if columns is None:
        return row
    part = {c: row[c] for c in columns}
    if name == "public/dialogues":
        # a turn's kind and fact indices would give the answer away (a literal: 3x a comprehension)
        part["dialogue"] = [{"speaker": t["speaker"], "role": t["role"], "text": t["text"]} for t in row["dialogue"]]
    return part


def split_lines(row: dict) -> dict[str, bytes]:
    """The row as one JSON line per split (written once, copied as bytes afterwards)."""
    return {name: json_line(_project(name, row)) for name in SPLITS}


class DatasetWriter:
    """Streams pre-serialised lines into every split's JSONL; on a clean exit converts each
    JSONL to Parquet (pyarrow's streaming JSON reader, fixed schema) and renames both into place;
    a split without rows (a run that kept no item) gets neither file, and ``paths`` lists the files written.

    ``ready_jsonl`` (split -> a finished JSONL file) takes those files as they are instead
    of lines: they are hard-linked into place (copied where the file system cannot link),
    so the source stays intact for a resumed run.

    Lines come in the same item order for every split; on exit the public splits are
    rewritten in ``public_order`` (to a new file, never through a link to a source), the
    rest keep it. The order depends on the lines alone, so a resumed run writes the same bytes.
    """

    def __init__(self, out: Path, ready_jsonl: dict[str, Path] | None = None):
        self.out = out
        self.ready_jsonl = ready_jsonl
        self._stack = ExitStack()
        self._jsonl: dict[str, BinaryIO] = {}
        self.paths: list[Path] = []

    def __enter__(self) -> DatasetWriter:
        for name in SPLITS:
            self.paths += [self.out / f"{name}.jsonl", self.out / f"{name}.parquet"]
            path = _partial(self.out / f"{name}.jsonl")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.unlink(missing_ok=True)  # a leftover .partial may be a link to a spool: never write through it
            if self.ready_jsonl is None:
                self._jsonl[name] = self._stack.enter_context(path.open("wb"))
            else:
                _link_or_copy(self.ready_jsonl[name], path)
        return self

    def write_lines(self, lines: dict[str, bytes]) -> None:
        for name, line in lines.items():
            self._jsonl[name].write(line)

    def __exit__(self, exc_type, exc, tb) -> None:
        self._stack.close()
        if exc_type is not None:
            return
        _put_public_in_order(self.out)
        for name in SPLITS:
            jsonl = _partial(self.out / f"{name}.jsonl")
            if jsonl.stat().st_size == 0:  # no rows: no files (datasets.load_dataset fails on an empty JSONL or Parquet file)
                jsonl.unlink()
                for final in (self.out / f"{name}.jsonl", self.out / f"{name}.parquet"):
                    final.unlink(missing_ok=True)  # an earlier run's
                    self.paths.remove(final)
                continue
            _jsonl_to_parquet(jsonl, _partial(self.out / f"{name}.parquet"), _schema(name))
        for final in self.paths:
            _replace(_partial(final), final)


PUBLIC_SPLITS = tuple(name for name in SPLITS if name.startswith("public/"))


def public_order(public_ids: Sequence[str], scenarios: Sequence[str]) -> list[int]:
    """The public files' row order, as indices of the rows in item order: by ``public_id``
    (an opaque hash of the item id, so the order says nothing of cell, scenario or
    language), then no row next to a row of its own scenario, which a random order would
    leave about once per file: a row that would be is held back and placed at the first
    turn where it is not (and one left over at the end goes to the first place between two
    rows of other scenarios). A function of the rows alone: any run writing them agrees."""
    ranked = sorted(range(len(public_ids)), key=lambda i: (public_ids[i], i))
    order: list[int] = []
    held: list[int] = []  # rows set aside, oldest first

    def fits(row: int) -> bool:
        return not order or scenarios[order[-1]] != scenarios[row]

    for row in ranked:
        held.append(row)
        while (ready := next((k for k, waiting in enumerate(held) if fits(waiting)), None)) is not None:
            order.append(held.pop(ready))
    for row in held:  # every row left is of the last row's scenario
        scenario = scenarios[row]
        gaps = (p for p in range(len(order) + 1)
                if (p == 0 or scenarios[order[p - 1]] != scenario) and (p == len(order) or scenarios[order[p]] != scenario))
        order.insert(next(gaps, len(order)), row)  # nowhere apart (a single scenario): at the end
    return order


def _put_public_in_order(out: Path) -> None:
    """Rewrite the public splits' ``.partial`` JSONL in ``public_order``, read from the
    private mapping (its lines are in the same item order)."""
    public_ids, scenarios = [], []
    with _partial(out / "private/mapping.jsonl").open("rb") as f:
        for line in f:
            row = json.loads(line)
            public_ids.append(row["public_id"])
            scenarios.append(row["scenario_id"])
    order = public_order(public_ids, scenarios)
    for name in PUBLIC_SPLITS:
        source = _partial(out / f"{name}.jsonl")
        ordered = source.with_name(source.name + ".ordered")
        _write_lines_in_order(source, ordered, order)
        os.replace(ordered, source)  # a new file: a source linked to a spool is left as it was


def _write_lines_in_order(source: Path, target: Path, order: Sequence[int]) -> None:
    """``target``: the lines of ``source`` in ``order`` (a permutation of their indices)."""
    with source.open("rb") as f, target.open("wb") as out:
        if os.fstat(f.fileno()).st_size == 0:
            if order:
                raise ValueError(f"{source} is empty, but {len(order)} rows were to be ordered")
            return
        starts = [0]
        for line in f:
            starts.append(starts[-1] + len(line))
        if len(starts) - 1 != len(order):
            raise ValueError(f"{source} has {len(starts) - 1} lines, the private mapping {len(order)}")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            batch: list[bytes] = []
            for row in order:
                batch.append(data[starts[row]:starts[row + 1]])
                if len(batch) == 4096:
                    out.write(b"".join(batch))
                    batch.clear()
            out.write(b"".join(batch))


def _replace(partial: Path, final: Path) -> None:
    # rename() does nothing when both names link to one file: a resumed run links the spool
    # that a killed one had already put in place
    if final.exists() and os.path.samefile(partial, final):
        partial.unlink()
    else:
        os.replace(partial, final)


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _partial(path: Path) -> Path:
    return path.with_name(path.name + ".partial")


def _schema(split: str) -> pa.Schema:
    # A fully populated prototype row fixes every column's type: inferred from the data,
    # a batch whose optional fields are all empty would type them as null.
    return pa.Table.from_pylist([_project(split, _PROTOTYPE)]).schema


def _jsonl_to_parquet(source: Path, target: Path, schema: pa.Schema) -> None:
    options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error")
    with pq.ParquetWriter(target, schema) as writer:
        if source.stat().st_size == 0:
            return
        reader = pj.open_json(source, read_options=pj.ReadOptions(block_size=8 << 20), parse_options=options)
        for batch in reader:
            writer.write_batch(batch)


_PROTOTYPE = _prototype_row()
