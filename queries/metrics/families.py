"""The metric families of /metrics: names, help and labels, built from the process's totals."""

from __future__ import annotations

import re
from typing import Iterator, Mapping

from prometheus_client.metrics_core import (CounterMetricFamily, GaugeMetricFamily,
                                            HistogramMetricFamily, Metric)

from agentsla.config import Config
from agentsla.queries.metrics.totals import LAYOUTS, NS, Totals

_HOP = ("hop_kind", "hop_name")
_CAUSE = ("task_type", "hop_kind", "hop_name", "reason")
#: Counters: name → (help, labels).
COUNTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "agentsla_tasks_total": ("Finished tasks by outcome (lost: declared lost).",
                             ("task_type", "outcome")),
    "agentsla_task_gateway_answers_total": (
        "Rated tasks whose root answered: ok (no ERROR, 5xx or 429) or error.",
        ("task_type", "result")),
    "agentsla_first_failing_hop_tasks_total": (
        "Failed, degraded, budget-exhausted and rejected tasks by their first failing hop.",
        (*_CAUSE, "outcome")),
    "agentsla_first_failing_hop_seconds_total": (
        "Summed duration of the tasks blamed on each first failing hop.", _CAUSE),
    "agentsla_hop_calls_total": ("Calls (spans) of each hop.", _HOP),
    "agentsla_hop_logical_calls_total": ("Logical calls of each hop (retries of one call "
                                         "count once).", _HOP),
    "agentsla_hop_retries_total": ("Retry attempts of each hop.", _HOP),
    "agentsla_hop_errors_total": ("Failed calls of each hop by reason (timeout, rate_limited, "
                                  "circuit_open, other).", (*_HOP, "reason")),
    "agentsla_hop_tokens_total": ("Model tokens of each hop by type (input, output).",
                                  (*_HOP, "type")),
}
#: Histograms: name → (help, labels); their buckets: totals.LAYOUTS.
HISTOGRAMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "agentsla_task_duration_seconds": ("Duration of rated finished tasks (cancelled and lost "
                                       "excluded).", ("task_type",)),
    "agentsla_task_budget_used_ratio": ("Share of its time budget a rated task used.",
                                        ("task_type",)),
    "agentsla_hop_duration_seconds": ("Duration of each hop's calls.", _HOP),
    "agentsla_hop_time_to_first_token_seconds": ("Time to the first streamed token of each "
                                                 "hop's calls.", _HOP),
}
#: Ingest statistics (collector.pipeline.IngestStats, server health) that only ever grow.
COUNTER_KEYS = frozenset({"accepted_spans", "duplicate_spans", "refused_spans", "failed_spans",
                          "rejected_spans", "commits", "lost_tasks_declared",
                          "retention_deleted_tasks"})


def counter_families(totals: Totals) -> Iterator[Metric]:
    """Yield the counters, each series with its exemplar where one was read."""
    for name, (help_text, labels) in COUNTERS.items():
        family = CounterMetricFamily(name, help_text, labels=labels)
        for values, total in sorted(totals.counters.get(name, {}).items()):
            family.add_metric(values, total, exemplar=totals.exemplars.get((name, values)))
        yield family


def histogram_families(totals: Totals) -> Iterator[Metric]:
    """Yield the histograms: cumulative `le` buckets, `_count` and `_sum`."""
    for name, (help_text, labels) in HISTOGRAMS.items():
        family = HistogramMetricFamily(name, help_text, labels=labels)
        les = LAYOUTS[name].le()
        for values, counts in sorted(totals.histograms.get(name, {}).items()):
            cumulative, buckets = 0, []
            for slot, (le, count) in enumerate(zip(les, counts)):
                cumulative += count
                exemplar = totals.exemplars.get((name, values, slot))
                buckets.append((le, cumulative, exemplar) if exemplar else (le, cumulative))
            family.add_metric(values, buckets,
                              sum_value=totals.sums_e6[name].get(values, 0) / 1e6)
        yield family


def gauge_families(totals: Totals, in_progress: list[tuple[str, int]],
                   config: Config) -> Iterator[Metric]:
    """Yield the true gauges: tasks in progress, SLO objectives, the settled minutes' end."""
    # every task type with a counter gets both gauges (0 in progress rather than no sample)
    known = {t for (t, _) in totals.counters.get("agentsla_tasks_total", {})}
    running = dict(in_progress)
    family = GaugeMetricFamily("agentsla_tasks_in_progress", "Tasks started in the last 24 "
                               "hours and not finished.", labels=("task_type",))
    for task_type in sorted(known | set(running)):
        family.add_metric((task_type,), running.get(task_type, 0))
    yield family
    family = GaugeMetricFamily("agentsla_slo_objective", "SLO objective (share of good "
                               "tasks) of each task type.", labels=("task_type",))
    for task_type in sorted(known | {s.task_type for s in config.slos if s.task_type != "*"}):
        family.add_metric((task_type,), config.slo_for(task_type).objective)
    yield family
    yield GaugeMetricFamily("agentsla_metrics_settled_timestamp_seconds",
                            "End of the rollup minutes the counters and histograms hold.",
                            value=totals.settled_ns / NS)


def ingest_families(stats: Mapping[str, float]) -> Iterator[Metric]:
    """Yield `agentsla_ingest_<name>` per number: counters for COUNTER_KEYS and *_total."""
    for key, value in sorted(stats.items()):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        name = "agentsla_ingest_" + re.sub(r"[^a-zA-Z0-9_]", "_", key)
        if key in COUNTER_KEYS or name.endswith("_total"):
            yield CounterMetricFamily(name, f"Ingest statistic {key}.", value=value)
        else:
            yield GaugeMetricFamily(name, f"Ingest statistic {key}.", value=value)
