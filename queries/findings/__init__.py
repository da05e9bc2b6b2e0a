"""Findings: the timeout-budget failures agent platforms actually had, found in the spans.

`find_findings(store, start_ns, end_ns, kind, thresholds, task_id, trace_id)` runs one module per
finding type (over one task's spans when a task or trace is named, queries/findings/scope.py); each
asks its questions of the read store (queries.store) over the views `spans` and `tasks`
(aggregated in the database, one row per hop and rule) and shapes the rows into findings. See docs/findings.md.
"""

from __future__ import annotations

from typing import Any, Mapping

from agentsla.contract import FINDING_TYPES
from agentsla.errors import PermanentError
from agentsla.queries.findings import (budget_inversion, context_growth, duplicate_side_effect,
                                       evidence, false_failover, ghost_work, missing_timeout,
                                       rate_limit_masking, retry_amplification, runaway_loop,
                                       saturation, stream_stall, wait_amplification)
from agentsla.queries.findings._finding import SEVERITIES
from agentsla.queries.findings.scope import task_scope
from agentsla.queries.findings.thresholds import (DEFAULT_THRESHOLDS, THRESHOLDS,
                                                  resolve_thresholds)
from agentsla.queries.store import ReadStore

__all__ = ["find_findings", "check_kind", "resolve_thresholds", "DEFAULT_THRESHOLDS", "THRESHOLDS",
           "DETECTORS"]

#: Finding type -> its module (each has TYPE and detect(store, params, thresholds)).
DETECTORS = {m.TYPE: m for m in (
    budget_inversion, missing_timeout, retry_amplification, ghost_work, wait_amplification,
    context_growth, rate_limit_masking, false_failover, runaway_loop, duplicate_side_effect,
    stream_stall, saturation,
)}
assert set(DETECTORS) == set(FINDING_TYPES), "every finding type needs a detector"


def check_kind(kind: str | None) -> str | None:
    """Return a finding type from the contract (or None for all), or raise PermanentError."""
    if kind is None or kind == "":
        return None
    if kind not in FINDING_TYPES:
        raise PermanentError(f"bad kind {kind!r}: expected one of {', '.join(FINDING_TYPES)}")
    return kind


def find_findings(store: ReadStore, start_ns: int, end_ns: int, kind: str | None,
                  thresholds: Mapping[str, Any], task_id: str | None = None,
                  trace_id: str | None = None) -> list[dict]:
    """List the findings whose evidence ended in [start_ns, end_ns) widened to whole minutes
    (`evidence.whole_minutes`: the route says so in its answer), most severe first.

    `thresholds` is the config file's `findings:` section (overrides); defaults fill the rest
    and unknown keys raise ConfigError. `kind` limits the result to one finding type.
    With `task_id` or `trace_id`, answer "what is wrong with this task?" instead: the window
    then only sets how far back the task's time reaches (see `_task_findings`).
    """
    kind = check_kind(kind)
    merged = resolve_thresholds(thresholds)
    if task_id or trace_id:
        return _task_findings(store, end_ns - start_ns, kind, merged, task_id, trace_id)
    return _detect(store, *evidence.whole_minutes(int(start_ns), int(end_ns)), kind, merged)


def _detect(store: ReadStore, start_ns: int, end_ns: int, kind: str | None,
            merged: Mapping[str, float], stored: bool = True) -> list[dict]:
    """Run the detectors over one snapshot; `stored`: may read the minutes' stored evidence."""
    found: list[dict] = []
    store.rows("findings/evidence_begin")
    try:
        params = {"start_ns": int(start_ns), "end_ns": int(end_ns), **merged,
                  "evidence_plan": evidence.plan(store, int(start_ns), int(end_ns), stored)}
        for type_, module in DETECTORS.items():
            if kind is None or kind == type_:
                found.extend(module.detect(store, params, merged))
    finally:
        store.rows("findings/evidence_commit")
    found.sort(key=_rank)
    return found


def _task_findings(store: ReadStore, window_ns: int, kind: str | None,
                   merged: Mapping[str, float], task_id: str | None,
                   trace_id: str | None) -> list[dict]:
    """Find what the task's own spans show, plus the findings of its time that name it.

    Judged alone, a task shows what it did (a polling loop, ghost work, a growing context);
    findings about a hop's population (a retry mean, a p99 ratio) need the other tasks of the
    time, so those of a window as long as the asked one, centred on the task, that list it
    among their examples are added.
    """
    with task_scope(store, task_id, trace_id) as scope:
        # the task's own spans only: stored evidence holds every task's
        own = _detect(scope.store, scope.start_ns, scope.end_ns, kind, merged, stored=False)
    seen = {_identity(f) for f in own}
    around = evidence.whole_minutes(scope.start_ns - window_ns // 2,
                                    scope.end_ns + window_ns // 2)
    named = [f for f in _detect(store, *around, kind, merged)
             if _identity(f) not in seen
             and any(e.get("task_id") in scope.task_ids for e in f["examples"])]
    return sorted(own + named, key=_rank)


def _identity(finding: dict) -> tuple:
    hop = finding["hop"] or {}
    return (finding["type"], finding["rule"], hop.get("kind"), hop.get("name"),
            finding["task_type"])


def _rank(finding: dict) -> tuple:
    hop = finding["hop"] or {}
    return (SEVERITIES.index(finding["severity"]), FINDING_TYPES.index(finding["type"]),
            -(finding["last_seen_ns"] or 0), str(hop.get("kind")), str(hop.get("name")))
