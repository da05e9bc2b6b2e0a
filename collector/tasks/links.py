"""Which task a queue consumer's trace joins when it started a new trace with a link.

Messaging instrumentations may start the consumer's work in a trace of its own whose entry span
links to the producer's span instead of naming it as its parent (the OpenTelemetry messaging
conventions: the link is required, the parent optional). The user's request is then two traces:
the gateway's, ending in 503, and the worker's, holding the model call that failed. Keyed by
trace, they are two tasks: SLA counts the request twice and blames the gateway. A trace whose
entry follows a link joins the linked trace's task instead (docs/tasks.md, Traces of a task);
both writers apply this one rule, and resolve a trace's task by one function (`resolve_task`).
"""

from __future__ import annotations

from typing import AbstractSet, Any, Iterable, Mapping

import orjson

from .tree import has_parent_id

_NO_TRACE = "0" * 32


def followed_link(span: Mapping[str, Any]) -> str | None:
    """Return the trace whose task this span's trace joins, or None.

    Only a consumer's entry follows a link: a span with no parent, of kind CONSUMER, with
    exactly one link, to another valid trace. A batch consumer (several links) works for
    several tasks at once and stays a task of its own; a span with a parent belongs to its
    parent's trace anyway. A trace that declares `task.id` keeps it: the writers ask this
    only of traces that declare none.
    """
    linked = followed_span(span)
    return None if linked is None else linked[0]


def followed_span(span: Mapping[str, Any]) -> tuple[str, str] | None:
    """Return the (trace id, span id) this span's link points at when it is followed
    (`followed_link`): the producer's span, which the task's span tree nests it under."""
    if span.get("span_kind") != "consumer" or has_parent_id(span):
        return None
    links = span.get("links")
    if isinstance(links, (str, bytes)):
        if len(links) < 3:  # "[]": the usual case, not worth parsing
            return None
        links = orjson.loads(links)
    if not links or len(links) != 1:
        return None
    target = links[0].get("trace_id") or ""
    if len(target) != 32 or target == _NO_TRACE or target == span.get("trace_id"):
        return None
    return target, links[0].get("span_id") or ""


def first_followed(spans: Iterable[Mapping[str, Any]]) -> tuple[str, int] | None:
    """Of a trace's spans, the entry whose link the trace follows: the first to start (span id
    breaking ties) that `followed_link` accepts. Returns (the linked trace, the entry's start),
    None if no span follows a link."""
    followed = [(span.get("start_ns") or 0, span.get("span_id") or "", target)
                for span in spans if (target := followed_link(span))]
    if not followed:
        return None
    start, _, target = min(followed)
    return target, start


def resolve_task(trace: str, stored: Mapping[str, str], declared: Mapping[str, str],
                 linked: Mapping[str, str], present: AbstractSet[str]) -> str:
    """Return the task of a trace of a batch (the DuckDB writer's) or a pass (a ClickHouse
    materializer's): the traces `present`, each one's `declared` task.id and the trace its
    entry follows a link to (`linked`, for traces declaring none), and the tasks `stored` for
    traces (those present and the linked ones).

    The first task a trace was stored under wins (the task.id it declared, or the task of the
    trace it followed a link to); a trace stored under its own id (keyed by it until a claim
    came) and a provisional task keyed by a present trace go where that trace goes. Else the
    task.id it declares; else the task of the trace it follows a link to: that trace's,
    resolved alike when present, else the one stored, else its id (a provisional task the
    linked trace joins when it arrives); else its own id. A cycle of links falls back to the
    trace's own id.
    """
    path, at = [], trace
    while at not in path:
        path.append(at)
        kept = stored.get(at)
        if kept and kept != at:
            if kept not in present:
                return kept
            at = kept
        elif at not in present:
            return at
        elif at in declared:
            return declared[at]
        elif at in linked:
            at = linked[at]
        else:
            return at
    return trace
