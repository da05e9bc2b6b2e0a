"""First failing hop of a task: which hop failed first and why (see docs/tasks.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .attempts import Call, logical_calls, number_calls
from .tree import Key, Span, SpanTree, end_of, is_hop, span_failed, start_of

NO_BLAME: dict[str, Any] = {"ffh_kind": None, "ffh_name": None, "ffh_reason": None,
                            "ffh_span_id": None, "ffh_detail_span_id": None}


def failure_reason(span: Span) -> str:
    """Return a failed span's own reason: its normalized error type, else `error`."""
    return span.get("error_type") or "error"


@dataclass(frozen=True)
class Blame:
    """A first failing hop: the hop reported, the span blamed inside it, and the reason."""

    reported: Span
    blamed: Span
    reason: str

    def columns(self) -> dict[str, Any]:
        """Return the ffh_* task columns."""
        detail = None if self.blamed is self.reported else self.blamed.get("span_id")
        return {"ffh_kind": self.reported.get("hop_kind"),
                "ffh_name": self.reported.get("hop_name") or self.reported.get("name"),
                "ffh_reason": self.reason,
                "ffh_span_id": self.reported.get("span_id"),
                "ffh_detail_span_id": detail}

    def spans(self) -> tuple[Span, ...]:
        """Return the spans the blame rests on (the reported hop and the blamed span)."""
        return (self.reported,) if self.blamed is self.reported else (self.reported, self.blamed)


@dataclass(frozen=True)
class Attempts:
    """Attempt bookkeeping: each span's call and attempt, recovered failures, and retries."""

    calls: dict[Key, Call]
    recovered: frozenset[Key]
    retries: frozenset[Key]


def classify_attempts(tree: SpanTree) -> Attempts:
    """Number the logical calls; find failed attempts a later attempt of the same call recovered."""
    calls = logical_calls(tree)
    recovered: set[Key] = set()
    for attempts in calls:
        if len(attempts) == 1:
            continue  # no later attempt to recover it
        later_ok = False
        for key in reversed(attempts):
            failed = span_failed(tree.spans[key])
            if failed and later_ok:
                recovered.add(key)
            later_ok = later_ok or not failed
    numbered = number_calls(tree, calls)
    retries = frozenset(k for k, (_, attempt) in numbered.items() if attempt > 0)
    return Attempts(numbered, frozenset(recovered), retries)


def _absorbed(tree: SpanTree, recovered: frozenset[Key]) -> set[Key]:
    # A recovered attempt's whole subtree failed inside that attempt, so it is forgiven too.
    absorbed: set[Key] = set()
    for key in sorted(recovered, key=lambda k: tree.depth[k]):
        if key not in absorbed:
            absorbed.add(key)
            absorbed.update(tree.descendants(key))
    return absorbed


def _earliest(tree: SpanTree, keys: list[Key]) -> Key:
    # Earliest end first; ties go to the deeper span, then to the smaller span id.
    return min(keys, key=lambda k: (end_of(tree.spans[k]), -tree.depth[k],
                                    str(tree.spans[k].get("span_id"))))


def _deepest_in_flight(tree: SpanTree, key: Key, moment: float) -> Key | None:
    # Only a chain of spans all in flight at `moment` was still being waited on.
    best, best_rank = None, None
    stack = list(tree.children.get(key, ()))
    while stack:
        child = stack.pop()
        span = tree.spans[child]
        if not start_of(span) < moment < end_of(span):
            continue
        rank = (tree.depth[child], end_of(span) - start_of(span), str(span.get("span_id")))
        if best_rank is None or rank > best_rank:
            best, best_rank = child, rank
        stack.extend(tree.children.get(child, ()))
    return best


#: Hops that are calls to a dependency: a client span under one is that call's own transport.
DEPENDENCY_HOPS = frozenset(("model", "tool", "cache", "storage", "queue"))
_OUTBOUND = ("client", "producer")


def _nearest_hop(tree: SpanTree, key: Key) -> Key:
    # An outbound call (an HTTP client span) that no dependency hop encloses names the
    # dependency that broke: reported at the gateway or agent above it, it would not.
    outbound = None
    for ancestor in tree.ancestors_or_self(key):
        span = tree.spans[ancestor]
        if is_hop(span):
            if outbound is not None and span.get("hop_kind") not in DEPENDENCY_HOPS:
                return outbound
            return ancestor
        if outbound is None and span.get("span_kind") in _OUTBOUND:
            outbound = ancestor
    return key if outbound is None else outbound


def _report(tree: SpanTree, blamed: Key, reason: str) -> Blame:
    reported = _nearest_hop(tree, blamed)
    return Blame(reported=tree.spans[reported], blamed=tree.spans[blamed], reason=reason)


def _failure_blame(tree: SpanTree, key: Key) -> Blame:
    span = tree.spans[key]
    waited = _deepest_in_flight(tree, key, end_of(span))
    if waited is None:
        return _report(tree, key, failure_reason(span))
    waited_span = tree.spans[waited]
    # The caller gave up on a descendant still running: that descendant is the culprit, and
    # unless it failed on its own, the reason is that it ran out of the caller's time.
    reason = failure_reason(waited_span) if span_failed(waited_span) else "timeout"
    return _report(tree, waited, reason)


def _fallback_blame(tree: SpanTree) -> Blame | None:
    served = [k for k in tree.order if tree.spans[k].get("fallback_used")]
    if not served:
        return None
    key = _earliest(tree, served)
    return _report(tree, key, tree.spans[key].get("fallback_kind") or "fallback")


def find_blame(tree: SpanTree, attempts: Attempts) -> Blame | None:
    """Find the first failing hop; for a task with no failure left, the first fallback."""
    absorbed = _absorbed(tree, attempts.recovered)
    failing = [k for k in tree.order if k not in absorbed and span_failed(tree.spans[k])]
    if failing:
        return _failure_blame(tree, _earliest(tree, failing))
    return _fallback_blame(tree)
