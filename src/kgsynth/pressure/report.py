"""``kgsynth pressure report``: ``metrics.json`` and one self-contained ``report.html`` (plots
inline, every text escaped) from a folder ``kgsynth pressure run`` wrote."""

from __future__ import annotations

from html import escape
from pathlib import Path

from kgsynth._files import write_json_atomic
from kgsynth.errors import KgsynthError
from kgsynth.eval.plots import SIZE, figure, png_bytes
from kgsynth.eval.report import CSS, DASH, card, pct, plots_section, table
from kgsynth.pressure.metrics import Estimate, PolicyMetrics, PressureMetrics, compute
from kgsynth.pressure.run import read_episodes, read_run

METRICS_FILE = "metrics.json"
REPORT_FILE = "report.html"
COLOURS = {"learned": "#0b7285", "random": "#868e96", "farm": "#e67700", "are_you_sure": "#5f3dc4"}


def build_report(folder: Path) -> tuple[PressureMetrics, Path]:
    episodes = read_episodes(folder)
    run = read_run(folder)
    if not run:  # its steps, bootstrap and seed are in run.json alone: no MR@4 for a run of 3 steps
        raise KgsynthError(f"{folder} has no run.json: the run has not finished; run the same kgsynth pressure run "
                           "to finish it, then report")
    config = run.get("config", {})
    metrics = compute(episodes, config.get("max_steps", 4), config.get("bootstrap", 2000),
                      config.get("confidence", 0.95), config.get("seed", 0))
    write_json_atomic(folder / METRICS_FILE, metrics.model_dump(mode="json"))
    path = folder / REPORT_FILE
    path.write_text(render_html(metrics, run), encoding="utf-8")
    return metrics, path


def ci(e: Estimate) -> str:
    return DASH if e.value is None else f"{pct(e.value)} [{pct(e.low)}, {pct(e.high)}]"


def render_html(m: PressureMetrics, run: dict) -> str:
    overall = [p for p in m.policies if p.setting == "all"]
    cards = "".join(card(f"{p.policy}: MR@{max(p.mr_at)}", pct(p.mr_at[max(p.mr_at)].value),
                         f"zero-turn {pct(p.zero_turn.value)}, n = {p.claims}") for p in overall)
    model = (run.get("config") or {}).get("model", {}).get("model", "?")
    sections = [
        f"<h1>kgsynth pressure: {escape(str(model))}</h1><p class=sub>{run.get('claims', DASH)} claims; intervals: "
        f"percentile bootstrap over claims. MR@k: answered right at turn 0 and never gave the false value through step k "
        f"(a claim wrong at turn 0 counts against it).</p><div class=cards>{cards}</div>",
        _plots(m),
        "<h2>Policies</h2>" + table(
            ("policy", "setting", "claims", "zero-turn", *(f"MR@{k}" for k in (sorted(m.policies[0].mr_at) if m.policies else ())),
             "flip rate", "turns to flip", "calls", "flips", "calls per flip"),
            [_policy_row(p) for p in m.policies]),
        "<h2>Flip rate by confusability</h2>" + table(
            ("policy", "setting", "level", "flip rate"),
            [[escape(p.policy), escape(p.setting), escape(level), ci(e)] for p in m.policies for level, e in p.by_confusability.items()]),
        "<h2>Flip rate by operation</h2><p class=sub>All policies' steps pushed with each operation at each intensity.</p>" + table(
            ("operation@intensity", "steps", "flip rate"), [[escape(name), str(e.n), ci(e)] for name, e in m.operations.items()]),
        "<h2>Outcomes of every answer</h2>" + table(
            ("policy", "setting", *sorted({o for p in m.policies for o in p.outcomes})),
            [[escape(p.policy), escape(p.setting), *(str(p.outcomes.get(o, 0)) for o in sorted({o for q in m.policies for o in q.outcomes}))]
             for p in m.policies]),
        "<h2>The learned policy's flipping sequences</h2>" + (table(
            ("sequence", "claims"), [[escape(seq), str(n)] for seq, n in m.top_sequences]) if m.top_sequences else f"<p>{DASH}</p>"),
    ]
    return (f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>kgsynth pressure</title>"
            f"<meta name=viewport content='width=device-width, initial-scale=1'><style>{CSS}</style></head>"
            f"<body><main>{''.join(sections)}</main></body></html>\n")


def _policy_row(p: PolicyMetrics) -> list[str]:
    turns = DASH if p.mean_turns_to_flip.value is None else f"{p.mean_turns_to_flip.value:.2f}"
    per_flip = DASH if p.calls_per_flip is None else f"{p.calls_per_flip:.1f}"
    return [escape(p.policy), escape(p.setting), str(p.claims), ci(p.zero_turn), *(ci(e) for _, e in sorted(p.mr_at.items())),
            ci(p.flip_rate), turns, str(p.calls), str(p.flips), per_flip]


def _plots(m: PressureMetrics) -> str:
    pngs = {"Robustness after k pushing steps (0: zero-turn), all claims": _robustness_png(m),
            "Flip rate by operation, all policies": _operations_png(m)}
    return plots_section({caption: png for caption, png in pngs.items() if png})


def _robustness_png(m: PressureMetrics) -> bytes | None:
    overall = [p for p in m.policies if p.setting == "all" and p.zero_turn.value is not None]
    if not overall:
        return None
    with figure() as (fig, (ax,)):
        for i, p in enumerate(overall):
            points = [p.zero_turn, *(e for _, e in sorted(p.mr_at.items()))]
            ks = [k + 0.06 * (i - (len(overall) - 1) / 2) for k in range(len(points))]  # side by side, not on top
            values = [100 * e.value for e in points]
            errors = [[v - 100 * e.low for v, e in zip(values, points, strict=True)],
                      [100 * e.high - v for v, e in zip(values, points, strict=True)]]
            ax.errorbar(ks, values, yerr=errors, marker="o", capsize=3, label=p.policy, color=COLOURS.get(p.policy))
        ax.set_xticks(range(len(points)))
        ax.set_xlabel("pushing steps (0: the first answer)")
        ax.set_ylabel("right at turn 0, never gave in (%)")
        ax.set_ylim(0, 100)
        ax.legend()
        return png_bytes(fig)


def _operations_png(m: PressureMetrics) -> bytes | None:
    ops = [(name, e) for name, e in reversed(m.operations.items()) if e.value is not None]  # barh draws upwards
    if not ops:
        return None
    with figure(size=(SIZE[0], max(SIZE[1], 0.2 * len(ops) + 0.8))) as (fig, (ax,)):
        ax.barh([f"{name} (n = {e.n})" for name, e in ops], [100 * e.value for _, e in ops],
                xerr=[[100 * (e.value - e.low) for _, e in ops], [100 * (e.high - e.value) for _, e in ops]], color="#0b7285")
        ax.set_xlabel("flip rate of the step (%)")
        ax.set_xlim(0, 100)
        return png_bytes(fig)
