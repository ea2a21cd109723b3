"""The packages of kgsynth import one way, along the data flow: every module of src/kgsynth
is read with ``ast`` (imports inside functions and under ``TYPE_CHECKING`` too) and mapped to
its package, the first level under ``kgsynth`` and, under ``kgsynth.synth``, its stage
(``synth.naming``, ``synth.scenarios``, ``synth.dialogues``). A package may import its own
modules and the packages of the layers below its own; never one of a layer above, nor
another package of its own layer, and no two packages may import each other. Each failure
names the importing file and line.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "kgsynth"

# Bottom first. A package imports only those of the layers below its own; the packages of
# one layer stand side by side and import none of each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "_collector"),  # the error type; the garbage-collector guard
    ("_config", "_folders", "_files"),  # config files, output folders, JSONL and atomic files
    ("llm", "kg"),  # the gateway to a model; the graph
    ("queries",),  # the graph -> subgraphs
    ("kgsynth",),  # the package itself: __version__ and the graph's names re-exported
    ("ingest", "rulebook"),  # documents -> a graph; rules suggested for a graph
    ("formats",),  # answer formats and checking, numbers and dates, Russian morphology
    ("synth",),  # synth/__init__.py: a docstring
    ("synth.naming",),  # how the graph's entities, relations and questions are said
    ("synth.scenarios",),  # a subgraph -> a scenario with its gold (the rule engine)
    ("synth.dialogues",),  # a scenario -> a dialogue (with a haystack) -> an item
    ("filters", "dataset", "lexicon"),  # items kept or rejected; items written as the dataset's files; words proposed for a graph
    ("pipeline",),  # kgsynth synth: every stage above, driven cell by cell
    ("release", "eval"),  # versioned releases of a dataset; a model run on a dataset
    ("pressure",),  # manipulation robustness, on top of eval
    ("cli",),  # the kgsynth command
    ("__main__",),  # python -m kgsynth
)
LAYER = {package: i for i, layer in enumerate(LAYERS) for package in layer}
SYNTH_STAGES = frozenset(p.removeprefix("synth.") for p in LAYER if p.startswith("synth."))


@dataclass(frozen=True)
class Import:
    path: Path  # the importing file
    line: int
    source: str  # its package
    target: str  # the imported module's package
    module: str  # the imported module, dotted

    def where(self) -> str:
        return f"{self.path.relative_to(SRC.parent)}:{self.line}"


@functools.cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(module: str) -> str:
    """kgsynth.filters.base -> filters; kgsynth.synth.dialogues.item -> synth.dialogues;
    kgsynth (its __init__) -> kgsynth; kgsynth.errors -> errors."""
    parts = module.split(".")[1:]
    if not parts:
        return "kgsynth"
    if parts[0] == "synth" and len(parts) > 1 and parts[1] in SYNTH_STAGES:
        return f"synth.{parts[1]}"
    return parts[0]


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(module: str, path: Path, known: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, module) of every kgsynth module ``path`` imports, wherever the import stands.
    ``from A import B`` counts A.B where B is a module, else A."""
    found = []
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the importing module's package
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        found += [(node.lineno, name) for name in dict.fromkeys(names) if name == "kgsynth" or name.startswith("kgsynth.")]
    return found


def imports() -> list[Import]:
    known = modules()
    found = []
    for module, path in known.items():
        for line, target in imported_modules(module, path, known):
            if target in known:  # what is not: test_every_kgsynth_import_names_what_exists
                found.append(Import(path, line, package_of(module), package_of(target), target))
    return found


@functools.cache
def bound_names(path: Path) -> frozenset[str]:
    """The names a module binds at its top level (in ``if`` and ``try`` blocks too)."""
    names: set[str] = set()
    body = list(parsed(path).body)
    while body:
        node = body.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.If | ast.Try | ast.With):
            body += [*node.body, *getattr(node, "orelse", ()), *getattr(node, "finalbody", ()),
                     *(stmt for handler in getattr(node, "handlers", ()) for stmt in handler.body)]
    return frozenset(names)


def test_every_kgsynth_import_names_what_exists():
    """``from kgsynth.X import name``, in a function too: X is a module and name one of its
    modules or a name it binds (an import inside a function runs only when it is called)."""
    known = modules()
    missing = []
    for path in known.values():
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "kgsynth":
                if node.module not in known:
                    missing.append(f"{path.relative_to(SRC.parent)}:{node.lineno}: no module {node.module}")
                    continue
                bound = bound_names(known[node.module])
                missing += [f"{path.relative_to(SRC.parent)}:{node.lineno}: {node.module} has no {alias.name}" for alias in node.names
                            if alias.name != "*" and f"{node.module}.{alias.name}" not in known and alias.name not in bound]
    assert not missing, "imports of what is not there:\n" + "\n".join(missing)


def test_every_package_has_a_layer():
    unplaced = sorted({package_of(m) for m in modules()} - set(LAYER))
    assert not unplaced, f"packages in no layer of LAYERS (tests/test_import_layers.py): {unplaced}; place each where the data flow puts it"


def test_no_package_imports_one_above_it_or_beside_it():
    wrong = []
    for imp in imports():
        if imp.source == imp.target or LAYER[imp.target] < LAYER[imp.source]:
            continue
        how = "a layer above it" if LAYER[imp.target] > LAYER[imp.source] else "its own layer, beside it"
        wrong.append(f"{imp.where()}: {imp.source} imports {imp.module} ({imp.target}, in {how})")
    assert not wrong, "imports against the layers (bottom first: " + " -> ".join("/".join(layer) for layer in LAYERS) + "):\n" + "\n".join(wrong)


def test_no_two_packages_import_each_other():
    edges: dict[str, dict[str, list[Import]]] = defaultdict(lambda: defaultdict(list))
    for imp in imports():
        if imp.source != imp.target:
            edges[imp.source][imp.target].append(imp)
    circles = []
    for circle in _circles({a: set(b) for a, b in edges.items()}):
        ties = [f"  {imp.where()}: {a} imports {imp.module}" for a in circle for b in circle if b in edges[a] for imp in edges[a][b]]
        circles.append(f"{' <-> '.join(circle)}:\n" + "\n".join(ties))
    assert not circles, "packages that import each other:\n" + "\n".join(circles)


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_checks_see_an_upward_import(tmp_path):
    """The checks themselves: an import inside a function is found and ranked above its importer,
    and a loop of three packages is found as one circle."""
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    path = tmp_path / "kgsynth" / "formats" / "answers.py"
    path.parent.mkdir(parents=True)
    path.write_text("def f():\n    from kgsynth.pipeline import run\n", encoding="utf-8")
    known = {"kgsynth.formats.answers": path, "kgsynth.pipeline": path, "kgsynth.pipeline.run": path}
    assert imported_modules("kgsynth.formats.answers", path, known) == [(2, "kgsynth.pipeline.run")]
    assert LAYER[package_of("kgsynth.pipeline.run")] > LAYER[package_of("kgsynth.formats.answers")]
    assert package_of("kgsynth.synth.dialogues.item") == "synth.dialogues" and package_of("kgsynth.synth") == "synth"
