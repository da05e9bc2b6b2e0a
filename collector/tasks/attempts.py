"""Logical calls and attempt numbers: which sibling spans are tries of one call (docs/tasks.md).

This is the one definition: materialization stores each span's `call_id` and `attempt`, blame
forgives recovered attempts by it, and the read side (hops, findings) reads the stored columns.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from functools import cache, partial
from typing import Any, Callable

from .tree import Key, Span, SpanTree, end_of, has_parent_id, span_failed, start_of

#: A span's logical call (the span id of the call's first attempt) and its attempt number.
Call = tuple[Any, int]

#: How far a retry may seem to start before its failed sibling ended and still follow it:
#: times are only as fine as the SDK's clock, and the OpenTelemetry JS SDK stamps span starts
#: in whole milliseconds (ends finer), so a retry started right after a failure can read as
#: up to 1 ms earlier than that failure's end (tests/corpus: node_agent_retried_429).
CLOCK_SLACK_NS = 1_000_000


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
        if len(keys) > 1:  # most runs are one span
            keys.sort(key=lambda k: (start_of(tree.spans[k]),
                                     tree.spans[k].get("retry_attempt") or 0))
    return list(runs.values())


def _child_starts(tree: SpanTree) -> dict[tuple, list[int]]:
    # The start of every child of each declared parent, in order: what the caller did when.
    starts: dict[tuple, list[int]] = defaultdict(list)
    for span in tree.in_order():
        if has_parent_id(span):
            starts[(span.get("trace_id"), span.get("parent_span_id"))].append(start_of(span))
    return starts


def _continues_call(span: Span, previous: Span,
                    child_starts: Callable[[], dict[tuple, list[int]]]) -> bool:
    # retry.attempt (or http.request.resend_count) 0 starts a new logical call and > 0 continues
    # one. Without a number, a repeat is the retry of a failed sibling when it started after that
    # one ended and the caller started nothing else in between. A repeat after a success is a
    # new call (an agent loop calling the same model again); so is one after a fallback or
    # another step, and one started while its sibling still ran is a parallel call.
    attempt = span.get("retry_attempt")
    if attempt is not None:
        return attempt > 0
    start, ended = start_of(span), end_of(previous)
    if not span_failed(previous) or start < ended - CLOCK_SLACK_NS:
        return False
    # the caller's children started between the failure's end and the retry's start (the
    # retry itself among them when it seems to start first): none but the retry
    siblings = child_starts()[(span.get("trace_id"), span.get("parent_span_id"))]
    lo, hi = min(start, ended), max(start, ended)
    return bisect_left(siblings, hi) - bisect_left(siblings, lo) == int(start < ended)


def logical_calls(tree: SpanTree) -> list[list[Key]]:
    """Split sibling runs of one hop into logical calls, each a list of its attempts in order."""
    calls: list[list[Key]] = []
    # Only unnumbered retries need the children's starts: read them once, when first needed.
    child_starts = cache(partial(_child_starts, tree))
    for keys in _sibling_runs(tree):
        current = [keys[0]]
        for previous, key in zip(keys, keys[1:]):
            if _continues_call(tree.spans[key], tree.spans[previous], child_starts):
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
