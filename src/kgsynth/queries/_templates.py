"""SPARQL templates shipped as package data (``templates/*.rq``) and their headers.

A template's header comments declare how anchored sampling binds it:

- ``# anchor: VARS``: one entity, or a fact (subject, relation, object) of an anchor entity;
- ``# anchor-reversed: yes``: also bind each anchor fact the other way round;
- ``# anchor-values: numeric``: only anchor facts whose object is a number or a date;
- ``# walk: VARS``: further facts (three variables each), each sharing one variable (a
  node, or the relation) with what is bound before it; sampling walks to random such facts
  and binds them too, so the template only verifies candidates;
- ``# walk-functional: yes``: each walk step takes only a relation that has exactly one
  value at the node it leaves from (multi-hop chains);
- ``# anchors-from: NAME``: the query listing candidate anchor entities;
- ``# bind: VARS``: bind only these of the walked variables (the template finds the rest).

A set-valued chain (multihop_set) anchors on its start entity and declares instead:

- ``# hops: H`` and ``# fan-hop: K``: a chain of H hops whose hop K fans out (K is H, or
  H - 1 with one more hop from each member);
- ``# bind: VARS``: the chain up to the fan and the relations, not the fan's direction (the
  template reads both); the template lists the members, and the sampler judges each fan whole.
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
    anchor_values: str | None = None
    walk: tuple[tuple[str, str, str], ...] = ()
    walk_functional: bool = False
    hops: int = 0
    fan_hop: int = 0  # 0: not a set-valued chain
    bind: tuple[str, ...] = ()

    @property
    def anchors_facts(self) -> bool:
        return len(self.anchor) == 3

    @property
    def walked_variables(self) -> tuple[str, ...]:
        """What anchored sampling walks to: the anchor, then each walk step's new variables."""
        walked = self.anchor
        for step in self.walk:
            walked += tuple(v for v in step if v not in walked)
        return walked

    @property
    def bound_variables(self) -> tuple[str, ...]:
        """What anchored sampling binds: the ``bind`` header, else all it walked to."""
        return self.bind or self.walked_variables


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
    anchor = tuple((_header(text, "anchor") or "").split())
    walk = tuple((_header(text, "walk") or "").split())
    if len(anchor) not in (0, 1, 3) or len(walk) % 3 or (walk and len(anchor) != 3):
        raise UnknownShapeError(f"template {name!r}: bad anchor or walk header")
    hops, fan_hop = int(_header(text, "hops") or 0), int(_header(text, "fan-hop") or 0)
    if fan_hop and not hops - 1 <= fan_hop <= hops:
        raise UnknownShapeError(f"template {name!r}: fan-hop must be the last hop or the one before it")
    return Template(
        name,
        text,
        anchor,
        _header(text, "anchors-from"),
        _header(text, "anchor-reversed") == "yes",
        _header(text, "anchor-values"),
        tuple(zip(walk[0::3], walk[1::3], walk[2::3], strict=True)),
        _header(text, "walk-functional") == "yes",
        hops,
        fan_hop,
        tuple((_header(text, "bind") or "").split()),
    )
