"""Hypotheses H1-H4 of the seed paper (SPEC section 6) as statistical tests on a run's rows.

Every test is a logistic regression on the scored ``main`` and ``length`` rows (the
sweep re-renders the same items longer, which separates length from structure), with
standard errors clustered by scenario, since one item's renderings are not independent,
nor is an item of its twin in the other language (the same scenario worded twice); rows
without a scenario id fall back to their item as the cluster (``Answers.cluster``):

- H1: correct ~ log2(context tokens) + reasoning links; both slopes must be negative
  (one-sided Wald tests; the reported p is the larger of the two, an intersection-union test);
- H2: the same model; one more reasoning link is compared with the same number of tokens
  added as noise, at the median dialogue length: a one-sided Wald test of
  ``b_links - b_log2_tokens * log2(1 + tokens_per_link / median_tokens) < 0``;
- H3: H1's model with the format-valid outcome (``syntactic_ok``);
- H4: correct ~ rule-kind dummies + the controls, rule items only; a joint Wald test of
  the dummies, with Cramér's V and the odds ratio of the best against the worst kind.

A test that cannot be run (too few rows or scenarios, an outcome or predictor that does not
vary, a separating predictor, a fit that fails) gives ``supported=None`` and says why.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import statsmodels.api as sm
from scipy import stats
from statsmodels.tools.sm_exceptions import (
    ConvergenceWarning,
    HessianInversionWarning,
    PerfectSeparationError,
    PerfectSeparationWarning,
)

from kgsynth.eval.metrics import Answers, HypothesisResult
from kgsynth.eval.results import AnswerRecord
from kgsynth.synth.scenarios.scenario import NO_RULE

ALPHA = 0.05
MIN_ROWS = 30
MIN_ITEMS = 10  # clustered standard errors need a fair number of clusters (scenarios)
FITTED_CONDITIONS = ("main", "length")
# a slope this large on these scales means the outcome is (nearly) separated, not a finite effect
SEPARATION_COEF = 30.0
_FIT_FAILURES = (PerfectSeparationError, PerfectSeparationWarning, ConvergenceWarning, HessianInversionWarning,
                 np.linalg.LinAlgError, ValueError)

STATEMENTS = {
    "H1": "Accuracy falls as the context grows longer and the dialogue's structure more complex.",
    "H2": "Structural complexity hurts accuracy more than the same number of added noise tokens.",
    "H3": "Format compliance (answers in the asked format) falls with length and structure too.",
    "H4": "Rule kinds differ in accuracy at fixed length and structure.",
}


class Untestable(Exception):
    """The data cannot answer the question; the message says why."""


@dataclass(frozen=True)
class Rows:
    """The scored main and length-sweep rows as columns: what every test fits."""

    item: np.ndarray  # item number: per-item figures (dialogue length, links) count each item once
    cluster: np.ndarray  # scenario number, the cluster of the standard errors (an item, its twin, their renderings)
    correct: np.ndarray
    syntactic_ok: np.ndarray
    log2_tokens: np.ndarray
    links: np.ndarray
    dialogue_tokens: np.ndarray  # the item's own dialogue, before any sweep padding
    rule_kind: np.ndarray

    @classmethod
    def of(cls, records: Sequence[AnswerRecord] | Answers) -> Rows:
        answers = Answers.of(records).of_condition(*FITTED_CONDITIONS).scored
        kept = answers.where(answers.context_tokens > 0)
        metadata = [r.metadata for r in kept.records]
        return cls(
            item=np.unique(kept.item, return_inverse=True)[1],
            cluster=np.unique(kept.cluster, return_inverse=True)[1],
            correct=kept.correct.astype(float),
            syntactic_ok=kept.syntactic_ok.astype(float),
            log2_tokens=np.log2(kept.context_tokens),
            links=np.array([m.links for m in metadata], dtype=float),
            dialogue_tokens=np.array([m.token_length for m in metadata], dtype=float),
            rule_kind=np.array([m.rule_kind for m in metadata], dtype=str),
        )

    def __len__(self) -> int:
        return self.item.size

    def where(self, mask: np.ndarray) -> Rows:
        return Rows(**{name: getattr(self, name)[mask] for name in self.__dataclass_fields__})


@dataclass(frozen=True)
class Contrast:
    """A linear combination of a fit's coefficients (log odds) with its interval and tests."""

    estimate: float
    low: float
    high: float
    z: float
    p_below: float  # one-sided: that the true value is below zero

    @property
    def odds_ratio(self) -> str:
        return f"{math.exp(self.estimate):.2f} [{math.exp(self.low):.2f}, {math.exp(self.high):.2f}]"


@dataclass(frozen=True)
class LogitFit:
    names: tuple[str, ...]  # "const" first
    params: np.ndarray
    cov: np.ndarray
    n: int

    def contrast(self, weights: dict[str, float], alpha: float) -> Contrast:
        w = np.array([weights.get(name, 0.0) for name in self.names])
        if not w.any():  # nothing compared (e.g. noise of zero tokens): no effect, exactly
            return Contrast(0.0, 0.0, 0.0, 0.0, 0.5)
        estimate, se = float(w @ self.params), float(np.sqrt(w @ self.cov @ w))
        if not se > 0:
            raise Untestable("the compared coefficients are not identified (no variance)")
        z = estimate / se
        half = NormalDist().inv_cdf(1 - alpha / 2) * se
        return Contrast(estimate, estimate - half, estimate + half, z, NormalDist().cdf(z))

    def wald(self, names: Sequence[str]) -> tuple[float, float]:
        """Joint Wald test that the coefficients ``names`` are all zero: (chi-square, p)."""
        index = [self.names.index(name) for name in names]
        b, v = self.params[index], self.cov[np.ix_(index, index)]
        statistic = float(b @ np.linalg.solve(v, b))
        return statistic, float(stats.chi2.sf(statistic, len(index)))


def fit_logit(y: np.ndarray, predictors: dict[str, np.ndarray], clusters: np.ndarray, outcome: str = "correct") -> LogitFit:
    """Logistic regression of ``y`` (named ``outcome`` in messages) on a constant and
    ``predictors``, standard errors clustered by ``clusters`` (scenarios). Raises
    ``Untestable`` when the data cannot support it."""
    if y.size < MIN_ROWS:
        raise Untestable(f"only {y.size} scored rows (at least {MIN_ROWS} needed)")
    if np.unique(clusters).size < MIN_ITEMS:
        raise Untestable(f"only {np.unique(clusters).size} scenarios (at least {MIN_ITEMS} needed)")
    if y.min() == y.max():
        raise Untestable(f"{outcome} is {bool(y[0])} in every row, so there is no variation to explain")
    for name, column in predictors.items():
        if column.min() == column.max():
            raise Untestable(f"{name} did not vary")
    design = np.column_stack([np.ones(y.size), *predictors.values()])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow on the way; the checks below judge the result
        for category in (PerfectSeparationWarning, ConvergenceWarning, HessianInversionWarning):
            warnings.simplefilter("error", category)
        try:
            result = sm.Logit(y, design).fit(disp=0, maxiter=100, cov_type="cluster", cov_kwds={"groups": clusters})
        except _FIT_FAILURES as error:
            raise Untestable(f"the logistic regression could not be fitted ({type(error).__name__}: {error}); a group "
                             "or predictor range whose answers are all right or all wrong does this") from None
    params, cov = np.asarray(result.params), np.asarray(result.cov_params())
    separated = np.any(np.abs(params[1:]) > SEPARATION_COEF) or np.any(np.sqrt(np.abs(np.diag(cov))) > SEPARATION_COEF)
    if not (np.all(np.isfinite(params)) and np.all(np.isfinite(cov))) or separated:
        raise Untestable("a predictor (nearly) separates right from wrong answers, so its effect is not finite")
    return LogitFit(("const", *predictors), params, cov, int(y.size))


def test_hypotheses(records: Sequence[AnswerRecord] | Answers, *, alpha: float = ALPHA) -> tuple[HypothesisResult, ...]:
    """H1-H4 on ``records`` (one model and rendering), each at level ``alpha``."""
    rows = Rows.of(records)
    return (
        falls_with_length_and_structure(rows, "H1", "correct", alpha),
        structure_beats_noise(rows, alpha),
        falls_with_length_and_structure(rows, "H3", "syntactic_ok", alpha),
        rule_kinds_differ(rows, alpha),
    )


test_hypotheses.__test__ = False  # not a test: pytest would collect it wherever it is imported


def falls_with_length_and_structure(rows: Rows, hypothesis: str, outcome: str, alpha: float = ALPHA) -> HypothesisResult:
    """H1 (``correct``) or H3 (``syntactic_ok``): the outcome falls with length and with reasoning links."""
    what = "a correct answer" if outcome == "correct" else "an answer in the asked format"
    test = (f"logistic regression of {outcome} on log2(context tokens) and reasoning links, main and length-sweep "
            "rows, standard errors clustered by scenario; one-sided Wald tests that both slopes are negative "
            "(p: the larger of the two)")
    try:
        fit = fit_logit(getattr(rows, outcome), {"log2_tokens": rows.log2_tokens, "links": rows.links}, rows.cluster,
                        outcome)
        length, links = fit.contrast({"log2_tokens": 1}, alpha), fit.contrast({"links": 1}, alpha)
    except Untestable as reason:
        return _untestable(hypothesis, test, len(rows), reason)
    weaker = max(length, links, key=lambda c: c.p_below)
    effect = f"odds ratio {length.odds_ratio} per doubling of length, {links.odds_ratio} per extra reasoning link"
    supported = weaker.p_below < alpha
    if supported:
        verdict = (f"Supported: the odds of {what} fall by a factor {math.exp(length.estimate):.2f} per doubling "
                   f"of the context and {math.exp(links.estimate):.2f} per extra reasoning link ({_p(weaker.p_below)}).")
    else:
        verdict = (f"Not supported: both must fall significantly; the odds of {what} change by a factor "
                   f"{math.exp(length.estimate):.2f} per doubling of the context ({_p(length.p_below)}) and "
                   f"{math.exp(links.estimate):.2f} per extra reasoning link ({_p(links.p_below)}), one-sided, "
                   f"level {alpha:g}.")
    return HypothesisResult(id=hypothesis, statement=STATEMENTS[hypothesis], test=test, statistic=weaker.z,
                            p_value=weaker.p_below, effect=effect, n=fit.n, supported=supported, verdict=verdict)


def structure_beats_noise(rows: Rows, alpha: float = ALPHA) -> HypothesisResult:
    """H2: one more reasoning link costs more than the tokens it adds would cost as noise."""
    test = ("logistic regression of correct on log2(context tokens) and reasoning links, main and length-sweep rows, "
            "standard errors clustered by scenario; one-sided Wald test that the effect of one link is below that of "
            "the same number of noise tokens added to a dialogue of median length")
    try:
        fit = fit_logit(rows.correct, {"log2_tokens": rows.log2_tokens, "links": rows.links}, rows.cluster)
        per_link, median = tokens_per_link(rows), float(np.median(rows.dialogue_tokens[_first_rows(rows)]))
        noise_weight = math.log2(1 + per_link / median)  # log2-length change of adding per_link tokens
        link = fit.contrast({"links": 1}, alpha)
        noise = fit.contrast({"log2_tokens": noise_weight}, alpha)
        difference = fit.contrast({"links": 1, "log2_tokens": -noise_weight}, alpha)
    except Untestable as reason:
        return _untestable("H2", test, len(rows), reason)
    effect = (f"one more reasoning link (about {per_link:.0f} tokens): odds ratio {link.odds_ratio}; the same "
              f"{per_link:.0f} tokens of noise on a {median:.0f}-token dialogue: {noise.odds_ratio}; "
              f"link over noise: {difference.odds_ratio}")
    supported = difference.p_below < alpha
    verdict = (f"{'Supported' if supported else 'Not supported'}: a reasoning link multiplies the odds of a correct "
               f"answer by {math.exp(link.estimate):.2f}, the tokens it adds would as noise by "
               f"{math.exp(noise.estimate):.2f} ({_p(difference.p_below)}, one-sided, level {alpha:g}).")
    return HypothesisResult(id="H2", statement=STATEMENTS["H2"], test=test, statistic=difference.z,
                            p_value=difference.p_below, effect=effect, n=fit.n, supported=supported, verdict=verdict)


def tokens_per_link(rows: Rows) -> float:
    """How many tokens one more reasoning link adds to a dialogue: the least-squares slope
    of the items' own dialogue length on their links (none when longer dialogues are not
    the linked ones)."""
    first = _first_rows(rows)
    links, tokens = rows.links[first], rows.dialogue_tokens[first]
    if links.min() == links.max():
        return 0.0
    return max(float(np.polyfit(links, tokens, 1)[0]), 0.0)


def _first_rows(rows: Rows) -> np.ndarray:
    """Each item's first row: per-item figures counted once however many renderings it has."""
    return np.unique(rows.item, return_index=True)[1]


def rule_kinds_differ(rows: Rows, alpha: float = ALPHA) -> HypothesisResult:
    """H4: accuracy differs between rule kinds with log2 length and links held fixed."""
    ruled = rows.where(rows.rule_kind != NO_RULE)
    test = ("logistic regression of correct on rule-kind dummies with log2(context tokens) and reasoning links as "
            "controls, rule items' main and length-sweep rows, standard errors clustered by scenario; joint Wald "
            "test of the dummies")
    counts = Counter(ruled.rule_kind.tolist())
    if len(counts) < 2:
        return _untestable("H4", test, len(ruled), Untestable(f"{len(counts)} rule kind(s) among the rows, two needed"))
    reference = min(counts, key=lambda kind: (-counts[kind], kind))  # the most common kind
    dummies = {kind: (ruled.rule_kind == kind).astype(float) for kind in sorted(counts) if kind != reference}
    controls = {name: column for name, column in (("log2_tokens", ruled.log2_tokens), ("links", ruled.links))
                if column.min() != column.max()}
    try:
        fit = fit_logit(ruled.correct, controls | dummies, ruled.cluster)
        statistic, p = fit.wald(list(dummies))
        log_odds = {reference: 0.0} | {kind: float(fit.params[fit.names.index(kind)]) for kind in dummies}
        best, worst = max(log_odds, key=log_odds.get), min(log_odds, key=log_odds.get)
        spread = fit.contrast({best: 1, worst: -1}, alpha)  # the reference kind has no coefficient: its weight drops out
    except (Untestable, np.linalg.LinAlgError) as reason:
        why = str(reason) or "the rule-kind coefficients are not identified"
        return rule_kinds_differ_unadjusted(ruled, alpha, why)
    effect = (f"Cramér's V {cramers_v(ruled.rule_kind, ruled.correct):.2f} (rule kind x correct); at fixed length "
              f"and links, {best} over {worst}: odds ratio {spread.odds_ratio}")
    supported = p < alpha
    if supported:
        verdict = (f"Supported: at fixed length and links the {len(counts)} rule kinds differ in accuracy ({_p(p)}); "
                   f"best {best}, worst {worst}.")
    else:
        verdict = (f"Not supported: no difference between the {len(counts)} rule kinds is shown at fixed length "
                   f"and links ({_p(p)}, level {alpha:g}).")
    return HypothesisResult(id="H4", statement=STATEMENTS["H4"], test=test, statistic=statistic, p_value=p,
                            effect=effect, n=fit.n, supported=supported, verdict=verdict)


def rule_kinds_differ_unadjusted(ruled: Rows, alpha: float, why: str) -> HypothesisResult:
    """H4 without the controls, when the logit cannot be fitted (a kind whose answers are all
    right or all wrong separates it): a chi-square test of rule kind x correct on each
    scenario's first row, so a scenario counts once however many renderings and languages
    it has (the rows of one scenario are not independent)."""
    first = ruled.where(np.isin(np.arange(len(ruled)), np.unique(ruled.cluster, return_index=True)[1]))
    test = (f"the logit with controls could not be fitted ({why}); instead a chi-square test of independence of "
            "rule kind x correct, one row per scenario (no control for length or links)")
    kinds, kind_index = np.unique(first.rule_kind, return_inverse=True)
    table = np.zeros((kinds.size, 2))
    np.add.at(table, (kind_index, first.correct.astype(int)), 1)
    if len(first) < MIN_ITEMS or (table.sum(axis=0) == 0).any():
        reason = Untestable(f"{len(first)} scenarios, or every answer right or every one wrong")
        return _untestable("H4", test, len(first), reason)
    statistic, p, _, expected = stats.chi2_contingency(table, correction=False)
    accuracy = table[:, 1] / table.sum(axis=1)
    best, worst = kinds[accuracy.argmax()], kinds[accuracy.argmin()]
    effect = (f"Cramér's V {cramers_v(first.rule_kind, first.correct):.2f}; accuracy {best} {accuracy.max():.0%}, "
              f"{worst} {accuracy.min():.0%}" + ("; some expected counts are below 5, so p is approximate"
                                                   if (expected < 5).any() else ""))
    supported = bool(p < alpha)
    verdict = (f"{'Supported' if supported else 'Not supported'} without controls: the {kinds.size} rule kinds "
               f"{'differ' if supported else 'are not shown to differ'} in accuracy ({_p(p)}, level {alpha:g}); "
               f"best {best}, worst {worst}.")
    return HypothesisResult(id="H4", statement=STATEMENTS["H4"], test=test, statistic=float(statistic),
                            p_value=float(p), effect=effect, n=len(first), supported=supported, verdict=verdict)


def cramers_v(groups: np.ndarray, outcome: np.ndarray) -> float:
    """Cramér's V of the groups x outcome contingency table (0: no association, 1: complete)."""
    _, group_index = np.unique(groups, return_inverse=True)
    _, outcome_index = np.unique(outcome, return_inverse=True)
    table = np.zeros((group_index.max() + 1, outcome_index.max() + 1))
    np.add.at(table, (group_index, outcome_index), 1)
    if min(table.shape) < 2:
        return 0.0
    chi2 = stats.chi2_contingency(table, correction=False)[0]
    return float(np.sqrt(chi2 / (table.sum() * (min(table.shape) - 1))))


def _untestable(hypothesis: str, test: str, n: int, reason: Exception) -> HypothesisResult:
    return HypothesisResult(id=hypothesis, statement=STATEMENTS[hypothesis], test=test, statistic=None, p_value=None,
                            effect="not estimated", n=n, supported=None, verdict=f"Not testable: {reason}.")


def _p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
