"""Haystack benchmark: how varied a padded dialogue is, per target length.

    python bench/haystack.py                       # the demo graph, 1k / 8k / 32k / 128k tokens
    python bench/haystack.py --items 10 --targets 1000,8000

For each target length it pads the same items two ways and measures the whole padded
dialogue (the item's turns and the haystack's):

- **synth**: ``make_item`` with ``DialogueSettings(target_tokens=...)`` and the pipeline's
  pool of the run's scenarios (``kgsynth.synth.dialogues.haystack``), against the old padding (1-3
  lines of the twelve digit-free distractor lines per turn, inserted anywhere) on the same
  unpadded dialogue;
- **eval**: the length sweep's ``render.stretched`` over a demo dataset (other items lend
  their fact turns), against the old sweep padding (the same digit-free lines).

Reported per target and way, over the items (half English, half Russian): turns, the
share of distinct lines (distinct turn texts / turns), the most frequent line's count (the
largest over the items), the share of turns with a digit, and milliseconds per padded item
(synthesis: the whole ``make_item``, both ways; what is made once per run is timed apart).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from extract import machine, source_state  # noqa: E402

from kgsynth.dataset.splits import read_items  # noqa: E402
from kgsynth.eval import render  # noqa: E402
from kgsynth.kg import KnowledgeGraph, load_rules  # noqa: E402
from kgsynth.pipeline.config import SynthConfig  # noqa: E402
from kgsynth.pipeline.run import plan_cells, synthesize  # noqa: E402
from kgsynth.synth.dialogues import haystack  # noqa: E402
from kgsynth.synth.dialogues import item as item_module  # noqa: E402
from kgsynth.synth.dialogues.dialogue import DialogueSettings, Turn, count_tokens, transcript  # noqa: E402
from kgsynth.synth.dialogues.item import make_item  # noqa: E402
from kgsynth.synth.dialogues.phrases import PHRASES  # noqa: E402

_DIGIT = re.compile(r"\d")


def shares(turns) -> dict:
    texts = [t.text for t in turns]
    counts = Counter(texts)
    return {"turns": len(texts), "distinct": len(counts) / len(texts), "top": counts.most_common(1)[0][1],
            "digits": sum(bool(_DIGIT.search(t)) for t in texts) / len(texts)}


# ---------------------------------------------------------------------------- the old padding, for comparison
def old_synth_padding(turns: list[Turn], lang: str, labels: frozenset[str], target: int, rng: random.Random) -> list[Turn]:
    """The padding before the haystack: 1-3 of the digit-free lines per turn, anywhere, by
    speakers who never speak twice in a row (as ``pad_dialogue`` was)."""
    bank = [line for line in PHRASES[lang]["distractor"] if not any(label in line.casefold() for label in labels)]
    turns = list(turns)
    speakers = sorted({(t.speaker, t.role) for t in turns})
    tokens = count_tokens(transcript(turns))
    while tokens < target:
        at = rng.randint(0, len(turns))
        before, after = (turns[at - 1].speaker if at else None), (turns[at].speaker if at < len(turns) else None)
        single = [s for s in speakers if s[0] not in (before, after)]
        if single:
            said = [rng.choice(single)]
        else:
            first = rng.choice([s for s in speakers if s[0] != before])
            said = [first, rng.choice([s for s in speakers if s[0] not in (first[0], after)])]
        for speaker, role in reversed(said):
            text = " ".join(rng.sample(bank, k=min(len(bank), rng.randint(1, 3))))
            turns.insert(at, Turn(speaker=speaker, role=role, text=text, kind="distractor"))
            tokens += count_tokens(f"{speaker}: {text}")
    return turns


@contextlib.contextmanager
def _old_padding():
    """``make_item`` padding the old way (the synthesis figures time the whole item both ways)."""
    def pad(d, scenario, lang, target, rng, others=()):
        turns = old_synth_padding(list(d.turns), lang, scenario.mentioned_texts, target, rng)
        facts = tuple(i for i, t in enumerate(turns) if t.kind == "fact")
        return d.model_copy(update={"turns": tuple(turns), "fact_turns": facts, "padding_turns": len(turns) - len(d.turns)})

    saved = item_module.pad_dialogue
    item_module.pad_dialogue = pad
    try:
        yield
    finally:
        item_module.pad_dialogue = saved


def old_sweep_padding(item, target: int, seed: int) -> list[Turn]:
    """The length sweep before the haystack: the same lines, by the item's speakers at random."""
    rng = random.Random(f"{seed}:{item.id}:length:{target}")
    word = re.compile(r"\w{4,}")
    own = {w.casefold() for t in item.dialogue if t.kind == "fact" for w in word.findall(t.text)} | {
        w.casefold() for w in word.findall(item.question)}
    bank = [x for x in PHRASES[item.language]["distractor"] if not own & {w.casefold() for w in word.findall(x)}]
    speakers = sorted({(t.speaker, t.role) for t in item.dialogue})
    turns, tokens = list(item.dialogue), target - count_tokens(item.transcript)
    while tokens > 0:
        speaker, role = rng.choice(speakers)
        text = " ".join(rng.sample(bank, k=min(len(bank), rng.randint(1, 3))))
        turns.insert(rng.randint(0, len(turns)), Turn(speaker=speaker, role=role, text=text, kind="distractor"))
        tokens -= count_tokens(f"{speaker}: {text}")
    return turns


# ---------------------------------------------------------------------------- the runs
def measure(graph: Path, targets: list[int], n_items: int) -> dict:
    kg = KnowledgeGraph.load(graph, lang=("en", "ru"))
    config = SynthConfig()
    plans = plan_cells(kg, config, load_rules(kg))
    everyone = [s for plan in plans for s in plan.scenarios]
    others = haystack.Others([], haystack.Pool(everyone, seed=0))
    chosen = [(everyone[k * len(everyone) // n_items], "en" if k % 2 == 0 else "ru") for k in range(n_items)]
    once = {}  # what is made once per process or run, not per item
    start = time.perf_counter()
    haystack.Talk("en"), haystack.Talk("ru")
    once["talk banks"] = time.perf_counter() - start
    start = time.perf_counter()
    for scenario in others.haystack.scenarios:
        for lang in ("en", "ru"):
            others.haystack.block(scenario, lang)
    once["pool blocks"] = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        synthesize(kg, SynthConfig.model_validate({"dataset": {"n": 300}}), Path(tmp) / "dataset")
        dataset = list(read_items(Path(tmp) / "dataset" / "items.jsonl"))
    swept = [dataset[k * len(dataset) // n_items] for k in range(n_items)]
    rows = []
    for target in targets:
        row: dict = {"target": target}
        results: dict[str, list[dict]] = {"synth": [], "synth_old": [], "eval": [], "eval_old": []}
        seconds = Counter()
        for scenario, lang in chosen:
            t = time.perf_counter()
            item = make_item(scenario, lang, DialogueSettings(target_tokens=target), 0, others)
            seconds["synth"] += time.perf_counter() - t
            results["synth"].append(shares(item.dialogue))
            t = time.perf_counter()
            with _old_padding():
                old = make_item(scenario, lang, DialogueSettings(target_tokens=target), 0, others)
            seconds["synth_old"] += time.perf_counter() - t
            results["synth_old"].append(shares(old.dialogue))
        for item in swept:
            t = time.perf_counter()
            variant = render.stretched(item, target, 0, dataset)
            seconds["eval"] += time.perf_counter() - t
            results["eval"].append(shares(variant.turns))
            t = time.perf_counter()
            results["eval_old"].append(shares(old_sweep_padding(item, target, 0)))
            seconds["eval_old"] += time.perf_counter() - t
        for way, found in results.items():
            row[way] = {"turns": sum(r["turns"] for r in found) / len(found),
                        "distinct": sum(r["distinct"] for r in found) / len(found),
                        "top": max(r["top"] for r in found),
                        "digits": sum(r["digits"] for r in found) / len(found),
                        "ms_per_item": 1000 * seconds[way] / len(found)}
        rows.append(row)
    return {"graph": str(graph), "items": n_items, "once_s": once, "pool": len(others.haystack.scenarios), "rows": rows}


def render_table(result: dict) -> str:
    lines = [f"graph {result['graph']}, {result['items']} items per way and length (half en, half ru); "
             f"pool of {result['pool']} scenarios; made once, not per item: "
             + ", ".join(f"{what} {seconds:.2f} s" for what, seconds in result["once_s"].items()),
             "", "| target | way | turns | distinct lines | most frequent line | turns with a digit | ms per item |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    names = {"synth": "synth haystack", "synth_old": "synth, old padding", "eval": "eval sweep haystack",
             "eval_old": "eval sweep, old padding"}
    for row in result["rows"]:
        for way, name in names.items():
            r = row[way]
            lines.append(f"| {row['target']:,} | {name} | {r['turns']:,.0f} | {r['distinct']:.1%} | {r['top']} | "
                         f"{r['digits']:.1%} | {r['ms_per_item']:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", type=Path, default=ROOT / "data" / "demo")
    parser.add_argument("--targets", default="1000,8000,32000,128000", help="comma-separated token targets")
    parser.add_argument("--items", type=int, default=6, help="items per way and target (half English, half Russian)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = measure(args.graph, [int(t) for t in args.targets.split(",")], args.items)
    if args.json:
        report = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "machine": machine(),
                  "source": source_state(), **result}
        print(json.dumps(report, indent=2))
    else:
        print(render_table(result))


if __name__ == "__main__":
    main()
