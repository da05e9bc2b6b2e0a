"""Span-level questions of alerts and incidents: provider calls, arrivals, the first failure.

A span belongs to the window holding its end (`end_ns`), except in spans_received, which
counts arrivals (`received_ns`): a dead-man's switch watches what came in, not span time.
"""

from __future__ import annotations

from typing import Any, Mapping

from agentsla.queries.store import ReadStore

#: The scope of an incident (alerts.incidents.queries.scope_of); None means "any".
SCOPE_KEYS = ("task_type", "tenant_id", "hop_kind", "hop_name")


def provider_calls(store: ReadStore, start_ns: int, end_ns: int) -> list[dict]:
    """Answer: how many model calls did each provider and model get, and how many failed?

    Rows: provider (gen_ai.provider.name, else gen_ai.system, else the model), model, calls,
    errors; over the model spans that ended in [start_ns, end_ns).
    """
    return store.rows("provider_calls", {"start_ns": start_ns, "end_ns": end_ns})


def spans_received(store: ReadStore, start_ns: int, end_ns: int) -> list[dict]:
    """Answer: how many spans did agentsla receive in the window, per service?

    Rows: service_name, spans; by arrival time (received_ns), not span time.
    """
    return store.rows("spans_received", {"start_ns": start_ns, "end_ns": end_ns})


def first_failing_span_ns(store: ReadStore, start_ns: int, end_ns: int,
                          scope: Mapping[str, Any]) -> int | None:
    """Answer: when did the first span in the scope fail, in [start_ns, end_ns)?

    Returns the earliest end_ns of a failing span (ERROR or error.type) among the scope's tasks
    (task_type, tenant_id) and hop (hop_kind, hop_name), or None.
    """
    rows = store.rows("first_failing_span", {"start_ns": start_ns, "end_ns": end_ns,
                                             **{k: scope.get(k) for k in SCOPE_KEYS}})
    return rows[0]["first_ns"] if rows else None
