"""Span contract v1: the vocabulary agentsla normalizes every instrumentation into.

See docs/span-contract.md for the attribute table and the mapping from the OpenTelemetry GenAI
conventions and OpenInference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

HOP_KINDS = ("gateway", "scheduler", "queue", "agent", "model", "tool", "cache", "storage", "other")

#: Outcomes of a finished task, in the order the partition of rates is reported.
FINISHED_OUTCOMES = ("success", "degraded", "failed", "budget_exhausted", "rejected", "lost",
                     "cancelled")
OUTCOMES = FINISHED_OUTCOMES + ("in_progress",)
#: Outcomes a root's `task.outcome` attribute may declare.
DECLARABLE_OUTCOMES = ("success", "degraded", "failed", "budget_exhausted", "rejected", "cancelled")
#: Outcomes whose first failing hop is reported.
BLAMED_OUTCOMES = ("failed", "degraded", "budget_exhausted", "rejected")

ERROR_TYPES = ("timeout", "rate_limited", "circuit_open", "connection_error", "budget_exhausted",
               "server_error", "invalid_response", "context_overflow", "loop_limit", "rejected",
               "cancelled")

FALLBACK_KINDS = ("partial_result", "cached", "backup_model", "rule_based", "default_value",
                  "error_message")

CIRCUIT_STATES = ("closed", "open", "half_open")

FINDING_TYPES = ("budget_inversion", "retry_amplification", "ghost_work", "missing_timeout",
                 "wait_amplification", "context_growth", "rate_limit_masking", "false_failover",
                 "runaway_loop", "duplicate_side_effect", "stream_stall", "saturation")


@dataclass(frozen=True)
class FailingHop:
    """The first failing hop of a task, or the dominant one of a set: kind, name, reason, spans.

    Carried as this value (or its `to_json()`) from materialization through alerts, incidents,
    notifications and exports; `label()` is for display only and never parsed back, because hop
    names hold spaces and parentheses. Span ids are None where the hop stands for many tasks.
    """

    kind: str | None
    name: str | None
    reason: str | None = None
    span_id: str | None = None
    detail_span_id: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "FailingHop | None":
        """Read the ffh_* columns of a task or root-cause row; None where no hop was blamed."""
        hop = cls(row.get("ffh_kind"), row.get("ffh_name"), row.get("ffh_reason"),
                  row.get("ffh_span_id"), row.get("ffh_detail_span_id"))
        return hop if hop.kind or hop.name else None

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> "FailingHop | None":
        """Rebuild from to_json() (None stays None; unknown keys are ignored)."""
        if not isinstance(data, Mapping):
            return None
        return cls(*(data.get(k) for k in _FAILING_HOP_KEYS))

    def to_json(self) -> dict[str, str | None]:
        """Describe as a JSON object with every field."""
        return {k: getattr(self, k) for k in _FAILING_HOP_KEYS}

    def same_hop(self, other: "FailingHop | None") -> bool:
        """Tell whether another value names the same hop (kind and name), whatever the reason."""
        return other is not None and bool(self.name) and \
            (self.kind, self.name) == (other.kind, other.name)

    def place(self) -> str:
        """Display the hop without its reason: `model gpt-4o`."""
        return " ".join(p for p in (self.kind, self.name) if p) or "unknown hop"

    def label(self) -> str:
        """Display as `model gpt-4o (rate_limited)`; the parts that are unknown are left out."""
        return f"{self.place()} ({self.reason})" if self.reason else self.place()


_FAILING_HOP_KEYS = ("kind", "name", "reason", "span_id", "detail_span_id")


def hop_label(hop: FailingHop | None, reason: bool = True, share: float | None = None) -> str:
    """Display a first failing hop, `unknown` for none: with its reason unless told not to, and
    its share of the blamed tasks when given (`tool db (timeout), 53% of blamed tasks`)."""
    if hop is None:
        return "unknown"
    text = hop.label() if reason else hop.place()
    return text + (f", {share:.0%} of blamed tasks" if share is not None else "")
