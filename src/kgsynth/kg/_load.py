"""Reading RDF files and folders (optionally gzipped) into an Oxigraph store."""

from __future__ import annotations

import codecs
import gzip
import hashlib
import re
import zlib
from importlib import resources
from pathlib import Path

import pyoxigraph as ox

from kgsynth.errors import GraphLoadError

FORMATS: dict[str, ox.RdfFormat] = {
    ".ttl": ox.RdfFormat.TURTLE,
    ".turtle": ox.RdfFormat.TURTLE,
    ".nt": ox.RdfFormat.N_TRIPLES,
    ".ntriples": ox.RdfFormat.N_TRIPLES,
    ".nq": ox.RdfFormat.N_QUADS,
    ".nquads": ox.RdfFormat.N_QUADS,
    ".trig": ox.RdfFormat.TRIG,
    ".jsonld": ox.RdfFormat.JSON_LD,
    ".json-ld": ox.RdfFormat.JSON_LD,
    ".n3": ox.RdfFormat.N3,
    ".rdf": ox.RdfFormat.RDF_XML,
    ".owl": ox.RdfFormat.RDF_XML,
}
_POSITION_PREFIX = re.compile(r"^Parser error (?:at|between) [^:]*: ")


def rdf_format(path: Path) -> ox.RdfFormat | None:
    """The RDF format of a file from its extension (``.gz`` is looked through), or None."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    return FORMATS.get(suffixes[-1]) if suffixes else None


def rdf_files(path: Path) -> list[Path]:
    """The RDF files at ``path``: the file itself, or a folder's files, recursively, sorted."""
    if not path.exists():
        raise GraphLoadError(f"cannot read {path}: no such file or folder")
    if path.is_file():
        if rdf_format(path) is None:
            known = ", ".join(sorted(FORMATS))
            raise GraphLoadError(f"cannot tell the RDF format of {path}: use one of {known} (optionally .gz)")
        return [path]
    files = sorted(p for p in path.rglob("*") if p.is_file() and rdf_format(p) is not None)
    if not files:
        raise GraphLoadError(f"no RDF files in folder {path} (expected {', '.join(sorted(FORMATS))})")
    return files


def fingerprint(files: list[Path]) -> str:
    """The sha256 of the files' contents, in order."""
    digest = hashlib.sha256()
    for path in files:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\x00" + str(path.stat().st_size).encode())  # where one file ends
    return digest.hexdigest()


def load_file(store: ox.Store, path: Path) -> None:
    """Parse one file into the store; a parse error names the file, line and column."""
    fmt = rdf_format(path)
    try:
        if path.suffix.lower() == ".gz":
            with gzip.open(path, "rb") as stream:
                if stream.read(len(codecs.BOM_UTF8)) != codecs.BOM_UTF8:
                    stream.seek(0)
                store.bulk_load(stream, format=fmt, base_iri=path.resolve().as_uri())
        elif _starts_with_bom(path):  # editors on Windows write one; the parsers reject it
            with path.open("rb") as stream:
                stream.seek(len(codecs.BOM_UTF8))
                store.bulk_load(stream, format=fmt, base_iri=path.resolve().as_uri())
        else:
            store.bulk_load(path=str(path), format=fmt, base_iri=path.resolve().as_uri())
    except SyntaxError as e:
        raise GraphLoadError(_syntax_message(path, e)) from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise GraphLoadError(f"cannot read {path}: not a valid gzip file ({e})") from None
    except UnicodeDecodeError as e:
        raise GraphLoadError(f"cannot read {path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise GraphLoadError(f"cannot read {path}: {e.strerror or e}") from None


def _starts_with_bom(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(len(codecs.BOM_UTF8)) == codecs.BOM_UTF8


def _syntax_message(path: Path, error: SyntaxError) -> str:
    text = str(error.msg if error.msg else error)
    detail = _POSITION_PREFIX.sub("", text)
    if "LoadDocumentCallback" in detail:
        detail = "JSON-LD remote @context cannot be fetched (kgsynth works offline); embed the context in the file"
    if error.lineno:
        return f"syntax error in {path} at line {error.lineno}, column {error.offset}: {detail}"
    return f"syntax error in {path}: {detail}"


def demo_graph_path() -> Path:
    """The folder of the demo graph shipped in the package (``data/demo`` in the repository
    links to it): what ``kgsynth synth`` loads when no graph is given."""
    folder = resources.files("kgsynth.kg").joinpath("demo")
    if not isinstance(folder, Path) or not folder.is_dir():  # e.g. a zipped install: no folder to load
        raise GraphLoadError(f"the packaged demo graph is not a folder on disk ({folder}): reinstall kgsynth, "
                             "or give graph files")
    return folder
