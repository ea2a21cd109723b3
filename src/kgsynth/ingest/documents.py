"""Documents in: a folder of ``.txt`` / ``.md`` files, one such file, or a JSONL of
``{id, date, lang, title, text}``; each read into a :class:`Document` or, when it cannot
be used, a :class:`Problem` naming it (the others are read on)."""

from __future__ import annotations

import datetime as dt
import functools
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
        files = sorted(p for p in source.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(source).parts))
        if not any(p.suffix.lower() in TEXT_SUFFIXES for p in files):
            found = f"; it holds {', '.join(p.relative_to(source).as_posix() for p in files[:5])}{' ...' if len(files) > 5 else ''}" if files else ""
            raise KgsynthError(f"no documents in {source}: expected .txt or .md files, or give a .jsonl file{found}")
        for path in files:
            relative = path.relative_to(source)
            if path.suffix.lower() in TEXT_SUFFIXES:
                yield _checked(_from_file(path, relative.with_suffix("").as_posix()), languages, max_mb)
            else:
                yield Problem(document=relative.as_posix(), reason=_not_read(path))
    elif source.suffix.lower() == ".jsonl":
        read = 0
        for document in _from_jsonl(source):
            read += 1
            yield _checked(document, languages, max_mb) if isinstance(document, Document) else document
        if not read:
            raise KgsynthError(f"no documents in {source}: it holds no line (one JSON object per line: id, text, and lang, date, title if known)")
    elif source.suffix.lower() in TEXT_SUFFIXES:
        yield _checked(_from_file(source, source.stem), languages, max_mb)
    else:
        raise KgsynthError(f"cannot read documents from {source}: give a folder of .txt/.md files, one such file, or a .jsonl")


def _not_read(path: Path) -> str:
    """Why a file of a folder is not read as a document."""
    suffixes = "".join(path.suffixes[-2:]).lower() or "file without an extension"
    if path.suffix.lower() in (".gz", ".bz2", ".xz", ".zip", ".zst", ".7z", ".tar"):
        return f"a compressed {suffixes} file is not read: unpack it into the folder"
    if path.suffix.lower() in (".pdf", ".docx", ".doc", ".odt", ".rtf", ".html", ".htm", ".epub", ".xml"):
        return f"a {suffixes} file is not read: convert it to plain text (.txt or .md) first"
    return f"a {suffixes} is not read: only .txt and .md files of a folder are documents (records go in a .jsonl of id, text)"


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
    """The document's language: by its script first (Cyrillic or Latin), then, where
    py3langid is sure (probability 0.9 or more) among the languages of that script, the one
    it names; unsure, ``ru`` or ``uk`` for Cyrillic (Ukrainian by its own letters) and ``en``
    for Latin, so that a short English text is not taken for another language. ``unknown``
    for any other script."""
    sample = text[:20_000]
    letters = [c for c in sample if c.isalpha()]
    if not letters:
        return "unknown"
    cyrillic = sum("\u0400" <= c <= "\u04ff" for c in letters)
    latin = sum(c.isascii() or "\u00c0" <= c <= "\u024f" for c in letters)
    if cyrillic >= 0.5 * len(letters):
        script, default = _CYRILLIC, "uk" if len(_UKRAINIAN.findall(sample)) > 0.005 * cyrillic else "ru"
    elif latin >= 0.5 * len(letters):
        script, default = _LATIN, "en"
    else:
        return "unknown"
    identifier = _identifier()
    identifier.set_languages(script)
    lang, probability = identifier.classify(sample)
    return lang if probability >= 0.9 and lang not in ("ru", "uk") else default


_LATIN = ("en", "de", "fr", "es", "it", "pt", "nl", "pl", "cs", "sk", "sl", "hr", "sv", "da", "no", "fi", "et", "lv", "lt",
          "tr", "ro", "hu", "ca", "id", "vi")
_CYRILLIC = ("ru", "uk", "be", "bg", "mk", "sr", "kk")


@functools.cache
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier  # its model takes about a second to load: only when asked

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


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
