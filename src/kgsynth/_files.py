"""Files every stage writes the same way: one compact JSON line per row, JSONL read back
past a line cut off by a killed writer, JSONL and JSON written through a ``.partial`` name
and renamed into place, and a file's SHA-256. Synthesis, evaluation, pressure runs and
releases use them for their own files."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from pydantic_core import to_json


def json_line(row: dict) -> bytes:
    """One compact UTF-8 JSON line (pydantic-core's serialiser: the same bytes as
    ``json.dumps(row, ensure_ascii=False, separators=(",", ":"))``, four times faster)."""
    return to_json(row) + b"\n"


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


def drop_partial_line(path: Path) -> None:
    """A killed writer can leave half a line; cut it so appends start on a fresh line."""
    if path.exists() and (data := path.read_bytes()) and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


def read_jsonl(path: Path) -> Iterator[dict]:
    """Rows of a JSONL file; a last line cut off by a killed writer is ignored."""
    with path.open(encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                return
            yield json.loads(line)


class JsonlWriter:
    """Rows to a JSONL file through a ``.partial`` name, renamed when the block ends cleanly;
    no row, no file (``datasets.load_dataset`` fails on an empty JSONL file), an earlier one removed."""

    def __init__(self, path: Path):
        self.path = path
        self.tmp = path.with_name(path.name + ".partial")
        self.rows = 0

    def __enter__(self) -> JsonlWriter:
        self.file = self.tmp.open("wb")
        return self

    def write(self, row: dict) -> None:
        self.file.write(json_line(row))
        self.rows += 1

    def __exit__(self, exc_type, exc, tb) -> None:
        self.file.close()
        if exc_type is None and self.rows:
            os.replace(self.tmp, self.path)
        elif exc_type is None:
            self.tmp.unlink()
            self.path.unlink(missing_ok=True)
