"""Findings: the timeout-budget failures agent platforms actually had, found in the spans.

`find_findings(store, start_ns, end_ns, kind, thresholds, task_id, trace_id)` runs one module per
finding type (over one task's spans when a task or trace is named, queries/findings/scope.py); each
asks its questions of the read store (queries.store) over the views `spans` and `tasks`
(aggregated in the database, one row per hop and rule) and shapes the rows into findings. See docs/findings.md.
"""

from __future__ import annotations

import math
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Iterator, Mapping

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

#: How long each detector's last run took, in seconds, over a window (stored evidence) or over
#: one task's spans alone: the lanes of `_detect` take the longest first (an unknown one before
#: all), so the last detector to finish is a short one.
_LAST_S: dict[tuple[str, bool], float] = {}


def check_kind(kind: str | None) -> str | None:
    """Return a finding type from the contract (or None for all), or raise PermanentError."""
    if kind is None or kind == "":
        return None
    if kind not in FINDING_TYPES:
        raise PermanentError(f"bad kind {kind!r}: expected one of {', '.join(FINDING_TYPES)}")
    return kind


def find_findings(store: ReadStore, start_ns: int, end_ns: int, kind: str | None,
                  thresholds: Mapping[str, Any], task_id: str | None = None,
                  trace_id: str | None = None, threads: int = 1) -> list[dict]:
    """List the findings whose evidence ended in [start_ns, end_ns) widened to whole minutes
    (`evidence.whole_minutes`: the route says so in its answer), most severe first.

    `thresholds` is the config file's `findings:` section (overrides); defaults fill the rest
    and unknown keys raise ConfigError. `kind` limits the result to one finding type.
    With `task_id` or `trace_id`, answer "what is wrong with this task?" instead: the window
    then only sets how far back the task's time reaches (see `_task_findings`).
    `threads`: how many detectors may run at once (`_detect`; the setting findings_threads).
    """
    kind = check_kind(kind)
    merged = resolve_thresholds(thresholds)
    if task_id or trace_id:
        return _task_findings(store, end_ns - start_ns, kind, merged, task_id, trace_id,
                              threads)
    return _detect(store, *evidence.whole_minutes(int(start_ns), int(end_ns)), kind, merged,
                   threads=threads)


def _detect(store: ReadStore, start_ns: int, end_ns: int, kind: str | None,
            merged: Mapping[str, float], stored: bool = True, threads: int = 1) -> list[dict]:
    """Run the detectors over [start_ns, end_ns); `stored`: may read the minutes' stored
    evidence.

    On up to `threads` lanes at once: the store and its siblings (`ReadStore.sibling`, where
    the engine has them), each taking the next detector, the longest first by its last run
    (docs/findings.md, Detectors on several cores). A lane answers in one snapshot, so each
    finding comes from one; two lanes' snapshots may be a few milliseconds apart.
    """
    queue = _queue(kind, stored)
    with _lanes(store, min(threads, len(queue)) - 1, queue) as (pool, twins):
        started = _start(pool, twins, queue, start_ns, end_ns, merged, stored)
        return _ranked(_lane(store, queue, start_ns, end_ns, merged, stored), started)


def _queue(kind: str | None, stored: bool) -> deque:
    """The detectors to run, the longest first by their last run of the same kind (an unknown
    one first)."""
    return deque(sorted((m for t, m in DETECTORS.items() if kind is None or kind == t),
                        key=lambda m: -_LAST_S.get((m.TYPE, stored), math.inf)))


@contextmanager
def _lanes(store: ReadStore, siblings: int, queue: deque
           ) -> Iterator[tuple[ThreadPoolExecutor, list[ReadStore]]]:
    """A pool and up to `siblings` siblings of the store (fewer where the engine has fewer);
    on an error, empty the queue so the lanes stop after their detector; the siblings are
    closed at the end."""
    twins = _siblings(store, siblings)
    try:
        with ThreadPoolExecutor(max(len(twins), 1), "agentsla-findings") as pool:
            try:
                yield pool, twins
            except BaseException:
                queue.clear()
                raise
    finally:
        for twin in twins:
            twin.close()


def _start(pool: ThreadPoolExecutor, twins: list[ReadStore], queue: deque, start_ns: int,
           end_ns: int, merged: Mapping[str, float], stored: bool) -> list[Future]:
    """Start a lane on each sibling."""
    return [pool.submit(_lane, twin, queue, start_ns, end_ns, merged, stored) for twin in twins]


def _ranked(by_type: dict[str, list[dict]], started: list[Future]) -> list[dict]:
    """The findings of the asking store's lane and of the started ones, most severe first."""
    for lane in started:
        by_type.update(lane.result())
    # in the detectors' order before the (stable) sort: ties keep one order whatever the lanes
    return sorted((f for t in DETECTORS if t in by_type for f in by_type[t]), key=_rank)


def _siblings(store: ReadStore, wanted: int) -> list[ReadStore]:
    """Up to `wanted` siblings of the store (none where its engine has none)."""
    twins: list[ReadStore] = []
    while len(twins) < wanted and (twin := store.sibling()) is not None:
        twins.append(twin)
    return twins


def _lane(store: ReadStore, queue: deque, start_ns: int, end_ns: int,
          merged: Mapping[str, float], stored: bool) -> dict[str, list[dict]]:
    """Run detectors from the queue until it is empty, in one snapshot of the store, and
    return each one's findings; on an error, empty the queue (the other lanes stop after
    their detector) and raise it."""
    found: dict[str, list[dict]] = {}
    store.rows("findings/evidence_begin")
    try:
        params = {"start_ns": int(start_ns), "end_ns": int(end_ns), **merged,
                  "evidence_plan": evidence.plan(store, int(start_ns), int(end_ns), stored)}
        while True:
            try:
                module = queue.popleft()
            except IndexError:
                return found
            began = time.perf_counter()
            found[module.TYPE] = module.detect(store, params, merged)
            _LAST_S[module.TYPE, stored] = time.perf_counter() - began
    except BaseException:
        queue.clear()
        raise
    finally:
        store.rows("findings/evidence_commit")


def _task_findings(store: ReadStore, window_ns: int, kind: str | None,
                   merged: Mapping[str, float], task_id: str | None,
                   trace_id: str | None, threads: int) -> list[dict]:
    """Find what the task's own spans show, plus the findings of its time that name it.

    Judged alone, a task shows what it did (a polling loop, ghost work, a growing context);
    findings about a hop's population (a retry mean, a p99 ratio) need the other tasks of the
    time, so those of a window as long as the asked one, centred on the task, that list it
    among their examples are added.
    """
    queue = _queue(kind, True)  # of the time around the task; this store starts on its own
    with _lanes(store, min(threads - 1, len(queue)), queue) as (pool, twins):
        with task_scope(store, task_id, trace_id) as scope:
            around = evidence.whole_minutes(scope.start_ns - window_ns // 2,
                                            scope.end_ns + window_ns // 2)
            # the siblings start on the time around the task while this store judges the
            # task's own spans alone (stored evidence holds every task's): on DuckDB the scope
            # is this cursor's temporary tables, which shadow the views until the block ends
            started = _start(pool, twins, queue, *around, merged, True)
            own = _detect(scope.store, scope.start_ns, scope.end_ns, kind, merged, stored=False)
        found = _ranked(_lane(store, queue, *around, merged, True), started)
    seen = {_identity(f) for f in own}
    named = [f for f in found
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
