"""Logical calls and attempt numbers: which sibling spans are tries of one call (docs/tasks.md).

This is the one definition: materialization stores each span's `call_id` and `attempt`, blame
forgives recovered attempts by it, and the read side (hops, findings) reads the stored columns.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from .tree import Key, Span, SpanTree, end_of, has_parent_id, span_failed, start_of

#: A span's logical call (the span id of the call's first attempt) and its attempt number.
Call = tuple[Any, int]


def _sibling_runs(tree: SpanTree) -> list[list[Key]]:
    # Siblings of the same hop (kind and name) under the same parent id, in start order; the
    # parent id is taken as declared, so orphaned retries still group. Kind `other` groups too:
    # an HTTP client span resent after a 503 (`http.request.resend_count`) is one such call.
    runs: dict[tuple, list[Key]] = defaultdict(list)
    for key in tree.order:
        span = tree.spans[key]
        if has_parent_id(span) and span.get("hop_kind") and span.get("hop_name") is not None:
            run = (span.get("trace_id"), span.get("parent_span_id"), span.get("hop_kind"),
                   span.get("hop_name"))
            runs[run].append(key)
    for keys in runs.values():
        keys.sort(key=lambda k: (start_of(tree.spans[k]), tree.spans[k].get("retry_attempt") or 0))
    return list(runs.values())


def _continues_call(span: Span, previous: Span) -> bool:
    # retry.attempt (or http.request.resend_count) 0 starts a new logical call and > 0 continues
    # one. Without a number, a repeat that started after a failed sibling ended is its retry; a
    # repeat after a success is a new call (an agent loop calling the same model again), and
    # one started while its sibling still ran is a parallel call, not a retry.
    attempt = span.get("retry_attempt")
    if attempt is not None:
        return attempt > 0
    return span_failed(previous) and start_of(span) >= end_of(previous)


def logical_calls(tree: SpanTree) -> list[list[Key]]:
    """Split sibling runs of one hop into logical calls, each a list of its attempts in order."""
    calls: list[list[Key]] = []
    for keys in _sibling_runs(tree):
        current = [keys[0]]
        for previous, key in zip(keys, keys[1:]):
            if _continues_call(tree.spans[key], tree.spans[previous]):
                current.append(key)
            else:
                calls.append(current)
                current = [key]
        calls.append(current)
    return calls


def number_calls(tree: SpanTree, calls: list[list[Key]]) -> dict[Key, Call]:
    """Give every span its call id and attempt number (0 for a first try)."""
    # A span outside any sibling run (without a parent or a hop) is its own call.
    numbered: dict[Key, Call] = {
        key: (key[1], tree.spans[key].get("retry_attempt") or 0) for key in tree.order}
    for attempts in calls:
        call_id, attempt = attempts[0][1], -1
        for key in attempts:
            # A declared number wins (the first attempt may not have been exported); an
            # unnumbered retry is one more than the attempt before it.
            declared = tree.spans[key].get("retry_attempt")
            attempt = declared if declared is not None else attempt + 1
            numbered[key] = (call_id, attempt)
    return numbered
