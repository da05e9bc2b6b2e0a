"""Where a task's time went: each hop kind's self time, a fact of the task computed once.

The spans counted are those reachable from the task's root through parent ids (the span tree,
tree.py), each clipped to its parent's clipped interval, the root to its own: time a child runs
after its parent ended (ghost work after the root ended, in particular) is not budget spent.
Self time of a span = its clipped duration minus the union of its children's clipped intervals
(overlaps merged). Parallel children each keep their own self time, so with parallelism a
task's kinds can sum past its duration; without it they sum to exactly its duration.

Materialization stores the result on the task row (`self_times`, whole microseconds per hop
kind, a kind reached with zero self time kept: the task still had that hop), and /budget sums
those rows through the rollups (queries/budget.py, docs/rollups.md).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pyarrow as pa

from .tree import Key, Span, SpanTree, end_of, span_key, start_of

#: The stored column: one (hop_kind, self_us) per hop kind the root reaches, by hop kind.
SELF_TIMES_TYPE = pa.list_(pa.struct([("hop_kind", pa.string()), ("self_us", pa.int64())]))
SELF_TIMES_SQL_TYPE = "STRUCT(hop_kind VARCHAR, self_us BIGINT)[]"
#: Span columns the computation reads (besides task_id).
SPAN_COLUMNS_USED = ("trace_id", "span_id", "parent_span_id", "hop_kind", "start_ns", "end_ns")


def self_times(tree: SpanTree, root: Span) -> list[dict[str, Any]]:
    """Return [{hop_kind, self_us}] of the spans the root reaches, by hop kind (docstring)."""
    self_ns: dict[str, int] = defaultdict(int)
    lo = start_of(root)
    stack: list[tuple[Key, int, int]] = [(span_key(root), lo, max(lo, root.get("end_ns") or lo))]
    while stack:
        key, lo, hi = stack.pop()
        kids = []
        for child in tree.children.get(key, ()):
            span = tree.spans[child]
            c_lo = max(start_of(span), lo)
            c_hi = max(c_lo, min(end_of(span), hi))  # a child never ended: its parent's end
            kids.append((c_lo, c_hi))
            stack.append((child, c_lo, c_hi))
        kind = tree.spans[key].get("hop_kind") or "other"
        self_ns[kind] += hi - lo - _covered_ns(kids)
    # whole microseconds, half up: one rounding per task and kind
    return [{"hop_kind": kind, "self_us": (ns + 500) // 1000}
            for kind, ns in sorted(self_ns.items())]


def _covered_ns(intervals: list[tuple[int, int]]) -> int:
    """Return the length of the union of [lo, hi) intervals."""
    covered, reach = 0, None
    for lo, hi in sorted(intervals):
        if reach is None or lo > reach:
            covered += hi - lo
            reach = hi
        elif hi > reach:
            covered += hi - reach
            reach = hi
    return covered
