"""Reading what ``kgsynth eval`` and ``kgsynth report`` are given, strictly: a dataset is
checked against its manifest (item count, sha256 of each file read), and every JSON-lines
file row by row; anything damaged is refused in one line that names the file, the line
and what is wrong, so a run never evaluates part of a dataset without a word."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from kgsynth.dataset.splits import item_from_row
from kgsynth.errors import KgsynthError
from kgsynth.synth.dialogues.item import Item

ITEMS = "items.jsonl"
MANIFEST = "manifest.json"
RULES = "private/rules.jsonl"
_REWRITE = "write the dataset again with kgsynth synth"

_Row = TypeVar("_Row")


class DatasetError(KgsynthError):
    """A dataset or results folder that is missing, damaged or not what its manifest says."""


def require_folder(folder: Path, what: str) -> None:
    if not folder.exists():
        raise DatasetError(f"{folder} does not exist: give the folder {what}")
    if not folder.is_dir():
        raise DatasetError(f"{folder} is a file, not a folder: give the folder {what}")


def require_dataset(dataset: Path) -> dict:
    """The manifest of a finished dataset in ``dataset``, or one line saying what is missing."""
    require_folder(dataset, "kgsynth synth wrote (it holds items.jsonl and manifest.json)")
    for name in (ITEMS, MANIFEST):
        path = dataset / name
        if not path.exists():
            raise DatasetError(f"{dataset} is not a kgsynth dataset: {path} is missing (write one with kgsynth synth)")
        if not path.is_file():
            raise DatasetError(f"{path} is not a file: {dataset} is not a kgsynth dataset")
    return read_manifest(dataset)


def read_manifest(dataset: Path) -> dict:
    path = dataset / MANIFEST
    manifest = read_json(path)
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict) or not isinstance(manifest.get("items"), int):
        raise DatasetError(f"{path} is not a kgsynth manifest (it needs 'items' and 'files'): {_REWRITE}")
    return manifest


def read_json(path: Path) -> object:
    """One JSON document; a missing, unreadable or broken file is one line."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise DatasetError(f"{path} is not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise DatasetError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path} is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None


def read_rows(path: Path, digest: Callable[[bytes], None] | None = None) -> Iterator[tuple[int, dict]]:
    """(line number, row) of a JSON-lines file; a row that is not a JSON object, or a last
    line without its line end (a file cut off), is one line naming the file and the line."""
    try:
        stream = path.open("rb")
    except OSError as e:
        raise DatasetError(f"cannot read {path}: {e.strerror or e}") from None
    with stream:
        for number, raw in enumerate(stream, 1):
            if digest:
                digest(raw)
            if not raw.endswith(b"\n"):
                raise DatasetError(f"{path} is cut off in line {number} (the line has no end): the file is damaged")
            try:
                row = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as e:
                raise DatasetError(f"{path} line {number}: not UTF-8 text (byte {e.start} of the line)") from None
            except json.JSONDecodeError as e:
                raise DatasetError(f"{path} line {number}: not valid JSON ({e.msg} at column {e.colno})") from None
            if not isinstance(row, dict):
                raise DatasetError(f"{path} line {number}: not a JSON object")
            yield number, row


def parse_rows(path: Path, parse: Callable[[dict], _Row], digest: Callable[[bytes], None] | None = None) -> list[_Row]:
    """Every row of ``path`` through ``parse``; a row ``parse`` cannot take is one line
    naming the file, the line and the first field that is missing or wrong."""
    parsed = []
    for number, row in read_rows(path, digest):
        try:
            parsed.append(parse(row))
        except KeyError as e:
            raise DatasetError(f"{path} line {number}: the field {e.args[0]!r} is missing") from None
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(row)"
            kind = "is missing" if first["type"] == "missing" else first["msg"].removeprefix("Value error, ")
            raise DatasetError(f"{path} line {number}: {where}: {kind}") from None
        except (TypeError, ValueError, AttributeError) as e:
            raise DatasetError(f"{path} line {number}: not a row this file can hold ({e})") from None
    return parsed


def verified_rows(dataset: Path, name: str, manifest: dict, parse: Callable[[dict], _Row],
                  count: int | None = None) -> list[_Row]:
    """The rows of the dataset's file ``name``: as many as ``count`` (when given), and the
    file's sha256 the one the manifest records."""
    path = dataset / name
    recorded = manifest["files"].get(name)
    if not isinstance(recorded, str):
        raise DatasetError(f"{dataset / MANIFEST} records no sha256 for {name}: {_REWRITE}")
    sha = hashlib.sha256()
    rows = parse_rows(path, parse, sha.update)
    if count is not None and len(rows) != count:
        raise DatasetError(f"{path} holds {len(rows):,} rows, {dataset / MANIFEST} records {count:,} items: "
                           f"the file was cut or changed; {_REWRITE}")
    if (found := sha.hexdigest()) != recorded:
        raise DatasetError(
            f"{path} does not match {dataset / MANIFEST}: sha256 {found[:12]}... found, {recorded[:12]}... recorded "
            f"(the file was changed after kgsynth synth wrote it); {_REWRITE}"
        )
    return rows


def load_dataset(dataset: Path) -> tuple[list[Item], dict]:
    """Every item of a dataset and its manifest, checked: each row an item, as many items
    as the manifest records, and ``items.jsonl`` the file the manifest's hash is of."""
    manifest = require_dataset(dataset)
    items = verified_rows(dataset, ITEMS, manifest, item_from_row, count=manifest["items"])
    if not items:
        raise DatasetError(f"{dataset / ITEMS} holds no items")
    return items, manifest


def load_rules(dataset: Path, manifest: dict | None = None, invented_only: bool = False) -> dict[str, dict[str, str]]:
    """Rule IRI -> language -> statement, from the dataset's ``private/rules.jsonl`` (its hash
    checked); ``invented_only`` leaves out the library rules, which a model can know."""
    path = dataset / RULES
    manifest = manifest if manifest is not None else read_manifest(dataset)
    if not path.is_file() and manifest.get("answers") == {}:  # no item applies a rule: a graph without rules
        return {}                                             # gives no rules file (it would be empty)
    if not path.is_file():
        raise DatasetError(f"rules = 'given' needs {path}; datasets written by kgsynth 0.1 lack it: {_REWRITE}")
    rows = verified_rows(dataset, RULES, manifest, lambda row: (row["rule_iri"], row["statements"], row.get("origin")))
    return {iri: statements for iri, statements, origin in rows if not (invented_only and origin == "library")}
