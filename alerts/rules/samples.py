"""Evaluate a parsed expression against a query source into the samples that hold.

The source is what `Evaluator.eval(now, query)` receives: anything with `select(selector,
at_ns) -> list[Sample]` and `objective(task_type) -> float` (alerts/rules/source.py's
MetricSource answers from the read store; `agentsla alerts test` from `a+bxn` input series).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from agentsla.alerts.rules.expr import COMPARATORS, Condition, Expr, PredictLinear, Selector

NS = 1_000_000_000
#: Points of history predict_linear fits, one per window, the newest ending now.
PREDICT_POINTS = 6


@dataclass
class Sample:
    """One series at one time: its labels, value and how many tasks/calls it rests on."""

    labels: dict[str, str]
    value: float
    count: int | None = None
    extra: dict = field(default_factory=dict)

    def key(self, names) -> tuple:
        """The label values under `names`, for matching series across conditions."""
        return tuple(self.labels.get(n, "") for n in names)


class Source(Protocol):
    """Where samples come from: the database, or test series."""

    def select(self, selector: Selector, at_ns: int) -> list[Sample]:
        """Return the selector's series at `at_ns` (windows end there)."""

    def objective(self, task_type: str | None) -> float:
        """Return the SLO objective of a task type."""


def evaluate(expr: Expr, source: Source, now_ns: int) -> list[Sample]:
    """Return the series for which every condition holds (labels and value of the first)."""
    result = _condition(expr.conditions[0], source, now_ns)
    for condition in expr.conditions[1:]:
        other = _condition(condition, source, now_ns)
        result = _and(result, other)
    return result


def _and(left: list[Sample], right: list[Sample]) -> list[Sample]:
    # `and` matches series on the label names both sides carry (so `by (task_type)` on one
    # side and `{task_type="chat"}` on the other still meet).
    out = []
    for sample in left:
        for other in right:
            shared = set(sample.labels) & set(other.labels)
            if sample.key(sorted(shared)) == other.key(sorted(shared)):
                counts = [c for c in (sample.count, other.count) if c is not None]
                out.append(Sample(sample.labels, sample.value, min(counts) if counts else None,
                                  sample.extra))
                break
    return out


def _condition(condition: Condition, source: Source, now_ns: int) -> list[Sample]:
    compare = COMPARATORS[condition.op]
    out = []
    for sample in _vector(condition, source, now_ns):
        threshold = condition.threshold
        if threshold == "objective":
            threshold = source.objective(sample.labels.get("task_type") or None)
        if compare(sample.value, float(threshold)):
            out.append(sample)
    return out


def _vector(condition: Condition, source: Source, now_ns: int) -> list[Sample]:
    if isinstance(condition.vector, PredictLinear):
        return predict_linear(condition.vector, source, now_ns)
    return [s for s in source.select(condition.vector, now_ns) if s.value is not None]


def predict_linear(vector: PredictLinear, source: Source, now_ns: int) -> list[Sample]:
    """Fit a least-squares line through the last PREDICT_POINTS windows; extrapolate it."""
    window_ns = int(vector.selector.window_s * NS)
    history: dict[tuple, list[tuple[float, Sample]]] = {}
    for k in range(PREDICT_POINTS - 1, -1, -1):
        at_ns = now_ns - k * window_ns
        for sample in source.select(vector.selector, at_ns):
            if sample.value is not None:
                key = tuple(sorted(sample.labels.items()))
                history.setdefault(key, []).append((-k * vector.selector.window_s, sample))
    out = []
    for points in history.values():
        if len(points) < 3:
            continue  # two points are a guess, not a trend
        slope, intercept = _fit([(t, s.value) for t, s in points])
        latest = points[-1][1]
        out.append(Sample(latest.labels, intercept + slope * vector.horizon_s, latest.count,
                          latest.extra))
    return out


def _fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    slope = 0.0 if var == 0 else sum((t - mean_t) * (v - mean_v) for t, v in points) / var
    return slope, mean_v - slope * mean_t
