"""The run's report: ``metrics.json``, the plots as PNG files and one self-contained ``report.html``.

The HTML has no external resource and no script: inline CSS, the plots as base64 data URIs,
every text escaped. Parts whose data is absent (no length sweep, no hypotheses...) are left out.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kgsynth._config import validation_message
from kgsynth.errors import KgsynthError
from kgsynth.eval.config import EvalConfig
from kgsynth.eval.dataset import read_json, require_folder
from kgsynth.eval.metrics import (
    CurvePoint,
    Estimate,
    GroupMetrics,
    HypothesisResult,
    KVRetrieval,
    LengthCurve,
    Metrics,
    compute_metrics,
)
from kgsynth.eval.plots import DIFFICULTY_ORDER, PLOTS, ordered_groups, render_plots
from kgsynth.eval.results import RESULTS_FILE, RUN_FILE, read_results

REPORT_FILE = "report.html"
METRICS_FILE = "metrics.json"
PLOTS_DIR = "plots"
DASH = "—"

CSS = """
:root { --ink: #1f2933; --muted: #66717d; --rule: #d5dbe1; --soft: #f4f6f8; --accent: #0b7285; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: var(--ink);
  font: 15px/1.5 "Inter", "Segoe UI", "Helvetica Neue", "DejaVu Sans", Arial, sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 32px 40px 64px; }
h1 { font-size: 28px; margin: 0 0 4px; letter-spacing: -0.01em; }
h2 { font-size: 19px; margin: 40px 0 12px; padding-bottom: 6px; border-bottom: 2px solid var(--ink); }
h3 { font-size: 15px; margin: 22px 0 8px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.sub { color: var(--muted); margin: 0 0 20px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 12px; }
.card { background: var(--soft); border-radius: 10px; padding: 14px 16px; }
.card .label { font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .05em; }
.card .value { font-size: 26px; font-weight: 700; font-variant-numeric: tabular-nums; }
.card .ci { font-size: 13px; color: var(--muted); font-variant-numeric: tabular-nums; }
.plots { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 18px; }
figure { margin: 0; border: 1px solid var(--rule); border-radius: 10px; padding: 10px; background: #fff; }
figure img { display: block; width: 100%; height: auto; }
figcaption { font-size: 13px; color: var(--muted); padding: 6px 4px 0; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 10px; font-size: 14px;
  font-variant-numeric: tabular-nums; }
th, td { padding: 6px 10px; text-align: right; border-bottom: 1px solid var(--rule); vertical-align: top; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted);
  border-bottom: 2px solid var(--ink); }
th:first-child, td:first-child, table.text th, table.text td { text-align: left; }
table.text td:nth-child(4), table.text td:nth-child(5), table.text td:nth-child(7) { white-space: nowrap; }
table.kv td { white-space: nowrap; }
tr.mark td { background: #fdecef; font-weight: 600; }
.bar { display: inline-block; height: 8px; border-radius: 4px; background: var(--accent); vertical-align: middle;
  margin-right: 8px; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: 12px; font-weight: 700; }
.yes { background: #d3f0e2; color: #13653f; } .no { background: #fbe0e4; color: #8a1c31; }
.na { background: #e7eaee; color: #4b5560; }
.note { color: var(--muted); font-size: 13px; }
details { margin: 10px 0; border: 1px solid var(--rule); border-radius: 8px; padding: 8px 12px; }
summary { cursor: pointer; font-weight: 600; }
pre { background: var(--soft); padding: 12px; border-radius: 6px; overflow-x: auto; font-size: 12px; }
"""


# ---- formatting -------------------------------------------------------------------------------


def pct(value: float | None) -> str:
    return DASH if value is None else f"{100 * value:.1f}%"


def ci(e: Estimate | None) -> str:
    if e is None or e.low is None or e.high is None:
        return DASH
    return f"[{pct(e.low)}, {pct(e.high)}]"


def scenarios(e: Estimate | None) -> str:
    """How many scenarios an interval resampled, as words to follow it ("" when it resampled rows)."""
    return "" if e is None or not e.clusters else f" over {e.clusters:,} scenario{'s' if e.clusters != 1 else ''}"


def intervals_note(m: Metrics) -> str:
    """What the intervals are: said once, under the headline."""
    e = m.overall.accuracy
    if e.clusters is None:  # metrics computed before intervals were clustered
        return f"Intervals ({m.confidence:.0%} CI): percentile bootstrap over answers."
    return (f"Intervals ({m.confidence:.0%} CI): percentile bootstrap clustered by scenario. A resample draws "
            "scenarios with replacement and takes all their answers: an item, its twin in the other language and "
            "its renderings under every condition go together, since they are not independent "
            f"({e.clusters:,} scenarios in the main condition). The hypothesis tests cluster their standard errors "
            "by scenario too.")


def num(value: float | None, digits: int = 3) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


def p_value(p: float | None) -> str:
    if p is None:
        return DASH
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _estimate_pct(e: Estimate | None) -> str:
    return DASH if e is None else pct(e.mean)


def _f1(g: GroupMetrics) -> str:
    return DASH if g.token_f1 is None else num(g.token_f1.mean)


# ---- HTML pieces ------------------------------------------------------------------------------


def _cells(values: Iterable[str], tag: str = "td") -> str:
    return "".join(f"<{tag}>{v}</{tag}>" for v in values)


def table(head: Sequence[str], rows: Iterable[Sequence[str]], marked: Iterable[bool] = (), cls: str = "") -> str:
    """A table from already-escaped cell HTML; rows whose ``marked`` is true are highlighted."""
    marks = list(marked)
    body = "".join(
        f'<tr{" class=mark" if i < len(marks) and marks[i] else ""}>{_cells(r)}</tr>' for i, r in enumerate(rows)
    )
    return f"<table{f' class={cls}' if cls else ''}><thead><tr>{_cells((escape(h) for h in head), 'th')}</tr></thead><tbody>{body}</tbody></table>"


def _accuracy_cell(e: Estimate) -> str:
    width = 0 if e.mean is None else round(80 * e.mean)
    return f'<span class=bar style="width:{width}px"></span>{pct(e.mean)}'


GROUP_HEAD = ("group", "n", "accuracy", "CI", "format valid", "token-F1", "failures", "mean context tokens")


def group_row(g: GroupMetrics, label: str | None = None) -> list[str]:
    return [
        escape(label if label is not None else g.group), str(g.n), _accuracy_cell(g.accuracy), ci(g.accuracy),
        pct(g.syntactic_ok.mean), _f1(g), str(g.failures), f"{g.mean_context_tokens:,.0f}",
    ]


def card(label: str, value: str, detail: str = "") -> str:
    return (f'<div class=card><div class=label>{escape(label)}</div><div class=value>{escape(value)}</div>'
            f'<div class=ci>{escape(detail)}</div></div>')


def headline(m: Metrics, run: dict) -> str:
    o = m.overall
    usage = run.get("usage") or {}
    cards = [
        card(f"accuracy · {m.confidence:.0%} CI", pct(o.accuracy.mean), ci(o.accuracy) + scenarios(o.accuracy)),
        card("format valid", pct(o.syntactic_ok.mean), ci(o.syntactic_ok)),
        card("token-F1", _f1(o), "text and set answers"),
        card("items", f"{m.items:,}", f"{o.n:,} answers scored, {o.failures} failed"),
    ]
    if m.length is not None:
        bp = m.length.break_point
        detail = "tokens" if bp else ("not measurable: 0% at the shortest" if not m.length.reference_accuracy else "no break")
        cards.append(card("break point", DASH if bp is None else f"{bp:,.0f}", detail))
    if m.kv is not None:
        kv = m.kv.curves[-1].overall.accuracy
        cards.append(card("key-value retrieval", pct(kv.mean), f"{ci(kv)}, {kv.n} JSON objects"))
    if m.item_variance is not None:
        cards.append(card("item variance", num(m.item_variance), "across sweep renderings"))
    sub = f"rendering: {m.rendering} · dataset: {run.get('dataset', DASH)}"
    if usage:  # per stage: {"answer": {...}, "probes": {...}}
        calls = sum(stage.get("calls", 0) for stage in usage.values())
        hits = sum(stage.get("cache_hits", 0) for stage in usage.values())
        sub += f" · {calls:,} model calls, {hits:,} answers from the cache"
    return (f"<header><h1>{escape(m.model)}</h1><p class=sub>{escape(sub)}</p>"
            f"<div class=cards>{''.join(cards)}</div><p class=note>{escape(intervals_note(m))}</p></header>")


def plots_section(captioned: dict[str, bytes]) -> str:
    """The plots inline (base64 PNG), each under its caption (the dict's key)."""
    if not captioned:
        return ""
    figures = "".join(
        f'<figure><img alt="{escape(caption)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
        for caption, png in captioned.items()
    )
    return f"<section><h2>Plots</h2><div class=plots>{figures}</div></section>"


def baselines_section(m: Metrics) -> str:
    if not m.baselines:
        return ""
    groups = ordered_groups(m.baselines, ("closed_book", "main", "oracle"))
    note = "<p class=note>closed_book: the question without the dialogue; oracle: the fact turns only.</p>"
    return f"<section><h2>Baselines</h2>{table(GROUP_HEAD, (group_row(g) for g in groups))}{note}</section>"


def slices_section(m: Metrics) -> str:
    parts = [
        f"<h3>{escape(s.by.replace('_', ' '))}</h3>{table(GROUP_HEAD, (group_row(g) for g in ordered_groups(s.groups)))}"
        for s in m.slices if s.groups
    ]
    return f"<section><h2>Slices</h2>{''.join(parts)}</section>" if parts else ""


def error_sources_section(m: Metrics) -> str:
    es = m.error_sources
    diffs = [d for d in DIFFICULTY_ORDER if d in es.by_difficulty] + sorted(set(es.by_difficulty) - set(DIFFICULTY_ORDER))
    sources = sorted(set(es.overall) | {s for c in es.by_difficulty.values() for s in c},
                     key=lambda s: (-es.overall.get(s, 0), s))
    if not sources:
        return ""
    total = sum(es.overall.values()) or 1
    rows = [
        [escape(s.replace("_", " ")), str(es.overall.get(s, 0)), pct(es.overall.get(s, 0) / total),
         *(str(es.by_difficulty[d].get(s, 0)) for d in diffs)]
        for s in sources
    ]
    probe = ""
    if es.fact_probe_accuracy is not None:
        probe = (f"<p class=note>Fact probe accuracy: {pct(es.fact_probe_accuracy.mean)} "
                 f"{ci(es.fact_probe_accuracy)}{scenarios(es.fact_probe_accuracy)}, n = {es.fact_probe_accuracy.n}.</p>")
    head = ("source", "wrong answers", "share", *diffs)
    return f"<section><h2>Error sources</h2>{table(head, rows)}{probe}</section>"


def _curve_rows(points: Sequence[CurvePoint], x_fmt: str) -> list[list[str]]:
    return [group_row(p.metrics, label=format(p.x, x_fmt)) for p in points]


def length_section(curve: LengthCurve | None) -> str:
    if curve is None or not curve.points:
        return ""
    marks = [curve.break_point is not None and p.x == curve.break_point for p in curve.points]
    threshold = None if curve.reference_accuracy is None else curve.break_ratio * curve.reference_accuracy
    if curve.break_point is not None:
        bp = f"break point at {curve.break_point:,.0f} tokens (highlighted)"
    elif not curve.reference_accuracy:
        bp = "no break point can be measured: accuracy is 0 at the shortest length already"
    else:
        bp = "no break point: accuracy stayed above the threshold"
    notes = [(f"Reference accuracy (shortest length): {pct(curve.reference_accuracy)}; threshold "
              f"{curve.break_ratio:.0%} of it = {pct(threshold)}; {bp}.")]
    if curve.skipped_targets:
        notes.append("Skipped (would not fit the model's context): " + ", ".join(f"{t:,}" for t in curve.skipped_targets))
    head = ("target tokens", *GROUP_HEAD[1:])
    body = table(head, _curve_rows(curve.points, ",.0f"), marks)
    return f"<section><h2>Length sweep</h2>{body}{''.join(f'<p class=note>{escape(n)}</p>' for n in notes)}</section>"


def position_section(m: Metrics) -> str:
    pos = m.position
    if pos is None or not (pos.by_depth or pos.by_turn):
        return ""
    parts = []
    if pos.by_depth:
        parts.append("<h3>by depth (0 = start of the context, 1 = end)</h3>"
                     + table(("depth", *GROUP_HEAD[1:]), _curve_rows(pos.by_depth, ".2f")))
    if pos.by_turn:
        parts.append("<h3>by mean index of the fact turns</h3>"
                     + table(("turn", *GROUP_HEAD[1:]), _curve_rows(pos.by_turn, ".1f")))
    return f"<section><h2>Position in the context</h2>{''.join(parts)}</section>"


def _kv_cell(g: GroupMetrics) -> str:
    """Accuracy over its interval (in points, no % signs: seven columns share the width) and n."""
    e = g.accuracy
    interval = DASH if e.low is None or e.high is None else f"[{100 * e.low:.1f}, {100 * e.high:.1f}]"
    return f"{pct(e.mean)}<br><span class=note>{interval}, n = {e.n}</span>"


def kv_section(kv: KVRetrieval | None) -> str:
    """Accuracy by key count (rows) and the queried pair's position (columns), with intervals."""
    if kv is None:
        return ""
    positions = sorted({p.x for c in kv.curves for p in c.points})
    rows = []
    for curve in kv.curves:
        at = {p.x: p.metrics for p in curve.points}
        rows.append([escape("all" if curve.keys is None else f"{curve.keys:,}"),
                     *(_kv_cell(at[x]) if x in at else DASH for x in positions), _kv_cell(curve.overall)])
    head = ("keys \\ position", *(f"{x:g}" for x in positions), "all positions")
    notes = [("A JSON object of random UUID keys and values; the model must give one key's value, exactly "
              "(whitespace, quotes and a code fence around it are forgiven, nothing else). Position: where the queried "
              "pair sits, 0 the first pair, 1 the last; each object is asked at every position. "
              "n: answers per cell; under all positions, JSON objects (its interval resamples objects).")]
    if kv.skipped_counts:
        skipped = ", ".join(f"{k:,}" for k in kv.skipped_counts)
        notes.append(f"Skipped (would not fit the model's context): {skipped} keys")
    body = table(head, rows, cls="kv")
    return (f"<section><h2>Key-value retrieval</h2>{body}"
            f"{''.join(f'<p class=note>{escape(n)}</p>' for n in notes)}</section>")


def verdict_badge(h: HypothesisResult) -> str:
    label, cls = {True: ("supported", "yes"), False: ("not supported", "no"), None: ("not tested", "na")}[h.supported]
    return f"<span class='badge {cls}'>{label}</span>"


def hypotheses_section(m: Metrics) -> str:
    if not m.hypotheses:
        return ""
    head = ("", "hypothesis", "test", "statistic", "p-value", "effect", "n", "verdict")
    rows = [
        [f"<b>{escape(h.id)}</b>", escape(h.statement), escape(h.test), num(h.statistic), escape(p_value(h.p_value)),
         escape(h.effect), str(h.n), f"{verdict_badge(h)}<br>{escape(h.verdict)}"]
        for h in m.hypotheses
    ]
    return f"<section><h2>Hypotheses</h2>{table(head, rows, cls='text')}</section>"


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def provenance_section(run: dict) -> str:
    parts = [
        f"<details><summary>{escape(title)}</summary><pre>{escape(_pretty(run[key]))}</pre></details>"
        for key, title in (("config", "Evaluation config"), ("manifest", "Dataset manifest"), ("usage", "Usage"))
        if run.get(key) is not None
    ]
    return f"<section><h2>Run</h2>{''.join(parts)}</section>" if parts else ""


def render_html(metrics: Metrics, run: dict, pngs: dict[str, bytes]) -> str:
    """The whole report page as one string."""
    sections = [
        headline(metrics, run), plots_section({PLOTS[name][0]: png for name, png in pngs.items()}), baselines_section(metrics), hypotheses_section(metrics),
        slices_section(metrics), error_sources_section(metrics), length_section(metrics.length),
        position_section(metrics), kv_section(metrics.kv), provenance_section(run),
    ]
    title = escape(f"kgsynth eval: {metrics.model}")
    return (f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{title}</title>"
            f"<meta name=viewport content='width=device-width, initial-scale=1'><style>{CSS}</style></head>"
            f"<body><main>{''.join(s for s in sections if s)}</main></body></html>\n")


def write_plots(folder: Path, pngs: dict[str, bytes]) -> list[Path]:
    """Each plot as ``folder/plots/NAME.png``."""
    out = folder / PLOTS_DIR
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, png in pngs.items():
        (path := out / f"{name}.png").write_bytes(png)
        paths.append(path)
    return paths


def write_report(folder: Path, metrics: Metrics, run: dict) -> Path:
    """Write ``metrics.json``, the plots and the self-contained ``report.html`` into ``folder``; return the HTML's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / METRICS_FILE).write_text(metrics.model_dump_json(indent=2) + "\n", encoding="utf-8")
    pngs = render_plots(metrics)
    write_plots(folder, pngs)
    path = folder / REPORT_FILE
    path.write_text(render_html(metrics, run, pngs), encoding="utf-8")
    return path


@dataclass(frozen=True)
class BuiltReport:
    metrics: Metrics
    html: Path


def build_report(folder: Path) -> BuiltReport:
    """Metrics, plots and ``report.html`` from a results folder written by ``kgsynth eval``
    (no model calls: everything comes from ``results.jsonl`` and ``run.json``)."""
    require_folder(folder, "kgsynth eval wrote (it holds results.jsonl and run.json)")
    if (folder / ".work").exists():
        raise KgsynthError(f"{folder} holds an unfinished kgsynth eval run: run the same kgsynth eval command again to finish it")
    for name in (RUN_FILE, RESULTS_FILE):
        if not (folder / name).is_file():
            raise KgsynthError(f"{folder} is not a finished kgsynth eval run: {folder / name} is missing")
    run = read_json(folder / RUN_FILE)
    if not isinstance(run, dict) or not isinstance(run.get("config"), dict):
        raise KgsynthError(f"{folder / RUN_FILE} is not a kgsynth eval run record (it has no 'config'): run kgsynth eval again")
    try:
        config = EvalConfig.model_validate(run["config"])
    except ValidationError as e:
        raise KgsynthError(f"{folder / RUN_FILE}: config.{validation_message(e)}") from None
    records = read_results(folder)
    if not any(r.condition == "main" and not r.failure for r in records):
        raise KgsynthError(f"{folder / RESULTS_FILE} holds no answered item: nothing to report")
    sweep = config.length_sweep
    metrics = compute_metrics(
        records, model=config.model.model, rendering=config.rendering, confidence=config.confidence,
        bootstrap=config.bootstrap, seed=config.seed, break_ratio=sweep.break_ratio if sweep else 0.8,
        skipped_targets=run.get("skipped_targets", ()), skipped_kv_counts=run.get("skipped_kv_counts", ()),
    )
    return BuiltReport(metrics, write_report(folder, metrics, run))
