"""Prometheus text exposition (format 0.0.4) of agentsla's task, SLO and ingest metrics.

Ratio gauges cover the tasks that finished in the last `window_ns` (default 5 minutes, a
scrape-friendly recent window) per task type; the gauge `agentsla_tasks_stored` counts the
finished tasks still stored (a gauge, not a counter: retention deletes old tasks, and a counter
must never go down). Samples whose value is
undefined (no finished tasks) are left out rather than sent as NaN.
"""

from __future__ import annotations

import math
import re
from typing import Callable, Iterable, Mapping

from agentsla.config import Config
from agentsla.queries.hops import hop_stats
from agentsla.queries.sla import RATED_OUTCOMES, sla_by
from agentsla.queries.slo import slo_status
from agentsla.queries.store import ReadStore

NS = 1_000_000_000
DEFAULT_WINDOW_NS = 300 * NS
#: Hops exported per scrape (those with the most errors first).
MAX_HOPS = 100
Sample = tuple[dict[str, str], float | int | None]

def escape_label(value: str) -> str:
    """Escape a label value: backslash, double quote and line feed, per the exposition format."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def format_value(value: float | int) -> str:
    """Format a sample value (`+Inf`, `-Inf`, `NaN` spelled as the format wants)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def family(name: str, kind: str, help_text: str, samples: Iterable[Sample]) -> list[str]:
    """Render one metric family: HELP, TYPE and one line per sample with a value."""
    lines = [f"# HELP {name} {help_text.replace(chr(92), chr(92) * 2).replace(chr(10), ' ')}",
             f"# TYPE {name} {kind}"]
    for labels, value in samples:
        if value is None:
            continue
        body = ",".join(f'{k}="{escape_label(v)}"' for k, v in labels.items())
        lines.append(f"{name}{{{body}}} {format_value(value)}" if body else
                     f"{name} {format_value(value)}")
    return lines


def _type_label(row: Mapping) -> dict[str, str]:
    return {"task_type": row.get("task_type") or ""}


def _task_families(rows: list[dict]) -> list[str]:
    lines: list[str] = []
    for outcome in RATED_OUTCOMES:
        lines += family(f"agentsla_task_{outcome}_ratio", "gauge",
                        f"Share of the recently finished tasks (cancelled excluded) that were "
                        f"{outcome}.", [(_type_label(r), r[f"{outcome}_rate"]) for r in rows])
    lines += family("agentsla_gateway_success_ratio", "gauge",
                    "Share of recently finished tasks whose root answered without ERROR, 5xx or 429.",
                    [(_type_label(r), r["gateway_success_rate"]) for r in rows])
    lines += family("agentsla_tasks_in_progress", "gauge",
                    "Tasks started in the recent window and not finished.",
                    [(_type_label(r), r["in_progress"]) for r in rows])
    quantiles = [({**_type_label(r), "quantile": q}, _seconds(r[f"latency_p{p}_ms"]))
                 for r in rows for q, p in (("0.5", 50), ("0.95", 95), ("0.99", 99))]
    lines += family("agentsla_task_duration_seconds", "gauge",
                    "Quantiles of the duration of recently finished tasks.", quantiles)
    return lines


def _hop_families(rows: list[dict]) -> list[str]:
    """Per-hop calls, error and timeout ratios and latency quantiles over the window."""
    def hop(row: Mapping) -> dict[str, str]:
        return {"hop_kind": row.get("hop_kind") or "", "hop_name": row.get("hop_name") or ""}
    lines = family("agentsla_hop_calls", "gauge", "Calls (spans) of each hop that ended in the "
                   "recent window.", [(hop(r), r["calls"]) for r in rows])
    for what in ("error", "timeout", "rate_limited"):
        lines += family(f"agentsla_hop_{what}_ratio", "gauge",
                        f"Share of each hop's recent calls that ended in {what.replace('_', ' ')}.",
                        [(hop(r), r[f"{what}_rate"]) for r in rows])
    quantiles = [({**hop(r), "quantile": q}, _seconds(r[f"latency_p{p}_ms"]))
                 for r in rows for q, p in (("0.5", 50), ("0.95", 95), ("0.99", 99))]
    return lines + family("agentsla_hop_duration_seconds", "gauge",
                          "Quantiles of the duration of each hop's recent calls.", quantiles)


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else ms / 1000.0


def _slo_families(slos: list[dict]) -> list[str]:
    lines = family("agentsla_slo_objective", "gauge", "SLO objective (share of good tasks).",
                   [(_type_label(s), s["objective"]) for s in slos])
    lines += family("agentsla_slo_error_budget_remaining", "gauge",
                    "Error budget left over the SLO period (1 = untouched, below 0 = overspent).",
                    [(_type_label(s), s["error_budget_remaining"]) for s in slos])
    lines += family("agentsla_slo_burn_rate", "gauge",
                    "Error-budget burn rate over the window ending now (1 = exactly on budget).",
                    [({**_type_label(s), "window": w}, v) for s in slos
                     for w, v in s["burn_rates"].items()])
    return lines


#: Ingest statistics (collector.pipeline.IngestStats, server health) that only ever grow.
COUNTER_KEYS = frozenset({"accepted_spans", "duplicate_spans", "refused_spans", "failed_spans",
                          "rejected_spans", "commits", "lost_tasks_declared",
                          "retention_deleted_tasks"})


def _ingest_families(stats: Mapping[str, float]) -> list[str]:
    lines: list[str] = []
    for key, value in sorted(stats.items()):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        name = "agentsla_ingest_" + re.sub(r"[^a-zA-Z0-9_]", "_", key)
        counter = key in COUNTER_KEYS or name.endswith("_total")
        if counter and not name.endswith("_total"):
            name += "_total"
        lines += family(name, "counter" if counter else "gauge", f"Ingest statistic {key}.",
                        [({}, value)])
    return lines


def render_metrics(store: ReadStore, config: Config, now_ns: int,
                   stats: Callable[[], Mapping[str, float]] | None = None,
                   window_ns: int = DEFAULT_WINDOW_NS) -> str:
    """Answer: what are agentsla's metrics now, in Prometheus text format?

    Families: agentsla_task_<outcome>_ratio, agentsla_gateway_success_ratio,
    agentsla_tasks_in_progress, agentsla_task_duration_seconds{quantile} (per task_type over the
    window), agentsla_hop_calls, agentsla_hop_{error,timeout,rate_limited}_ratio,
    agentsla_hop_duration_seconds{quantile} (per hop_kind, hop_name over the window, at most
    MAX_HOPS hops), agentsla_tasks_stored{task_type,outcome}, agentsla_slo_objective,
    agentsla_slo_error_budget_remaining, agentsla_slo_burn_rate{task_type,window}, and
    agentsla_ingest_<name> for each number `stats()` returns (counters, suffixed _total, for
    COUNTER_KEYS and names ending in _total; gauges otherwise).
    """
    lines = _task_families(sla_by(store, now_ns - window_ns, now_ns, "task_type"))
    # the hops with the most errors first, at most MAX_HOPS: labels of bounded cardinality
    lines += _hop_families(hop_stats(store, now_ns - window_ns, now_ns, limit=MAX_HOPS))
    finished = store.rows("tasks_stored")
    lines += family("agentsla_tasks_stored", "gauge",
                    "Finished tasks still stored, by outcome.",
                    [({**_type_label(r), "outcome": r["outcome"]}, r["tasks"]) for r in finished])
    lines += _slo_families(slo_status(store, config, now_ns))
    if stats is not None:
        lines += _ingest_families(stats())
    return "\n".join(lines) + "\n"
