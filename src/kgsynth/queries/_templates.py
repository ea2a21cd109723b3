"""SPARQL templates shipped as package data (``templates/*.rq``) and their headers.

A template's header comments declare ``# anchor: VARS`` (the variables anchored sampling
binds: one entity, a pair of entities, or three variables for a fact (subject, relation,
object) of an anchor entity), ``# anchor-reversed: yes`` (also bind each fact the other
way round), ``# walk: VARS`` (a second fact sharing a node with the anchor fact, also bound
by sampling: the template then only verifies candidates) and ``# anchors-from: NAME``
(the query listing candidate anchor entities).
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
    anchor_reversed: bool = False
    walk: tuple[str, ...] = ()

    @property
    def anchor_kind(self) -> str:
        return {1: "entity", 2: "pair", 3: "fact"}[len(self.anchor)]

    @property
    def bound_variables(self) -> tuple[str, ...]:
        """What anchored sampling binds: the anchor, then the walk fact's new variables."""
        return self.anchor + tuple(v for v in self.walk if v not in self.anchor)


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
    return Template(
        name,
        text,
        tuple(anchor.split()) if anchor else (),
        _header(text, "anchors-from"),
        _header(text, "anchor-reversed") == "yes",
        tuple((_header(text, "walk") or "").split()),
    )
