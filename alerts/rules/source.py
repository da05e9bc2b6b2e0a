"""Answer alert selectors from the read store: each metric family is one named question.

Task metrics use queries.sla, hop metrics queries.hops, provider and ingest metrics
queries.spans, SLO burn queries.slo, root-cause context queries.root_causes and queries.tasks.
"""

from __future__ import annotations

from typing import Mapping

from agentsla.alerts.rules.catalog import METRICS
from agentsla.alerts.rules.expr import Selector
from agentsla.alerts.rules.samples import NS, Sample
from agentsla.config import Config
from agentsla.contract import FailingHop
from agentsla.queries.hops import hop_stats
from agentsla.queries.root_causes import root_causes
from agentsla.queries.sla import sla_by, sla_totals
from agentsla.queries.slo import slo_window
from agentsla.queries.spans import provider_calls, spans_received
from agentsla.queries.store import ReadStore
from agentsla.queries.tasks import task_trace_ids


def _ratio(part: float | None, whole: float | None) -> float | None:
    return None if not whole or part is None else part / whole


_TASK_VALUES = {
    "task_success_rate": ("success_rate", "finished"),
    "task_failure_rate": ("failed_rate", "finished"),
    "budget_exhaustion_rate": ("budget_exhausted_rate", "finished"),
    "fallback_rate": ("degraded_rate", "finished"),
    "lost_rate": ("lost_rate", "finished"),
    "rejected_rate": ("rejected_rate", "finished"),
    "gateway_success_rate": ("gateway_success_rate", "gateway_answered"),
    "task_latency_p95_seconds": ("latency_p95_ms", "finished"),
    "task_latency_p99_seconds": ("latency_p99_ms", "finished"),
    "tasks_finished": ("finished", "finished"),
}
_HOP_SUMS = ("calls", "logical_calls", "errors", "timeouts", "rate_limited", "input_tokens",
             "output_tokens")
_HOP_MAXES = ("latency_p95_ms", "latency_p99_ms", "ttft_p95_ms", "attempts_per_call",
              "quota_ratio")


class MetricSource:
    """The alert metrics over one read store: `select(selector, at_ns)` and `context(...)`."""

    def __init__(self, store: ReadStore, config: Config, watching_since_ns: int = 0) -> None:
        self.store = store
        self.config = config
        self.watching_since_ns = watching_since_ns
        quotas = (config.alerts.get("quotas") or {}).get("tokens_per_minute") or {}
        self.quotas = {str(k): float(v) for k, v in quotas.items()}

    def objective(self, task_type: str | None) -> float:
        """Return the SLO objective of a task type."""
        return self.config.slo_for(task_type).objective

    def select(self, selector: Selector, at_ns: int) -> list[Sample]:
        """Return the selector's series over [at_ns - window, at_ns)."""
        start_ns = at_ns - int(selector.window_s * NS)
        family = METRICS[selector.metric].family.name
        samples = getattr(self, f"_{family}")(selector, start_ns, at_ns)
        fixed = selector.equal_labels()
        for sample in samples:
            sample.labels = {**fixed, **sample.labels}
        return samples

    def _task(self, sel: Selector, start_ns: int, end_ns: int) -> list[Sample]:
        eq = sel.equal_labels()
        task_type, tenant_id = eq.get("task_type"), eq.get("tenant_id")
        if sel.by:
            rows = sla_by(self.store, start_ns, end_ns, sel.by[0], task_type, tenant_id)
            labelled = [({sel.by[0]: r[sel.by[0]] or ""}, r) for r in rows]
        else:
            labelled = [({}, sla_totals(self.store, start_ns, end_ns, task_type, tenant_id))]
        field, count_field = _TASK_VALUES[sel.metric]
        out = []
        for labels, row in labelled:
            if not all(m.matches(labels) for m in sel.matchers if m.label in labels):
                continue
            value = row[field]
            if value is not None and field.endswith("_ms"):
                value = value / 1000.0
            if value is not None:
                out.append(Sample(labels, float(value), int(row[count_field] or 0)))
        return out

    def _hop(self, sel: Selector, start_ns: int, end_ns: int) -> list[Sample]:
        eq = sel.equal_labels()
        rows = hop_stats(self.store, start_ns, end_ns, hop_kind=eq.get("hop_kind"),
                         task_type=eq.get("task_type"), tenant_id=eq.get("tenant_id"),
                         limit=100_000)
        groups: dict[tuple, dict] = {}
        minutes = (end_ns - start_ns) / NS / 60.0
        for row in rows:
            labels = {"hop_kind": row["hop_kind"] or "", "hop_name": row["hop_name"] or "",
                      "model": row["hop_name"] if row["hop_kind"] == "model" else "",
                      "tool": row["hop_name"] if row["hop_kind"] == "tool" else ""}
            if not all(m.matches(labels) for m in sel.matchers if m.label in labels):
                continue
            quota = self.quotas.get(labels["model"])
            tokens = (row["input_tokens"] or 0) + (row["output_tokens"] or 0)
            row = {**row, "quota_ratio": tokens / minutes / quota if quota else None}
            key = tuple(labels[b] for b in sel.by)
            _accumulate(groups.setdefault(key, {}), row)
        return [s for key, agg in groups.items()
                if (s := _hop_sample(sel, dict(zip(sel.by, key)), agg, minutes)) is not None]

    def _provider(self, sel: Selector, start_ns: int, end_ns: int) -> list[Sample]:
        groups: dict[tuple, list[int]] = {}
        for row in provider_calls(self.store, start_ns, end_ns):
            labels = {"provider": row["provider"] or "", "model": row["model"] or ""}
            if all(m.matches(labels) for m in sel.matchers):
                agg = groups.setdefault(tuple(labels[b] for b in sel.by), [0, 0])
                agg[0] += row["calls"]
                agg[1] += row["errors"]
        return [Sample(dict(zip(sel.by, key)), errors / calls, calls)
                for key, (calls, errors) in groups.items() if calls]

    def _ingest(self, sel: Selector, start_ns: int, end_ns: int) -> list[Sample]:
        groups: dict[tuple, int] = {}
        if not sel.by and start_ns >= self.watching_since_ns:
            # A dead-man's switch needs the zero, but only for a window agentsla watched whole:
            # a server started five minutes ago cannot say "nothing for ten minutes".
            groups[()] = 0
        for row in spans_received(self.store, start_ns, end_ns):
            labels = {"service_name": row["service_name"] or ""}
            if all(m.matches(labels) for m in sel.matchers):
                key = tuple(labels[b] for b in sel.by)
                groups[key] = groups.get(key, 0) + row["spans"]
        return [Sample(dict(zip(sel.by, key)), float(n), None) for key, n in groups.items()]

    def _slo(self, sel: Selector, start_ns: int, end_ns: int) -> list[Sample]:
        eq = sel.equal_labels()
        out: list[Sample] = []
        for row in slo_window(self.store, self.config, start_ns, end_ns, eq.get("task_type")):
            labels = {"task_type": row["task_type"] or ""}
            if all(m.matches(labels) for m in sel.matchers):
                out.append(Sample(labels if sel.by else {}, row["burn_rate"], int(row["total"])))
        if not sel.by and len(out) > 1:
            out = [max(out, key=lambda s: s.value)]  # all types together: the worst burning
        return out

    def context(self, labels: Mapping[str, str], window_s: float, at_ns: int,
                limit: int = 3) -> dict:
        """Describe the top root cause in an alert's scope: first failing hop and examples."""
        rows = []
        for span_s in (window_s, max(window_s, 3600.0)):
            rows = root_causes(self.store, at_ns - int(span_s * NS), at_ns,
                               task_type=labels.get("task_type") or None,
                               tenant_id=labels.get("tenant_id") or None, limit=50)
            if rows:
                break
        if not rows:
            return {}
        hop = next((labels[k] for k in ("hop_name", "model", "tool") if labels.get(k)), None)
        row = next((r for r in rows if hop and r["ffh_name"] == hop), rows[0])
        task_ids = list(row["example_task_ids"] or [])[:limit]
        traces = task_trace_ids(self.store, task_ids)
        hop_value = FailingHop.from_row(row)
        return {"first_failing_hop": hop_value and hop_value.to_json(),
                "first_failing_hop_share": row["share"],
                "example_task_ids": task_ids,
                "example_trace_ids": [traces[t] for t in task_ids if t in traces]}


def _accumulate(agg: dict, row: Mapping) -> None:
    for name in _HOP_SUMS:
        agg[name] = agg.get(name, 0) + (row.get(name) or 0)
    for name in _HOP_MAXES:
        if row.get(name) is not None:
            agg[name] = max(agg.get(name, row[name]), row[name])


def _hop_sample(sel: Selector, labels: dict, agg: dict, minutes: float) -> Sample | None:
    calls = agg.get("calls", 0)
    tokens = agg.get("input_tokens", 0) + agg.get("output_tokens", 0)
    values = {
        "hop_error_rate": _ratio(agg.get("errors"), calls),
        "hop_timeout_rate": _ratio(agg.get("timeouts"), calls),
        "hop_rate_limited_rate": _ratio(agg.get("rate_limited"), calls),
        "hop_latency_p95_seconds": _seconds(agg.get("latency_p95_ms")),
        "hop_latency_p99_seconds": _seconds(agg.get("latency_p99_ms")),
        "hop_attempts_per_call": agg.get("attempts_per_call"),
        "hop_calls": float(calls),
        "ttft_p95_seconds": _seconds(agg.get("ttft_p95_ms")),
        "queue_wait_p95_seconds": _seconds(agg.get("latency_p95_ms")),
        "tokens_per_minute": tokens / minutes if minutes else None,
        "token_quota_ratio": agg.get("quota_ratio"),
    }
    value = values[sel.metric]
    return None if value is None else Sample(labels, float(value), int(calls))


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else ms / 1000.0
