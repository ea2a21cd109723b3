"""The evaluation report: plots, one self-contained HTML page, and what a browser really shows of it."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from kgsynth.eval import plots
from kgsynth.eval.metrics import (
    CurvePoint,
    ErrorSources,
    Estimate,
    GroupMetrics,
    HypothesisResult,
    LengthCurve,
    Metrics,
    PositionCurve,
    Slice,
)
from kgsynth.eval.report import METRICS_FILE, PLOTS_DIR, write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
IMG_SRC = re.compile(r'<img\b[^>]*\bsrc="([^"]*)"')


# ---- a realistic run's metrics ----------------------------------------------------------------


def est(mean: float | None, n: int, half: float = 0.06) -> Estimate:
    if mean is None:
        return Estimate(n=n, mean=None, low=None, high=None, std=None)
    return Estimate(n=n, mean=mean, low=max(0.0, mean - half), high=min(1.0, mean + half), std=0.45)


def group(name: str, n: int, acc: float, ok: float = 0.93, f1: float | None = 0.71, ctx: float = 640.0) -> GroupMetrics:
    return GroupMetrics(
        group=name, n=n, accuracy=est(acc, n), syntactic_ok=est(ok, n, 0.03),
        token_f1=None if f1 is None else est(f1, n, 0.05), failures=1 if n > 100 else 0, mean_context_tokens=ctx,
    )


def point(x: float, acc: float, n: int = 40, ctx: float = 1000.0) -> CurvePoint:
    return CurvePoint(x=x, metrics=group(f"{x:g}", n, acc, ctx=ctx))


HYPOTHESES = (
    HypothesisResult(
        id="H1", statement="Accuracy falls with context length and structural complexity",
        test="logistic regression of correctness on log2(length) + difficulty, 400 rows", statistic=-4.21,
        p_value=0.00002, effect="odds ratio 0.62 per doubling of length [0.48, 0.80]", n=400, supported=True,
        verdict="Supported: each doubling of the context cuts the odds of a right answer by about a third.",
    ),
    HypothesisResult(
        id="H2", statement="Structural complexity hurts more than the same length of noise",
        test="paired difference, hard vs length-matched easy", statistic=2.05, p_value=0.041,
        effect="-9.8 points [-19.1, -0.4]", n=120, supported=True,
        verdict="Supported, weakly: structure costs about 10 points more than noise of equal length.",
    ),
    HypothesisResult(
        id="H3", statement="Format compliance falls with length too", test="logistic regression of syntactic_ok",
        statistic=-0.8, p_value=0.42, effect="odds ratio 0.93 per doubling [0.78, 1.11]", n=400, supported=False,
        verdict="Not supported: the share of well-formed answers does not change measurably with length.",
    ),
    HypothesisResult(
        id="H4", statement="Rule kinds differ in difficulty", test="chi-square test of accuracy by rule kind",
        statistic=None, p_value=None, effect="too few items per rule kind", n=18, supported=None,
        verdict="Not tested: fewer than 10 answers in some rule kinds <b>(sic)</b>.",
    ),
)


def full_metrics() -> Metrics:
    difficulty = Slice(by="difficulty", groups=(
        group("hard", 100, 0.41, 0.88), group("easy", 100, 0.82, 0.97), group("medium", 100, 0.63, 0.94)))
    rule_kind = Slice(by="rule_kind", groups=tuple(
        group(k, 60, a, f1=None) for k, a in
        (("arithmetic", 0.45), ("threshold", 0.71), ("conditional", 0.58), ("interval", 0.66), ("classification", 0.74))))
    fmt = Slice(by="answer_format", groups=(group("yes_no", 80, 0.77, f1=None), group("short_text", 70, 0.52)))
    length = LengthCurve(
        points=tuple(point(x, a, ctx=x * 0.97) for x, a in ((1000, 0.78), (2000, 0.74), (4000, 0.69), (8000, 0.55),
                                                           (16000, 0.41))),
        reference_accuracy=0.78, break_ratio=0.8, break_point=8000.0, skipped_targets=(32000,),
    )
    position = PositionCurve(
        by_depth=tuple(point(d, a) for d, a in ((0.0, 0.74), (0.25, 0.61), (0.5, 0.55), (0.75, 0.6), (1.0, 0.77))),
        by_turn=tuple(point(t, a) for t, a in ((1, 0.72), (3, 0.64), (5, 0.57), (8, 0.62), (12, 0.7))),
    )
    errors = ErrorSources(
        overall={"fact_extraction": 52, "rule_application": 31, "format": 18, "combination": 9},
        by_difficulty={"easy": {"fact_extraction": 8, "format": 6}, "hard": {"fact_extraction": 26, "rule_application": 20,
                       "format": 5, "combination": 6}, "medium": {"fact_extraction": 18, "rule_application": 11,
                       "format": 7, "combination": 3}},
        fact_probe_accuracy=est(0.81, 240),
    )
    return Metrics(
        model="qwen2.5-7b-instruct <local>", rendering="transcript", items=300, confidence=0.95,
        overall=group("main", 300, 0.62), slices=(difficulty, rule_kind, fmt),
        baselines=(group("oracle", 300, 0.86), group("main", 300, 0.62), group("closed_book", 300, 0.07, 0.81)),
        error_sources=errors, length=length, position=position, item_variance=0.137, hypotheses=HYPOTHESES,
    )


def bare_metrics() -> Metrics:
    """A run without sweeps, baselines, slices, probes or hypotheses."""
    return Metrics(
        model="tiny", rendering="chat", items=12, confidence=0.95, overall=group("main", 12, 0.5, f1=None),
        baselines=(), slices=(), error_sources=ErrorSources(overall={}, by_difficulty={}, fact_probe_accuracy=None),
        length=None, position=None, item_variance=None, hypotheses=(),
    )


RUN = {
    "config": {"model": {"model": "qwen2.5-7b-instruct", "base_url": "http://127.0.0.1:8080/v1"}, "seed": 0},
    "dataset": "out/dataset",
    "manifest": {"version": "0.1.0", "seed": 0, "counts": {"items": 300}, "files": ["items.jsonl"]},
    "usage": {"answer": {"calls": 2000, "cache_hits": 300, "prompt_tokens": 1_200_000, "seconds": 800.0},
              "probes": {"calls": 140, "cache_hits": 0, "prompt_tokens": 34_567, "seconds": 12.5}},
}


def decode_png(data: bytes) -> np.ndarray:
    assert data.startswith(PNG_MAGIC)
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def hex_rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])


def near(rgb: np.ndarray, colour: str, tol: int = 12) -> np.ndarray:
    """Per pixel: within ``tol`` of ``colour`` in every channel."""
    lo, hi = (np.clip(hex_rgb(colour) + d, 0, 255).astype(np.uint8) for d in (-tol, tol))
    return ((rgb >= lo) & (rgb <= hi)).all(axis=2)


def colour_pixels(rgb: np.ndarray, colour: str, tol: int = 12) -> int:
    return int(near(rgb, colour, tol).sum())


# ---- plots ------------------------------------------------------------------------------------


def test_plots_are_deterministic_pngs_and_absent_data_makes_none():
    m = full_metrics()
    first, second = plots.render_plots(m), plots.render_plots(m)
    assert list(first) == ["difficulty", "baselines", "length", "position", "error_sources", "rule_kind"]
    assert first == second
    for name, png in first.items():
        rgb = decode_png(png)
        assert rgb.shape[1] >= 600, name
        assert colour_pixels(rgb, plots.ACCURACY) + colour_pixels(rgb, plots.FORMAT_OK) > 300, name
    assert plots.render_plots(bare_metrics()) == {}


def test_length_plot_marks_the_break_point_and_threshold():
    rgb = decode_png(plots.length_png(full_metrics()))
    assert colour_pixels(rgb, plots.BREAK) > 300  # the threshold line and the break-point line
    no_break = full_metrics().model_copy(update={"length": full_metrics().length.model_copy(
        update={"break_point": None, "reference_accuracy": None})})
    assert colour_pixels(decode_png(plots.length_png(no_break)), plots.BREAK) < 50


# ---- the HTML ---------------------------------------------------------------------------------


def test_report_is_self_contained_with_every_table(tmp_path):
    path = write_report(tmp_path / "run", full_metrics(), RUN)
    html = path.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", html, re.IGNORECASE)
    assert "<script" not in html.lower() and "<link" not in html.lower() and "@import" not in html
    srcs = IMG_SRC.findall(html)
    assert len(srcs) == html.count("<img") == 6
    for src in srcs:
        assert src.startswith("data:image/png;base64,")
        decode_png(base64.b64decode(src.split(",", 1)[1], validate=True))
    for heading in ("Plots", "Baselines", "Hypotheses", "Slices", "Error sources", "Length sweep",
                    "Position in the context", "Run"):
        assert f"<h2>{heading}</h2>" in html
    for h in HYPOTHESES:
        assert h.id in html and h.verdict.split("<")[0] in html
    assert "&lt;b&gt;(sic)&lt;/b&gt;" in html and "<b>(sic)</b>" not in html  # escaped text
    assert "qwen2.5-7b-instruct &lt;local&gt;" in html
    assert "62.0%" in html and "[56.0%, 68.0%]" in html and "&lt; 0.001" in html and "0.041" in html
    assert html.count("class=mark") == 1  # the break point row
    assert "32,000" in html and "<details>" in html and "items.jsonl" in html
    text = IMG_SRC.sub("", html)
    assert not re.search(r"\b(nan|None|inf)\b", text, re.IGNORECASE)
    assert json.loads((tmp_path / "run" / METRICS_FILE).read_text())["items"] == 300
    assert sorted(p.name for p in (tmp_path / "run" / PLOTS_DIR).iterdir()) == sorted(
        f"{n}.png" for n in plots.render_plots(full_metrics()))


def test_absent_parts_are_left_out_cleanly(tmp_path):
    html = write_report(tmp_path, bare_metrics(), {"dataset": "d"}).read_text(encoding="utf-8")
    assert "<img" not in html
    for heading in ("Plots", "Baselines", "Hypotheses", "Slices", "Error sources", "Length sweep",
                    "Position in the context", "Run"):
        assert f"<h2>{heading}</h2>" not in html
    assert "tiny" in html and "50.0%" in html and not re.search(r"\b(nan|None|inf)\b", html, re.IGNORECASE)
    assert not (tmp_path / PLOTS_DIR).exists() or not any((tmp_path / PLOTS_DIR).iterdir())


# ---- in a real browser ------------------------------------------------------------------------

WIDTH, HEIGHT = 1280, 7000


def chromium(*args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="kgsynth-chromium-") as profile:
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", f"--user-data-dir={profile}", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def screenshot(html_path: Path, out: Path) -> np.ndarray:
    done = chromium(f"--screenshot={out}", f"--window-size={WIDTH},{HEIGHT}", html_path.as_uri())
    assert out.exists(), done.stderr[-2000:]
    return np.asarray(Image.open(out).convert("RGB"), dtype=np.uint8)


PLOT_COLOURS = (plots.ACCURACY, plots.FORMAT_OK, plots.BASELINE_COLOURS["oracle"])


def plot_colour_counts(rgb: np.ndarray) -> dict[str, int]:
    return {c: colour_pixels(rgb, c) for c in PLOT_COLOURS}


def longest_run(row: np.ndarray) -> int:
    edges = np.flatnonzero(np.diff(np.concatenate(([0], row.astype(np.int8), [0]))))
    return int((edges[1::2] - edges[::2]).max(initial=0))


def table_rule_lines(rgb: np.ndarray, rule: str = "#d5dbe1") -> int:
    """Screen rows crossed by one unbroken line of the tables' rule colour, 1000+ px long: one per table row
    drawn (and the collapsed <details> borders; the figures' frames stand side by side, with a gap)."""
    mask = near(rgb, rule, 6)
    return sum(longest_run(mask[y]) >= 1000 for y in np.flatnonzero(mask.sum(axis=1) >= 1000))


def break_images(html: str) -> str:
    return IMG_SRC.sub(lambda m: m.group(0).replace(m.group(1), "data:image/png;base64,AAAAbm90IGEgcG5n"), html)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs Debian's package as root)")
def test_report_renders_in_headless_chromium(tmp_path):
    m = full_metrics()
    path = write_report(tmp_path / "run", m, RUN)
    html = path.read_text(encoding="utf-8")
    pngs = {p.stem: p.read_bytes() for p in sorted((path.parent / PLOTS_DIR).glob("*.png"))}

    # the browser decodes every embedded image (a probe script on a copy of the page reports it)
    probe = tmp_path / "probe.html"
    probe.write_text(html.replace("</body>", "<script>addEventListener('load', () => document.body.dataset.ok ="
                                  " [...document.images].filter(i => i.complete && i.naturalWidth > 0).length)"
                                  "</script></body>"), encoding="utf-8")
    dom = chromium("--virtual-time-budget=5000", "--dump-dom", probe.as_uri()).stdout
    assert f'data-ok="{len(pngs)}"' in dom, dom[-500:]

    rgb = screenshot(path, tmp_path / "shot.png")
    assert rgb.shape[:2] == (HEIGHT, WIDTH)
    assert (rgb.min(axis=2) < 250).mean() > 0.05  # not a blank page
    assert (rgb.max(axis=2) < 90).sum() > 20_000  # dark ink: the headline, table text
    assert rgb[-40:].min() >= 250  # the whole page fitted in the screenshot
    # the plots' colours, in about the amounts the PNGs hold (they are shown at 0.5-1x their size)
    in_pngs = {c: sum(colour_pixels(decode_png(p), c) for p in pngs.values()) for c in PLOT_COLOURS}
    for colour, count in plot_colour_counts(rgb).items():
        assert 0.2 * in_pngs[colour] < count < 1.2 * in_pngs[colour], (colour, count, in_pngs[colour])
    rows = sum(body.count("<tr") for body in re.findall(r"<tbody>(.*?)</tbody>", html))
    details = html.count("<details>")
    assert rows <= table_rule_lines(rgb) <= rows + 2 * details  # the tables' rules drawn, row by row

    # negative control: the same checks fail when the images are broken
    broken = tmp_path / "broken.html"
    broken.write_text(break_images(html), encoding="utf-8")
    bad = screenshot(broken, tmp_path / "broken.png")
    assert all(count < 0.05 * in_pngs[c] for c, count in plot_colour_counts(bad).items())
    assert rows <= table_rule_lines(bad) <= rows + 2 * details  # while the tables still are there
