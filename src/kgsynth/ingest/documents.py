"""Documents in: a folder of ``.txt`` / ``.md`` files, one such file, or a JSONL of
``{id, date, lang, title, text}``; each read into a :class:`Document` or, when it cannot
be used, a :class:`Problem` naming it (the others are read on)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kgsynth.errors import KgsynthError

TEXT_SUFFIXES = (".txt", ".md")
_SENTENCE_END = re.compile(r"[.!?…](?:[\"'»”)\]]*)\s+|\n\s*\n")
_UKRAINIAN = re.compile(r"[іїєґІЇЄҐ]")


class Document(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    text: str
    lang: str | None = None  # None: told by its letters when read
    date: dt.date | None = None
    title: str | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


class Problem(BaseModel):
    """A document that cannot be ingested, and why, in one line."""

    document: str
    reason: str


def read_documents(source: Path, languages: tuple[str, ...], max_mb: float) -> Iterator[Document | Problem]:
    """The documents at ``source`` in a stable order, each checked (text, size, language)."""
    if not source.exists():
        raise KgsynthError(f"cannot read {source}: no such file or folder")
    if source.is_dir():
        files = sorted(p for p in source.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
        if not files:
            raise KgsynthError(f"no documents in {source}: expected .txt or .md files, or give a .jsonl file")
        for path in files:
            yield _checked(_from_file(path, path.relative_to(source).with_suffix("").as_posix()), languages, max_mb)
    elif source.suffix.lower() == ".jsonl":
        yield from (_checked(d, languages, max_mb) if isinstance(d, Document) else d for d in _from_jsonl(source))
    elif source.suffix.lower() in TEXT_SUFFIXES:
        yield _checked(_from_file(source, source.stem), languages, max_mb)
    else:
        raise KgsynthError(f"cannot read documents from {source}: give a folder of .txt/.md files, one such file, or a .jsonl")


def _from_file(path: Path, doc_id: str) -> Document | Problem:
    data = path.read_bytes()
    text = _decoded(data, doc_id)
    if isinstance(text, Problem):
        return text
    title = None
    if path.suffix.lower() == ".md":
        heading = re.match(r"\s*#\s+(.+)", text)
        title = heading.group(1).strip() if heading else None
    return Document(id=doc_id, text=text, title=title)


def _from_jsonl(path: Path) -> Iterator[Document | Problem]:
    seen: set[str] = set()
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, 1):
            where = f"{path.name} line {number}"
            if not raw.strip():
                continue
            line = _decoded(raw, where)
            if isinstance(line, Problem):
                yield line
                continue
            try:
                record = json.loads(line)
                document = Document.model_validate(record)
            except json.JSONDecodeError as e:
                yield Problem(document=where, reason=f"not JSON ({e.msg} at column {e.colno})")
                continue
            except ValidationError as e:
                first = e.errors()[0]
                field = ".".join(str(p) for p in first["loc"]) or "(the line)"
                name = record.get("id") if isinstance(record, dict) else None
                yield Problem(document=f"{name} ({where})" if name else where, reason=f"{field}: {first['msg']}")
                continue
            if document.id in seen:
                yield Problem(document=f"{document.id} ({where})", reason="a second document with this id (ids must be unique)")
                continue
            seen.add(document.id)
            yield document


def _decoded(data: bytes, where: str) -> str | Problem:
    if b"\x00" in data:
        return Problem(document=where, reason="binary content (NUL bytes), not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return Problem(document=where, reason=f"not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})")


def _checked(document: Document | Problem, languages: tuple[str, ...], max_mb: float) -> Document | Problem:
    if isinstance(document, Problem):
        return document
    size_mb = len(document.text.encode("utf-8")) / 2**20
    if size_mb > max_mb:
        return Problem(document=document.id, reason=f"{size_mb:.1f} MB, over the {max_mb:g} MB limit (documents.max_mb): split it")
    if not document.text.strip():
        return Problem(document=document.id, reason="empty: no text to extract facts from")
    lang = document.lang or language_of(document.text)
    if lang not in languages:
        told = "given" if document.lang else "read from its letters"
        return Problem(document=document.id, reason=f"language {lang!r} ({told}) is not one of {', '.join(languages)} (documents.languages)")
    return document.model_copy(update={"lang": lang})


def language_of(text: str) -> str:
    """``ru`` or ``uk`` for mostly Cyrillic text (Ukrainian by its own letters), ``en`` for
    mostly Latin, else ``unknown``: enough to route a document, not a language identifier."""
    letters = [c for c in text[:20_000] if c.isalpha()]
    if not letters:
        return "unknown"
    cyrillic = sum("\u0400" <= c <= "\u04ff" for c in letters)
    latin = sum(c.isascii() for c in letters)
    if cyrillic >= 0.5 * len(letters):
        return "uk" if len(_UKRAINIAN.findall(text[:20_000])) > 0.005 * cyrillic else "ru"
    return "en" if latin >= 0.5 * len(letters) else "unknown"


def chunks(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """(start, end) offsets of pieces of at most ``size`` characters covering ``text``; a
    piece ends at a sentence end in its last third where there is one, and the next starts
    ``overlap`` characters earlier (at a sentence start when one is that close)."""
    spans, start = [], 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            cuts = [m.end() for m in _SENTENCE_END.finditer(text, start + size * 2 // 3, end)]
            end = cuts[-1] if cuts else end
        spans.append((start, end))
        if end == len(text):
            break
        back = max(end - overlap, start + 1)
        starts = [m.end() for m in _SENTENCE_END.finditer(text, back, end)]
        start = starts[0] if starts and starts[0] < end else back
    return spans
