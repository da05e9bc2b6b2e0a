"""The counters and histograms of one API process: each settled rollup minute added once.

A counter must never go down, but rollup minutes are corrected late (a task re-judged when its
root arrives, a lost declaration) and retention deletes old ones. So the totals live in the
process: a minute is read once, when it is `SETTLE_NS` old, and added; later corrections of it
are not read again and retention never touches what was added. A restart starts the counters
at zero, which Prometheus' rate() and increase() treat as the reset it is (docs/api.md).

A scrape reads the rollups of the minutes that settled since the previous scrape (none most of
the time: one minute a minute), so its cost does not grow with the data stored.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Iterable

from prometheus_client.samples import Exemplar

from agentsla.queries.metrics.buckets import BUDGET_USED, DURATION, bucket_of
from agentsla.queries.rollup import HOUR_NS, MINUTE_NS, split
from agentsla.queries.store import ReadStore

NS = 1_000_000_000
#: A minute is added once it ended this long ago: the exporters' delays and the re-judging of a
#: task when its root arrives land before; a later correction is not counted.
SETTLE_NS = 120 * NS
#: Series known from this long before the first scrape start at 0 (rate() counts their first
#: increments); what happened in it is not counted.
SEED_NS = HOUR_NS
#: Raw rows read for exemplars: at most this long before the settled end.
EXEMPLAR_LOOKBACK_NS = 5 * MINUTE_NS
#: Tasks in progress: those that started in the last this many hours (hour tier).
IN_PROGRESS_HOURS = 24
#: Label-value caps: the first ones seen get their own series, later ones share OTHER.
MAX_TASK_TYPES = 50
MAX_HOPS = 100
MAX_CAUSES = 200
OTHER = "_other"

OUTCOMES = ("success", "degraded", "failed", "budget_exhausted", "rejected", "lost", "cancelled")
BLAMED = ("failed", "degraded", "budget_exhausted", "rejected")
ERROR_REASONS = ("timeout", "rate_limited", "circuit_open")
#: Histogram families and their classic buckets.
LAYOUTS = {"agentsla_task_duration_seconds": DURATION,
           "agentsla_task_budget_used_ratio": BUDGET_USED,
           "agentsla_hop_duration_seconds": DURATION,
           "agentsla_hop_time_to_first_token_seconds": DURATION}
#: Where each histogram comes from: rollup question → its `metric` column's value → family.
HISTOGRAM_SOURCES = {
    "metrics/task_hist": {"latency_ms": "agentsla_task_duration_seconds",
                          "budget_used": "agentsla_task_budget_used_ratio"},
    "metrics/hop_hist": {"latency_ms": "agentsla_hop_duration_seconds",
                         "ttft_ms": "agentsla_hop_time_to_first_token_seconds"},
}

Labels = tuple[str, ...]


class _Cap:
    """Admits the first `limit` keys; later keys are folded by the caller."""

    def __init__(self, limit: int) -> None:
        self.limit, self.seen = limit, set()

    def admits(self, key: tuple) -> bool:
        """Return whether `key` has (or now gets) a series of its own."""
        if key in self.seen:
            return True
        if len(self.seen) < self.limit:
            self.seen.add(key)
            return True
        return False


def _minute(ns: int) -> int:
    return ns // MINUTE_NS * MINUTE_NS


class Totals:
    """Counters, histograms and exemplars accumulated from settled rollup minutes."""

    def __init__(self, now_ns: int, settle_ns: int = SETTLE_NS) -> None:
        self.settle_ns = settle_ns
        #: minutes before this are counted; minutes from it on are not yet
        self.settled_ns = _minute(now_ns - settle_ns)
        self.seeded = False
        self.counters: dict[str, dict[Labels, float]] = defaultdict(dict)
        self.histograms: dict[str, dict[Labels, list[int]]] = defaultdict(dict)
        #: each histogram series' sum of values in millionths of its unit (its `_sum`), whole
        #: numbers so that the order rows are added in cannot change it
        self.sums_e6: dict[str, dict[Labels, int]] = defaultdict(dict)
        #: (family, labels) of a counter, or (family, labels, slot) of a bucket → its exemplar
        self.exemplars: dict[tuple, Exemplar] = {}
        self._types, self._hops, self._causes = (_Cap(MAX_TASK_TYPES), _Cap(MAX_HOPS),
                                                 _Cap(MAX_CAUSES))
        #: held by a scrape from advance() until its families are built
        self.lock = threading.Lock()

    def advance(self, store: ReadStore, now_ns: int) -> None:
        """Add the minutes that settled since the last call (the first call also seeds)."""
        if not self.seeded:
            self._add(store, self.settled_ns - SEED_NS, self.settled_ns, weight=0)
            self.seeded = True
        end = _minute(now_ns - self.settle_ns)
        if end > self.settled_ns:
            self._add(store, self.settled_ns, end, weight=1)
            self._exemplars(store, max(self.settled_ns, end - EXEMPLAR_LOOKBACK_NS), end)
            self.settled_ns = end

    # --- labels, capped ---

    def task_type(self, value: str | None) -> str:
        """Return a task type's label value (OTHER past MAX_TASK_TYPES)."""
        value = value or ""
        return value if self._types.admits((value,)) else OTHER

    def hop(self, kind: str | None, name: str | None) -> Labels:
        """Return a hop's labels (its name OTHER past MAX_HOPS)."""
        key = (kind or "", name or "")
        return key if self._hops.admits(key) else (key[0], OTHER)

    def cause(self, row: dict) -> Labels:
        """Return a first failing hop's labels (name and reason OTHER past MAX_CAUSES)."""
        key = (self.task_type(row["task_type"]), row["ffh_kind"] or "", row["ffh_name"] or "",
               row["ffh_reason"] or "")
        return key if self._causes.admits(key) else (*key[:2], OTHER, OTHER)

    # --- adding ---

    def _count(self, family: str, labels: Labels, value: float | None) -> None:
        # an increment is never negative: a counter only goes up
        series = self.counters[family]
        series[labels] = series.get(labels, 0) + max(0, value or 0)

    def _add(self, store: ReadStore, lo: int, hi: int, weight: int) -> None:
        params = split(lo, hi)
        for row in store.rows("metrics/task_counts", params):
            t = self.task_type(row["task_type"])
            for outcome in OUTCOMES:
                self._count("agentsla_tasks_total", (t, outcome), weight * row[outcome])
            ok, answered = row["gateway_ok"] or 0, row["gateway_answered"] or 0
            self._count("agentsla_task_gateway_answers_total", (t, "ok"), weight * ok)
            self._count("agentsla_task_gateway_answers_total", (t, "error"), weight * (answered - ok))
        for row in store.rows("metrics/causes", params):
            labels = self.cause(row)
            for outcome in BLAMED:
                self._count("agentsla_first_failing_hop_tasks_total", (*labels, outcome),
                            weight * row[outcome])
            self._count("agentsla_first_failing_hop_seconds_total", labels,
                        weight * (row["lost_us"] or 0) / 1e6)
        for row in store.rows("metrics/hop_counts", params):
            self._add_hop(self.hop(row["hop_kind"], row["hop_name"]), row, weight)
        for question, families in HISTOGRAM_SOURCES.items():
            for row in store.rows(question, params):
                labels = ((self.task_type(row["task_type"]),) if "task_type" in row
                          else self.hop(row["hop_kind"], row["hop_name"]))
                self._observe(families[row["metric"]], labels, row["bucket"],
                              weight * row["count"], weight * (row["sum_e6"] or 0))

    def _add_hop(self, labels: Labels, row: dict, weight: int) -> None:
        for column in ("calls", "logical_calls", "retries"):
            self._count(f"agentsla_hop_{column}_total", labels, weight * row[column])
        reasons = {"timeout": row["timeouts"], "rate_limited": row["rate_limited"],
                   "circuit_open": row["circuit_open"]}
        reasons["other"] = row["errors"] - sum(reasons.values())
        for reason, value in reasons.items():
            self._count("agentsla_hop_errors_total", (*labels, reason), weight * value)
        for kind in ("input", "output"):
            self._count("agentsla_hop_tokens_total", (*labels, kind),
                        weight * row[f"{kind}_tokens"])

    def _observe(self, family: str, labels: Labels, bucket: int, count: int,
                 sum_e6: int) -> None:
        layout = LAYOUTS[family]
        counts = self.histograms[family].setdefault(labels, [0] * len(layout.le()))
        counts[layout.slot(bucket)] += max(0, count)
        sums = self.sums_e6[family]
        sums[labels] = sums.get(labels, 0) + max(0, sum_e6)

    # --- exemplars: a trace id per failing outcome and per slow bucket ---

    def _exemplars(self, store: ReadStore, lo: int, hi: int) -> None:
        window = {"start_ns": lo, "end_ns": hi}
        for row in store.rows("metrics/task_exemplars", window):
            t = self.task_type(row["task_type"])
            if row["outcome"] != "success":
                self.exemplars["agentsla_tasks_total", (t, row["outcome"])] = _exemplar(
                    row["trace_id"], 1, row["end_ns"])
            self._slow("agentsla_task_duration_seconds", (t,), row)
        for row in store.rows("metrics/hop_exemplars", window):
            labels = self.hop(row["hop_kind"], row["hop_name"])
            if row["error_trace_id"]:
                reason = row["error_type"] if row["error_type"] in ERROR_REASONS else "other"
                self.exemplars["agentsla_hop_errors_total", (*labels, reason)] = _exemplar(
                    row["error_trace_id"], 1, row["error_end_ns"])
            self._slow("agentsla_hop_duration_seconds", labels, row)

    def _slow(self, family: str, labels: Labels, row: dict) -> None:
        if row["slow_trace_id"] and row["slow_ms"] is not None:
            slot = DURATION.slot(bucket_of(row["slow_ms"]))
            self.exemplars[family, labels, slot] = _exemplar(
                row["slow_trace_id"], row["slow_ms"] * DURATION.to_unit, row["slow_end_ns"])

    def in_progress(self, store: ReadStore, now_ns: int) -> Iterable[tuple[str, int]]:
        """Yield (task type label, tasks in progress) now, from the hour tier."""
        since = now_ns // HOUR_NS * HOUR_NS - (IN_PROGRESS_HOURS - 1) * HOUR_NS
        for row in store.rows("metrics/in_progress", {"since_ns": since}):
            yield self.task_type(row["task_type"]), row["tasks"]


def _exemplar(trace_id: str, value: float, end_ns: int | None) -> Exemplar:
    return Exemplar({"trace_id": trace_id}, value, None if end_ns is None else end_ns / NS)
