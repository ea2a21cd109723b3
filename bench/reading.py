"""The blind reading of docs/reading.md: draw a sheet of items from synthesis runs, mixed and
under neutral ids, and count a reader's marks per run once they are in.

    python bench/reading.py sheet --run before=out/a --run after=out/b --out reading/fb15k
    python bench/reading.py count --sheet reading/fb15k --marks reading/fb15k/marks.jsonl

``sheet`` writes ``sheet.md`` (what the reader sees), ``key.json`` (which run wrote each
item: not for the reader) and ``items.jsonl`` (the items as drawn). ``count`` reads the
reader's marks, one JSON object per line: ``{"id": "r017", "natural": true,
"ungrammatical": false, "raw": false, "ambiguous": false, "defects": [], "why": ""}``.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter, defaultdict
from pathlib import Path

PER_LANGUAGE = 60
PER_SHAPE = 5  # drawn first from every shape, so each is read
SHOWN_KINDS = ("fact", "correction", "confusable", "distractor")
MARKS = ("natural", "ungrammatical", "raw", "ambiguous")


def draw(items: list[dict], seed: int = 0) -> list[dict]:
    """60 items per language: up to 5 per shape first, then at random from the rest."""
    rng = random.Random(seed)
    drawn = []
    for lang in ("en", "ru"):
        pool = sorted((i for i in items if i["language"] == lang), key=lambda i: i["id"])
        rng.shuffle(pool)
        by_shape = defaultdict(list)
        for item in pool:
            by_shape[item["metadata"]["shape"]].append(item)
        first = [i for shape in sorted(by_shape) for i in by_shape[shape][:PER_SHAPE]][:PER_LANGUAGE]
        rest = [i for i in pool if i not in first]
        drawn += first + rest[: PER_LANGUAGE - len(first)]
    return drawn


def _shown(item: dict, sheet_id: str) -> str:
    turns = [f"    {t['speaker']}: {t['text']}" for t in item["dialogue"] if t["kind"] in SHOWN_KINDS]
    return "\n".join([f"### {sheet_id} ({item['language']})", *turns, f"  Q: {item['question']}",
                      f"  gold: {item['gold']}", ""])


def sheet(runs: dict[str, Path], out: Path, seed: int = 0) -> None:
    drawn = [(name, item) for name, folder in runs.items() for item in draw(_items(folder), seed)]
    random.Random(seed).shuffle(drawn)
    out.mkdir(parents=True, exist_ok=True)
    ids = [f"r{n:03d}" for n in range(1, len(drawn) + 1)]
    (out / "sheet.md").write_text("\n".join(_shown(item, i) for i, (_, item) in zip(ids, drawn, strict=True)),
                                  encoding="utf-8")
    (out / "key.json").write_text(json.dumps({i: name for i, (name, _) in zip(ids, drawn, strict=True)}, indent=0))
    with (out / "items.jsonl").open("w", encoding="utf-8") as f:
        for i, (name, item) in zip(ids, drawn, strict=True):
            f.write(json.dumps({"sheet_id": i, "run": name, **item}, ensure_ascii=False) + "\n")


def count(sheet_dir: Path, marks_path: Path) -> dict[str, dict]:
    key = json.loads((sheet_dir / "key.json").read_text())
    languages = {json.loads(line)["sheet_id"]: json.loads(line)["language"]
                 for line in (sheet_dir / "items.jsonl").read_text(encoding="utf-8").splitlines()}
    marks = [json.loads(line) for line in marks_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    missing = set(key) - {m["id"] for m in marks}
    if missing:
        raise SystemExit(f"{len(missing)} items have no marks, e.g. {sorted(missing)[0]}")
    table: dict[str, dict] = {}
    for mark in marks:
        row = table.setdefault(key[mark["id"]], {"items": 0, **dict.fromkeys(MARKS, 0), "defects": Counter(),
                                                  "by_language": Counter()})
        row["items"] += 1
        row["by_language"][languages[mark["id"]] + (" natural" if mark["natural"] else " not natural")] += 1
        for name in MARKS:
            row[name] += bool(mark[name])
        row["defects"].update(mark.get("defects", []))
    return table


def _items(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "items.jsonl").read_text(encoding="utf-8").splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("sheet")
    make.add_argument("--run", action="append", required=True, help="NAME=FOLDER of a synthesis run")
    make.add_argument("--out", type=Path, required=True)
    make.add_argument("--seed", type=int, default=0)
    tally = commands.add_parser("count")
    tally.add_argument("--sheet", type=Path, required=True)
    tally.add_argument("--marks", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "sheet":
        sheet({name: Path(folder) for name, folder in (r.split("=", 1) for r in args.run)}, args.out, args.seed)
    else:
        for run, row in sorted(count(args.sheet, args.marks).items()):
            shares = ", ".join(f"{m} {row[m]}" for m in MARKS)
            print(f"{run}: {row['items']} items; {shares}; {dict(row['by_language'])}; defects {dict(row['defects'])}")


if __name__ == "__main__":
    main()
