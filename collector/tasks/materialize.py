"""Task materialization: one task row from all the span rows of one task, as a pure function.

The writer calls `materialize` for every task a commit touched (the task row, and each span's
logical call and attempt number to store with it), and `lost_deadline_ns` to know when an
unfinished task becomes `lost`. The rules and the reasons behind them are in docs/tasks.md;
the first-failing-hop walk lives in `blame.py`, the span tree in `tree.py`, logical calls and
attempts in `attempts.py`, each hop kind's self time (where the budget went) in `self_time.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from agentsla.config import TasksConfig
from agentsla.contract import BLAMED_OUTCOMES, DECLARABLE_OUTCOMES

from .attempts import Call
from .blame import NO_BLAME, Attempts, Blame, classify_attempts, find_blame, span_failed
from .self_time import self_times
from .tree import Key, Span, SpanTree, build_tree, end_of, start_of
from agentsla.collector.store.schema import TASK_COLUMN_NAMES

__all__ = ["Materialized", "materialize", "materialize_task", "lost_deadline_ns", "SPAN_SLACK_NS",
           "span_reach"]

#: A task's spans start within its interval (start_ns to end_ns) give or take this slack:
#: clock skew between services, late work. Readers of a task's stored spans look there first
#: (zone maps on start_ns) and check the task's span_count (queries/tasks.py, the writer).
SPAN_SLACK_NS = 30 * 60 * 1_000_000_000


def span_reach(starts: Sequence[int], ends: Sequence[int | None]) -> tuple[int, int | None]:
    """Where the spans of tasks with these start and end times can start: from the first start
    to the last end, SPAN_SLACK_NS either side; no upper bound (None) while one still runs."""
    finished = [end for end in ends if end is not None]
    last = max(finished) + SPAN_SLACK_NS if len(finished) == len(ends) else None
    return min(starts) - SPAN_SLACK_NS, last


@dataclass(frozen=True)
class Materialized:
    """A task row, and each span's (call_id, attempt) keyed by (trace_id, span_id)."""

    row: dict[str, Any]
    calls: dict[Key, Call]


def materialize_task(task_id: str, spans: Sequence[Mapping[str, Any]], config: TasksConfig,
                     now_ns: int, first_seen_ns: int) -> dict[str, Any]:
    """Build the task row (keys: TASK_COLUMN_NAMES) from every span of one task."""
    return materialize(task_id, spans, config, now_ns, first_seen_ns).row


def materialize(task_id: str, spans: Sequence[Mapping[str, Any]], config: TasksConfig,
                now_ns: int, first_seen_ns: int) -> Materialized:
    """Build the task row and number every span's logical call and attempt."""
    tree = build_tree(spans, grace_cutoff_ns=now_ns - round(config.root_grace * 1e9))
    attempts = classify_attempts(tree)
    task_type = _first_set(tree, "task_type")
    budget_ms = _budget_total_ms(tree, config, task_type)
    if tree.root is None:  # the lost deadline takes any budget the spans tell
        budget_ms = _carried_budget_ms(tree) or budget_ms
    row: dict[str, Any] = {"task_id": task_id, "task_type": task_type,
                           "budget_total_ms": budget_ms, "first_seen_ns": first_seen_ns,
                           "updated_ns": now_ns}
    row.update(_identity(tree))
    row.update(_counts(tree, attempts))
    root = tree.root
    if root is not None:
        row.update(_judge_rooted(tree, root, attempts, budget_ms))
    else:
        deadline = _deadline_ns(budget_ms, config, first_seen_ns)
        row.update(_judge_unrooted(tree, deadline if now_ns >= deadline else None))
    row["budget_used_ratio"] = _ratio(row["duration_ms"], budget_ms)
    row["self_times"] = None if root is None else self_times(tree, root)
    return Materialized({name: row[name] for name in TASK_COLUMN_NAMES}, attempts.calls)


def lost_deadline_ns(spans: Sequence[Mapping[str, Any]], config: TasksConfig,
                     first_seen_ns: int) -> int:
    """Return when a task whose root has not arrived is declared lost (unix ns)."""
    tree = build_tree(spans)
    budget_ms = (_carried_budget_ms(tree)
                 or _budget_total_ms(tree, config, _first_set(tree, "task_type")))
    return _deadline_ns(budget_ms, config, first_seen_ns)


def _deadline_ns(budget_ms: float | None, config: TasksConfig, first_seen_ns: int) -> int:
    if budget_ms is None:
        budget_ms = config.default_budget * 1000.0
    return first_seen_ns + round(budget_ms * 1_000_000) + round(config.lost_grace * 1e9)


def _first_set(tree: SpanTree, column: str,
               accept: Callable[[Any], bool] = lambda v: v is not None) -> Any:
    # The root's value wins; before the root arrives, the earliest span carrying one.
    root = tree.root
    if root is not None and accept(root.get(column)):
        return root.get(column)
    return next((s.get(column) for s in tree.in_order() if accept(s.get(column))), None)


def _budget_total_ms(tree: SpanTree, config: TasksConfig, task_type: str | None) -> float | None:
    # A budget of 0 or less is no budget at all, as `hop.timeout_ms = 0` is no timeout.
    carried = _first_set(tree, "budget_total_ms", lambda v: v is not None and v > 0)
    return carried if carried is not None else config.budget_ms_for(task_type)


def _carried_budget_ms(tree: SpanTree) -> float | None:
    """Return the whole budget the spans tell: a budget.total_ms, else remaining + offset."""
    total = _first_set(tree, "budget_total_ms", lambda v: v is not None and v > 0)
    if total is not None:
        return total
    start = next((start_of(s) for s in tree.in_order()), 0)
    told = next((s for s in tree.in_order() if (s.get("budget_remaining_ms") or 0) > 0), None)
    # The budget left when a span started, plus how far into the task it started.
    return None if told is None else told["budget_remaining_ms"] + (start_of(told) - start) / 1e6


def _identity(tree: SpanTree) -> dict[str, Any]:
    root, top = tree.root, tree.structural_root
    return {"trace_id": top.get("trace_id") if top else None,
            "root_span_id": root.get("span_id") if root else None,
            "root_name": root.get("name") if root else None,
            "tenant_id": _first_set(tree, "tenant_id"),
            "service_name": top.get("service_name") if top else None,
            "agent": _agent(tree)}


def _agent(tree: SpanTree) -> str | None:
    named = next((s.get("agent") for s in tree.in_order() if s.get("agent")), None)
    if named is not None:
        return named
    # OpenInference AGENT spans carry no gen_ai.agent.name; their hop name is the agent.
    return next((s.get("hop_name") for s in tree.in_order() if s.get("hop_kind") == "agent"), None)


def _counts(tree: SpanTree, attempts: Attempts) -> dict[str, Any]:
    models = tools = input_tokens = output_tokens = 0
    fallback_used, fallback_kind = False, None
    for span in tree.in_order():  # one pass: this runs for every task of every commit
        kind = span.get("hop_kind")
        if kind == "model":
            models += 1
            input_tokens += span.get("input_tokens") or 0
            output_tokens += span.get("output_tokens") or 0
        elif kind == "tool":
            tools += 1
        if span.get("fallback_used"):
            fallback_used = True
            if fallback_kind is None and span.get("fallback_kind"):
                fallback_kind = span["fallback_kind"]
    return {"span_count": len(tree.order), "model_calls": models, "tool_calls": tools,
            "retries": len(attempts.retries), "input_tokens": input_tokens,
            "output_tokens": output_tokens, "fallback_used": fallback_used,
            "fallback_kind": fallback_kind}


def _judge_rooted(tree: SpanTree, root: Span, attempts: Attempts,
                  budget_ms: float | None) -> dict[str, Any]:
    outcome = _decided_outcome(root)
    computed = outcome is None
    if computed:
        outcome = _computed_outcome(tree, root)
    blame = find_blame(tree, attempts) if outcome in BLAMED_OUTCOMES else None
    ran_out = _budget_ran_out(tree, root, blame, budget_ms)
    if computed and outcome in ("failed", "degraded") and ran_out:
        outcome = "budget_exhausted"
    return {"start_ns": root.get("start_ns"), "end_ns": root.get("end_ns"),
            "duration_ms": _duration_ms(root), "outcome": outcome, "finished": True,
            "http_status": root.get("http_status"), "gateway_ok": _gateway_ok(root),
            "error_type": root.get("error_type"),
            "budget_exhausted": ran_out or outcome == "budget_exhausted",
            **(blame.columns() if blame else NO_BLAME)}


def _judge_unrooted(tree: SpanTree, lost_at: int | None) -> dict[str, Any]:
    start = next((s.get("start_ns") for s in tree.in_order()), None)
    duration = None if lost_at is None or start is None else max(0, lost_at - start) / 1e6
    return {"start_ns": start, "end_ns": lost_at, "duration_ms": duration,
            "outcome": "in_progress" if lost_at is None else "lost",
            "finished": lost_at is not None, "http_status": None, "gateway_ok": None,
            "error_type": None, "budget_exhausted": _budget_ran_out(tree, None, None, None),
            **NO_BLAME}


def _decided_outcome(root: Span) -> str | None:
    declared = root.get("task_outcome")
    if declared in DECLARABLE_OUTCOMES:
        return declared
    if root.get("error_type") in ("rejected", "cancelled"):
        return root.get("error_type")
    return None


def _computed_outcome(tree: SpanTree, root: Span) -> str:
    if span_failed(root):
        return "failed"
    if any(s.get("fallback_used") for s in tree.in_order()):
        return "degraded"
    return "success"


def _marked_exhausted(span: Span) -> bool:
    return bool(span.get("budget_exhausted")) or span.get("error_type") == "budget_exhausted"


def _budget_ran_out(tree: SpanTree, root: Span | None, blame: Blame | None,
                    budget_ms: float | None) -> bool:
    """Tell whether the evidence says the task's budget ran out (docs/tasks.md)."""
    marked = ((root,) if root is not None else ()) + (blame.spans() if blame else ())
    if any(_marked_exhausted(s) for s in marked):
        return True
    # Work started after the root ended is ghost work: its empty budget is not exhaustion.
    cutoff = end_of(root) if root is not None else float("inf")
    if any(s.get("budget_remaining_ms") is not None and s["budget_remaining_ms"] <= 0
           and start_of(s) < cutoff for s in tree.in_order()):
        return True
    duration = _duration_ms(root) if root is not None else None
    return duration is not None and budget_ms is not None and duration > budget_ms


def _duration_ms(span: Span) -> float | None:
    if span.get("duration_ms") is not None:
        return span["duration_ms"]
    end = span.get("end_ns")
    return None if end is None else max(0, end - start_of(span)) / 1e6


def _gateway_ok(root: Span) -> bool:
    status = root.get("http_status")
    http_ok = status is None or (status < 500 and status != 429)
    return root.get("status_code") != "error" and http_ok


def _ratio(duration_ms: float | None, budget_ms: float | None) -> float | None:
    if duration_ms is None or not budget_ms:
        return None
    return duration_ms / budget_ms
