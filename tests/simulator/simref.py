"""A small reading of the product's definitions over emitted SDK spans, to cross-check the truth.

The simulator computes its truth from its own failure log; this reads only the spans. Agreement
on every task shows the emitted shapes are unambiguous under the definitions in the brief.
"""

from __future__ import annotations

from collections import defaultdict

from opentelemetry.trace import StatusCode


def _failed(span) -> bool:
    return span.status.status_code == StatusCode.ERROR or "error.type" in span.attributes


def _hop_name(span) -> str:
    a = span.attributes
    return a.get("gen_ai.request.model") or a.get("gen_ai.tool.name") or \
        a.get("gen_ai.agent.name") or span.name


def _recovered(spans, children) -> set[int]:
    """Span ids of failed attempts that a later attempt of the same call recovered."""
    recovered: set[int] = set()
    for siblings in children.values():
        calls: dict[tuple, list] = defaultdict(list)
        current: dict[tuple, int] = defaultdict(int)
        for s in sorted(siblings, key=lambda s: s.start_time):
            if "retry.attempt" not in s.attributes:
                continue
            key = (s.attributes["hop.kind"], _hop_name(s))
            if s.attributes["retry.attempt"] == 0:
                current[key] += 1
            calls[key + (current[key],)].append(s)
        for attempts in calls.values():
            for i, s in enumerate(attempts):
                if _failed(s) and any(not _failed(later) for later in attempts[i + 1:]):
                    recovered.add(s.context.span_id)
    return recovered


def classify(spans) -> tuple[str, dict | None]:
    """Outcome and first failing hop {kind, name, reason} of one trace's spans."""
    root = next(s for s in spans if s.parent is None)
    children = defaultdict(list)
    for s in spans:
        if s.parent is not None:
            children[s.parent.span_id].append(s)
    depth = {root.context.span_id: 0}
    order = [root]
    for s in order:
        for c in children[s.context.span_id]:
            depth[c.context.span_id] = depth[s.context.span_id] + 1
            order.append(c)
    ra = root.attributes
    if ra.get("error.type") in ("rejected", "cancelled"):
        outcome = ra["error.type"]
    else:
        outcome = None
    recovered = _recovered(spans, children)
    failures = [s for s in spans if _failed(s) and s.context.span_id not in recovered]
    blame = None
    if failures:
        first = min(failures, key=lambda s: (s.end_time, -depth[s.context.span_id]))
        t = first.end_time
        inflight, stack = [], list(children[first.context.span_id])
        while stack:
            s = stack.pop()
            if s.start_time < t < s.end_time:
                inflight.append(s)
            stack.extend(children[s.context.span_id])
        target, reason = first, first.attributes.get("error.type")
        if inflight:
            target = max(inflight, key=lambda s: (depth[s.context.span_id],
                                                  s.end_time - s.start_time))
            reason = target.attributes.get("error.type") if _failed(target) else "timeout"
        blame = (first, {"kind": target.attributes["hop.kind"], "name": _hop_name(target),
                         "reason": reason})
    if outcome is None:
        root_failed = _failed(root) or ra.get("http.response.status_code", 0) >= 500
        fallback = any(s.attributes.get("fallback.used") for s in spans)
        if not root_failed and not fallback:
            return "success", None
        flagged = [root] + ([blame[0]] if blame else [])
        budget = ra["budget.total_ms"]
        exhausted = (
            any(s.attributes.get("error.type") == "budget_exhausted"
                or s.attributes.get("budget.exhausted") for s in flagged)
            or any(s.start_time < root.end_time and s.attributes["budget.remaining_ms"] <= 0
                   for s in spans)
            or (root.end_time - root.start_time) > budget * 1_000_000)
        outcome = "budget_exhausted" if exhausted else ("failed" if root_failed else "degraded")
    return outcome, (blame[1] if blame else None)
