"""SPARQL templates shipped as package data (``templates/*.rq``) and their headers.

A template's header comments declare ``# anchor: VAR [VAR]`` (the variables anchored
sampling binds) and ``# anchors-from: NAME`` (the query listing candidate anchors).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

from kgsynth.errors import UnknownShapeError


@dataclass(frozen=True)
class Template:
    name: str
    text: str
    anchor: tuple[str, ...]
    anchors_from: str | None


def _header(text: str, key: str) -> str | None:
    for line in text.splitlines():
        if line.startswith(f"# {key}:"):
            return line.split(":", 1)[1].strip()
    return None


@cache
def template_names() -> tuple[str, ...]:
    files = resources.files("kgsynth.queries").joinpath("templates").iterdir()
    return tuple(sorted(f.name.removesuffix(".rq") for f in files if f.name.endswith(".rq")))


@cache
def load_template(name: str) -> Template:
    """A template by file name without ``.rq`` (e.g. ``multihop_3``)."""
    if name not in template_names():
        raise UnknownShapeError(f"no SPARQL template {name!r}; known: {', '.join(template_names())}")
    text = resources.files("kgsynth.queries").joinpath("templates", f"{name}.rq").read_text(encoding="utf-8")
    anchor = _header(text, "anchor")
    return Template(name, text, tuple(anchor.split()) if anchor else (), _header(text, "anchors-from"))
