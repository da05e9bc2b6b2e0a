"""Span tree of one task: parents, children and depths, safe against orphans and parent cycles.

Spans are keyed by (trace_id, span_id) because a task may hold several traces. The tree is built
by a breadth-first walk from the spans whose parent is absent, so it is acyclic by construction:
a span that names itself or a cycle-mate as parent is attached once, from the first side reached.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterator, Mapping, Sequence

Span = Mapping[str, Any]
Key = tuple[Any, Any]

# Exporters that do not know better send an all-zero parent id for a root.
_NO_PARENT_IDS = frozenset({"", "0" * 16})


def span_key(span: Span) -> Key:
    """Return the key identifying a span inside a task: (trace id, span id)."""
    return (span.get("trace_id"), span.get("span_id"))


def has_parent_id(span: Span) -> bool:
    """Tell whether the span names a parent at all (a root names none)."""
    parent = span.get("parent_span_id")
    return parent is not None and parent not in _NO_PARENT_IDS


def start_of(span: Span) -> int:
    """Return the span's start in unix ns (0 when missing)."""
    return span.get("start_ns") or 0


def end_of(span: Span) -> float:
    """Return the span's end in unix ns, or infinity for a span that never ended."""
    end = span.get("end_ns")
    return math.inf if end is None else end


def is_hop(span: Span) -> bool:
    """Tell whether the span is a hop: its hop kind is set and is not `other`."""
    return span.get("hop_kind") not in (None, "other")


def span_failed(span: Span) -> bool:
    """Tell whether a span failed: ERROR status, an error type, or HTTP status >= 500."""
    return (bool(span.get("is_error")) or span.get("status_code") == "error"
            or span.get("error_type") is not None or (span.get("http_status") or 0) >= 500)


@dataclass
class SpanTree:
    """The spans of one task arranged as an acyclic forest."""

    spans: dict[Key, Span]
    order: list[Key]
    parent: dict[Key, Key] = field(default_factory=dict)
    children: dict[Key, list[Key]] = field(default_factory=lambda: defaultdict(list))
    depth: dict[Key, int] = field(default_factory=dict)
    #: A SERVER span whose parent's remoteness is unknown is the root once it has waited this
    #: long (unix ns) for its parent: spans that arrived at or before this instant qualify.
    grace_cutoff_ns: int | None = None

    @cached_property
    def root(self) -> Span | None:
        """Return the task's entry span (docs/tasks.md, Root), or None before it arrives."""
        tops = [self.spans[k] for k in self.order if k not in self.parent]
        return (next((s for s in tops if not has_parent_id(s)), None)
                or next((s for s in tops if s.get("parent_remote")), None)
                or next((s for s in tops if self._waited_for_parent(s)), None))

    def _waited_for_parent(self, span: Span) -> bool:
        # Only when the SDK did not say (null): a local parent (False) is still to come.
        if self.grace_cutoff_ns is None or span.get("parent_remote") is not None:
            return False
        arrived = span.get("received_ns") or span.get("end_ns") or 0
        return span.get("span_kind") == "server" and arrived <= self.grace_cutoff_ns

    @cached_property
    def structural_root(self) -> Span | None:
        """Return the root, else the earliest span whose parent is absent (None if no spans)."""
        root = self.root
        if root is not None:
            return root
        # Every tree of the forest has a top, so this finds one whenever there are spans.
        return next((self.spans[k] for k in self.order if k not in self.parent), None)

    def ancestors_or_self(self, key: Key) -> Iterator[Key]:
        """Yield the key, its parent, and so on up to the top of its tree."""
        while key is not None:
            yield key
            key = self.parent.get(key)

    def descendants(self, key: Key) -> Iterator[Key]:
        """Yield every descendant of the key (not the key itself)."""
        stack = list(self.children.get(key, ()))
        while stack:
            child = stack.pop()
            yield child
            stack.extend(self.children.get(child, ()))

    def in_order(self) -> Iterator[Span]:
        """Yield the spans by start time (ties by span id)."""
        return (self.spans[k] for k in self.order)


def _attach_from(tree: SpanTree, top: Key, kids: Mapping[Key, list[Key]]) -> None:
    tree.depth[top] = 0
    queue = deque([top])
    while queue:
        node = queue.popleft()
        for child in kids.get(node, ()):
            if child in tree.depth:
                continue  # a cycle or a second route: keep the first attachment
            tree.depth[child] = tree.depth[node] + 1
            tree.parent[child] = node
            tree.children[node].append(child)
            queue.append(child)


def build_tree(spans: Sequence[Span], grace_cutoff_ns: int | None = None) -> SpanTree:
    """Index the spans of one task: first copy of each key wins; O(n log n)."""
    # This runs for every task of every commit, so it reads the span dicts inline. Order: by
    # start, ties by span id, then trace id (a key is (trace id, span id)).
    by_key: dict[Key, Span] = {}
    for span in spans:
        by_key.setdefault((span.get("trace_id"), span.get("span_id")), span)
    order = sorted(by_key, key=lambda k: (by_key[k].get("start_ns") or 0, str(k[1] or ""),
                                          str(k[0] or "")))
    tree = SpanTree(spans=by_key, order=order, grace_cutoff_ns=grace_cutoff_ns)
    kids: dict[Key, list[Key]] = defaultdict(list)
    tops: list[Key] = []
    for key in order:
        parent_id = by_key[key].get("parent_span_id")
        parent = (key[0], parent_id)
        if parent_id is None or parent_id in _NO_PARENT_IDS or parent == key or parent not in by_key:
            tops.append(key)
        else:
            kids[parent].append(key)
    for key in tops:
        _attach_from(tree, key, kids)
    if len(tree.depth) < len(order):
        for key in order:  # spans only reachable through a parent cycle: break it at the earliest
            if key not in tree.depth:
                _attach_from(tree, key, kids)
    return tree
