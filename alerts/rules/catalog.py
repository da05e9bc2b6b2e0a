"""The metrics alert expressions may name: their labels, units and the query behind each.

Each metric belongs to a family, and each family is answered by one named query (see
alerts/rules/source.py); the catalog only describes, so parsing and `agentsla alerts check` need no
database. Filters are the labels allowed inside `{...}`; `by` the labels allowed in `by (...)`.
"""

from __future__ import annotations

from dataclasses import dataclass

TASK_LABELS = ("task_type", "tenant_id", "service_name", "agent")
HOP_LABELS = ("hop_kind", "hop_name", "model", "tool")


@dataclass(frozen=True)
class Family:
    """A group of metrics computed by one query: its labels and how matchers reach the query."""

    name: str
    query: str              # the named query answering it
    pushed: tuple[str, ...]  # labels whose `=` matcher filters inside the query
    row_labels: tuple[str, ...]  # labels the query's rows carry (matchable, groupable)
    max_by: int | None = None    # most labels `by` may name
    count: str = ""              # what min_tasks counts


@dataclass(frozen=True)
class MetricSpec:
    """One metric name: family, unit and a one-line meaning."""

    name: str
    family: Family
    unit: str
    help: str
    implied: tuple[tuple[str, str], ...] = ()  # matchers the metric always applies


TASK = Family("task", "queries.sla.sla_by / sla_totals", ("task_type", "tenant_id"), TASK_LABELS,
              max_by=1, count="finished tasks in the window")
HOP = Family("hop", "queries.hops.hop_stats", ("hop_kind", "task_type", "tenant_id"), HOP_LABELS,
             count="calls (spans) of the hop in the window")
PROVIDER = Family("provider", "queries.spans.provider_calls", (), ("provider", "model"),
                  count="model calls in the window")
INGEST = Family("ingest", "queries.spans.spans_received", (), ("service_name",))
SLO = Family("slo", "queries.slo.slo_window", ("task_type",), ("task_type",),
             count="finished tasks in the window")

_SPECS = (
    MetricSpec("task_success_rate", TASK, "ratio", "share of finished tasks that succeeded"),
    MetricSpec("task_failure_rate", TASK, "ratio", "share of finished tasks that failed"),
    MetricSpec("budget_exhaustion_rate", TASK, "ratio",
               "share of finished tasks whose time budget ran out"),
    MetricSpec("fallback_rate", TASK, "ratio", "share of finished tasks served degraded (fallback)"),
    MetricSpec("lost_rate", TASK, "ratio", "share of finished tasks declared lost"),
    MetricSpec("rejected_rate", TASK, "ratio", "share of finished tasks rejected"),
    MetricSpec("gateway_success_rate", TASK, "ratio",
               "share of answered tasks whose root was not ERROR, 5xx or 429"),
    MetricSpec("task_latency_p95_seconds", TASK, "seconds", "p95 task duration"),
    MetricSpec("task_latency_p99_seconds", TASK, "seconds", "p99 task duration"),
    MetricSpec("tasks_finished", TASK, "count", "finished tasks (cancelled excluded)"),
    MetricSpec("hop_error_rate", HOP, "ratio", "share of a hop's calls that failed"),
    MetricSpec("hop_timeout_rate", HOP, "ratio", "share of a hop's calls that timed out"),
    MetricSpec("hop_rate_limited_rate", HOP, "ratio", "share of a hop's calls answered 429"),
    MetricSpec("hop_latency_p95_seconds", HOP, "seconds", "p95 call duration (worst hop)"),
    MetricSpec("hop_latency_p99_seconds", HOP, "seconds", "p99 call duration (worst hop)"),
    MetricSpec("hop_attempts_per_call", HOP, "count", "attempts per logical call (worst hop)"),
    MetricSpec("hop_calls", HOP, "count", "calls (spans) of the hop"),
    MetricSpec("ttft_p95_seconds", HOP, "seconds", "p95 time to first token of model calls",
               implied=(("hop_kind", "model"),)),
    MetricSpec("queue_wait_p95_seconds", HOP, "seconds", "p95 time spent in queue hops",
               implied=(("hop_kind", "queue"),)),
    MetricSpec("tokens_per_minute", HOP, "per_minute",
               "input + output tokens of model calls per minute", implied=(("hop_kind", "model"),)),
    MetricSpec("token_quota_ratio", HOP, "ratio",
               "tokens per minute / the model's quota (alerts.quotas.tokens_per_minute)",
               implied=(("hop_kind", "model"),)),
    MetricSpec("provider_error_rate", PROVIDER, "ratio",
               "share of a model provider's calls that failed, across all tasks and tenants"),
    MetricSpec("spans_ingested", INGEST, "count", "spans received in the window"),
    MetricSpec("slo_burn_rate", SLO, "burn",
               "bad fraction / (1 - objective) over the window; 1 spends the budget in a period"),
)

METRICS: dict[str, MetricSpec] = {spec.name: spec for spec in _SPECS}
