"""The dataset card: ``README.md`` with the YAML front matter a dataset hub reads (its
``configs`` make ``datasets.load_dataset(folder, "questions")`` work), and a short text."""

from __future__ import annotations

from collections.abc import Mapping

import yaml

# config name -> (file, public?)
CONFIGS = {
    "questions": ("public/questions.jsonl", True),
    "dialogues": ("public/dialogues.jsonl", True),
    "answers": ("private/answers.jsonl", False),
    "mapping": ("private/mapping.jsonl", False),
}
SPLIT = "test"


def card(name: str, license: str, languages: list[str], release: Mapping) -> str:
    """The card's text for the manifest's ``release`` section."""
    front = {
        "pretty_name": f"{name} {release['version']}",
        "license": license,
        "language": languages,
        "task_categories": ["question-answering"],
        "tags": ["kgsynth", "synthetic", "knowledge-graph", "dialogue"],
        "configs": [{"config_name": config, "data_files": [{"split": SPLIT, "path": path}],
                     **({"default": True} if config == "questions" else {})} for config, (path, _) in CONFIGS.items()],
    }
    version, previous, new = release["version"], release["previous"], release["new"]
    lines = [
        "---", yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip(), "---", "",
        f"# {name} {version}", "",
        ("Benchmark items written by kgsynth from a knowledge graph: each item is a dialogue that states facts and a "
         "question whose answer follows from them (for a rule-application item, through a rule the dialogue does not "
         "state), with a strict answer format. Gold answers are computed from the graph by code."), "",
        f"Version {version}, released {release['date']}"
        + (f"; the previous release is {previous}. No item repeats a subgraph or a question of an earlier release "
           f"({', '.join(release['releases'][:-1])})." if previous else "; the first release."),
        "",
        f"{release['items']:,} items, in {len(languages)} language{'s' if len(languages) > 1 else ''}:", "",
        "| language | items |", "|---|---|",
        *(f"| {lang} | {count:,} |" for lang, count in release["items_by_language"].items()), "",
        "| shape | items |", "|---|---|",
        *(f"| {shape} | {count:,} |" for shape, count in release["items_by_shape"].items()), "",
    ]
    if previous:
        lines += [f"Since {previous}: {new['entities']:,} new entities, {new['facts']:,} new facts, {new['subgraphs']:,} new "
                  f"subgraphs; {new['items_on_new_facts']:,} items use a new fact (`manifest.json`, section `release`"
                  + ("; the new entities and facts are listed in `private/changes.jsonl`)." if release["files"]["changes"] else ")."), ""]
    lines += [
        "## Loading", "",
        "```python", "import datasets", "",
        f'questions = datasets.load_dataset("path/to/this/folder", "questions", split="{SPLIT}")', "```", "",
        "Configs: " + ", ".join(f"`{c}` ({'public' if public else 'private'}, `{path}`)" for c, (path, public) in CONFIGS.items())
        + ". Rows are joined by `public_id`. `items.jsonl` holds every field of every item, gold answers included "
        "(what `kgsynth eval --dataset` reads); `manifest.json` records each file's sha256.", "",
        "## Hiding the answers", "",
        ("`public/` holds no answer. Pushed as it is, this folder publishes the answers too (`private/`, `items.jsonl`, "
         "`items.parquet`). To keep them hidden, so that models cannot be trained on them, publish `public/` with this "
         "card less its `answers` and `mapping` configs, and keep the rest apart."), "",
        "## License", "",
        f"{license}" + (" (kgsynth's default: set `[release] license` in the config to the license of the graph the "
                        "items come from)." if license == DEFAULT_LICENSE else "."), "",
    ]
    return "\n".join(lines)


DEFAULT_LICENSE = "cc-by-4.0"
