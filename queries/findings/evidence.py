"""Findings from per-minute evidence: each question as one evidence query and one verdict.

A converted question (QUESTIONS) has an *evidence* query (queries/sql/<dialect>/
_evidence_<question>.sql): for a time range [lo, hi) it returns, per minute and key (hop or task
type), additive numbers only (counts, sums, maxima, first and last ends, a minute's best five
examples with their rank, distinct task ids, exponential-histogram buckets of the populations a
quantile is taken over, the few per-unit values a median is taken of). Its *verdict*
(findings/<question>.sql) merges the evidence rows of a window, held in `temp.evidence_rows`,
and applies the thresholds. Each unit of evidence (a logical call, a parent) belongs to the
minute holding its end, and the evidence query of a range reads the rows within SLACK_NS around
it, so evidence of minutes adds up to the evidence of the range, exactly.

The worker (`EvidenceWorker`, a thread of `agentsla serve`) stores the evidence of the minutes
the writer marked as changed (collector/store/evidence.py). A request (`plan`) takes stored
evidence for the whole minutes that are clean and computes the rest from raw rows: the ragged
edges, minutes changed since, minutes the worker has not reached yet. See docs/findings.md.

Beside the questions, DuckDB stores the key counts (KEY_COUNTS): each idempotency key's
executions per minute, from which `duplicate_side_effect` takes its candidate keys over the
window and the day before it (`gather_keys`); they have columns of their own and no verdict.

The hour tier: for the questions of HOURLY, the worker also stores each settled hour's evidence
(the same evidence query at `$grain_ns` = an hour, in `finding_evidence_hourly`), so a day's
window merges 24 rows a key instead of 1,440. An hour is built once it ended HOUR_SETTLE_NS ago
and rebuilt whenever the worker stores one of its minutes again (`evidence_hours_stale` marks
it until then); a request takes a whole hour from it only when the hour is built, none of its
minutes is dirty, and the rest of the window from the minutes.

On ClickHouse (no transactions, a verdict asks its evidence inline as the snippet
`evidence_<question>`) the questions of STORED["clickhouse"] are stored, in
`agentsla_finding_evidence`, the minutes marked dirty by the materializer passes; a verdict then
reads `_evidence_mixed.sql` (stored minutes plus the rest from raw rows) instead. The refresh
writes a minute's evidence before it deletes the marks it saw, so a crash leaves the minute dirty,
never wrong (docs/scale-out.md).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, NamedTuple

from agentsla.collector.store.evidence import hour_table, minute_table
from agentsla.collector.tasks.attempts import CLOCK_SLACK_NS
from agentsla.queries.findings.thresholds import DEFAULT_THRESHOLDS
from agentsla.queries.rollup import MINUTE_NS, split
from agentsla.queries.store import ReadStore, bound, question_sql, table
from agentsla.queries.tasks import SPAN_SLACK_NS

log = logging.getLogger(__name__)

#: The questions answered from evidence (the others still read the window's raw rows).
QUESTIONS = ("attempts_per_call", "retried_timeouts", "timeouts_exceeding_budget_left",
             "idle_gaps_between_children", "retry_storms", "failing_failovers",
             "rising_queue_waits", "steps_beyond_limit", "children_exceeding_parent_timeout",
             "loop_limit_errors", "slow_first_tokens", "long_calls_without_timeout",
             "work_after_cutoff", "long_prompts_timing_out", "rejections",
             "absorbed_rate_limits", "growing_contexts", "polling_loops")

#: The snippets a verdict is asked with: the rest of the key of those keyed finer than a hop or
#: task type (the label: a task type's rule, a hop's polled name), which they merge examples
#: and tallies by; the keys of histogram quantiles.
VERDICT_SNIPPETS = {
    "growing_contexts": {"evidence_part": "evidence_label"},
    "polling_loops": {"evidence_part": "evidence_label"},
    "absorbed_rate_limits": {"hist_keys": "hop_keys"},
    "slow_first_tokens": {"hist_keys": "hop_keys"},
    "long_prompts_timing_out": {"hist_keys": "hop_keys"},
    "timeouts_exceeding_budget_left": {"hist_keys": "hop_keys"},
    "long_calls_without_timeout": {"hist_keys": "hop_keys"},
    "rising_queue_waits": {"hist_keys": "hop_keys"},
}

#: How far around its minute a unit of evidence may reach: a logical call's attempts that
#: ended up to this long before its last one are read (a longer retry sequence is judged on
#: the attempts of its last 10 minutes).
SLACK_NS = 10 * MINUTE_NS

#: One period of the hour tier.
HOUR_NS = 60 * MINUTE_NS

#: The questions whose evidence each engine also keeps per hour: those whose verdict reads no
#: minute of its own (`retry_storms` judges each minute's retries; `rising_queue_waits` cuts
#: its quarters at a second of the minute, reading the minute's waits one by one).
HOURLY = {"duckdb": tuple(q for q in QUESTIONS if q not in ("retry_storms", "rising_queue_waits")),
          "clickhouse": ()}

#: How long after its end an hour's evidence is built (a live hour's minutes still change; a
#: late span after that rebuilds the hour).
HOUR_SETTLE_NS = SLACK_NS

#: Hours one worker round builds at most (newest first).
ROUND_HOURS = 2

#: Evidence a detector reads itself, with columns of its own and no verdict of its own: the
#: successful executions of each idempotency key per minute of their end, by a hash of the key
#: (`duplicate_side_effect` takes its candidate keys from them: `gather_keys`).
KEY_COUNTS = "duplicate_keys"

#: The evidence each engine stores: every question's, additive per minute on both; on DuckDB
#: the key counts too (ClickHouse's verdict reads its candidate keys from typed spans).
STORED = {"duckdb": (*QUESTIONS, KEY_COUNTS), "clickhouse": QUESTIONS}

#: The columns of the evidence that has columns of its own (the snippet `evidence_columns`
#: otherwise: a question's key, additive numbers, examples).
COLUMNS = {KEY_COUNTS: {"evidence_columns": "evidence_key_columns"}}

#: Where the key counts' plan ends: after every minute (a key's executions after the window
#: count too), a whole minute.
_LAST_NS = 2**62 // MINUTE_NS * MINUTE_NS

#: Dialects whose verdicts ask their evidence inline (a snippet), not from a temporary table.
INLINE = frozenset({"clickhouse"})

#: The questions whose evidence looks its spans' tasks up among the older tasks too (ghost work
#: may end long after its task began): they read the tasks that started from the range's
#: `reach_ns` when every span's task is there (`_tasks_from`), the few row groups the zone maps
#: leave, and all tasks only when one is not.
FAR_TASKS = frozenset({"work_after_cutoff"})

#: The widest raw range one ClickHouse statement reads for a question's evidence (INLINE):
#: wider raw rows are asked a range of this at a time (`_ask_inline`); a whole number of
#: minutes. A 10 h range of a 100M-span day ran out of memory in one statement (docs/scale-out.md).
RAW_RANGE_NS = 60 * MINUTE_NS

#: The start before every task (where FAR_TASKS read tasks from when one started long before).
_FIRST_NS = -(2**63)

#: Minutes one worker round computes at most (newest first, so live minutes stay fresh).
ROUND_MINUTES = 120


@dataclass(frozen=True)
class Plan:
    """Where a window's evidence comes from: the clean whole minutes of [roll_lo, roll_hi)
    from the stored evidence, the ranges `raw` (ragged edges, stale minutes) from raw rows."""

    start_ns: int
    end_ns: int
    roll_lo: int
    roll_hi: int
    raw: tuple[tuple[int, int], ...]
    #: the stored questions (with their thresholds): others take the raw path all through
    ready: frozenset[str] = frozenset()
    #: the whole hours of [roll_lo, roll_hi) whose hour-tier evidence is built and current
    hours: tuple[int, ...] = ()


class Round(NamedTuple):
    """What one refresh round stored, and what it left for the next (`pending` counts the
    dirty minutes left, `settling` those of them left because they changed too recently)."""

    minutes: int
    pending: int
    hours: int = 0
    hours_pending: int = 0
    settling: int = 0


def whole_minutes(start_ns: int, end_ns: int) -> tuple[int, int]:
    """The window a findings answer covers: [start_ns, end_ns) widened to whole minutes (from
    the start of the minute holding start_ns to the end of the one holding end_ns - 1), so it
    has no ragged edge to read from raw rows: every minute the worker stored comes from stored
    evidence (docs/findings.md, Windows)."""
    if start_ns >= end_ns:
        return start_ns, end_ns
    return start_ns // MINUTE_NS * MINUTE_NS, -(-end_ns // MINUTE_NS) * MINUTE_NS


def plan(store: ReadStore, start_ns: int, end_ns: int, stored: bool = True,
         hours: bool = True) -> Plan:
    """Split [start_ns, end_ns) into clean whole minutes and raw ranges (edges, stale minutes);
    with `hours`, list the whole hours the hour tier holds current.

    Run it in the snapshot the questions then run in (the detectors' transaction).
    """
    bounds = split(start_ns, end_ns, raw=not stored, hours=False)
    lo, hi = bounds["roll_lo"], bounds["roll_hi"]
    if lo >= hi:
        return Plan(start_ns, end_ns, lo, hi, ((start_ns, end_ns),) if start_ns < end_ns else ())
    stale = _runs(store.rows("findings/evidence_plan", bounds))
    raw = [(start_ns, lo)] + [(max(a, lo), min(b, hi)) for a, b in stale] + [(hi, end_ns)]
    ready = frozenset(r["question"] for r in store.rows("findings/evidence_questions"))
    raw = _merged(raw)
    return Plan(start_ns, end_ns, lo, hi, tuple(raw), ready,
                _built_hours(store, lo, hi, raw) if hours else ())


def _built_hours(store: ReadStore, lo: int, hi: int, raw: list[tuple[int, int]]
                 ) -> tuple[int, ...]:
    """The whole hours of [lo, hi) that the hour tier holds current: built (not marked stale)
    and with no minute read raw."""
    first, last = -(-lo // HOUR_NS) * HOUR_NS, hi // HOUR_NS * HOUR_NS
    if first >= last or not HOURLY[store.dialect]:
        return ()
    stale = {r["hour_ns"] for r in store.rows("findings/evidence_hours_stale",
                                               {"lo_ns": first, "hi_ns": last})}
    return tuple(h for h in range(first, last, HOUR_NS)
                 if h not in stale and not any(a < h + HOUR_NS and h < b for a, b in raw))


def _copy_stored(store: ReadStore, question: str, stored_as: str, where: Plan) -> int:
    """Copy a question's stored evidence of the plan's clean whole minutes into the verdicts'
    table: its built hours from the hour tier, every other minute from the minutes, one plain
    range a statement (a filter the scan cannot apply first decodes the lists of every row it
    reads). Returns the rows copied."""
    at_minutes = {"evidence_table": table(minute_table(question))}
    hours = list(where.hours) if hour_id(stored_as) in where.ready else []
    if not hours:
        return _inserted(store.rows("findings/evidence_stored", {
            "question": stored_as, "lo_ns": where.roll_lo, "hi_ns": where.roll_hi, "hours": []},
            **at_minutes))
    lo, hi = hours[0], hours[-1] + HOUR_NS
    gaps = sorted(set(range(lo, hi, HOUR_NS)) - set(hours))
    ranges = [(where.roll_lo, lo, []), (hi, where.roll_hi, [])]
    if gaps:  # hours within [lo, hi) not built: their minutes, but those of the built hours
        ranges.append((gaps[0], gaps[-1] + HOUR_NS, hours))
    copied = sum(_inserted(store.rows("findings/evidence_stored", {
        "question": stored_as, "lo_ns": a, "hi_ns": b, "hours": skip}, **at_minutes))
        for a, b, skip in ranges if a < b)
    return copied + _inserted(store.rows(
        "findings/evidence_stored_hours",
        {"hour_question": hour_id(stored_as), "lo_ns": lo, "hi_ns": hi, "hours": hours},
        evidence_table=table(hour_table(question))))


def hour_id(stored_as: str) -> str:
    """Name a question's hour-tier evidence (of the same query and thresholds)."""
    return f"{stored_as}/hour"


def question_id(store: ReadStore, question: str, thresholds: Mapping[str, Any]) -> str:
    """Name a question's stored evidence: the question, with a digest of its evidence query
    and of the thresholds that query depends on, so evidence of other thresholds, or of an
    earlier version of the query, is never mixed in (the worker computes it again)."""
    sql = question_sql(store.dialect, f"_evidence_{question}", {})
    used = bound(sql, {k: thresholds[k] for k in DEFAULT_THRESHOLDS if k in thresholds})
    digest = hashlib.sha1((sql + repr(sorted(used.items()))).encode()).hexdigest()[:12]
    return f"{question}@{digest}"


def ask(store: ReadStore, question: str, params: Mapping[str, Any]) -> list[dict]:
    """Answer a converted question over the window of `params["evidence_plan"]`."""
    where: Plan = params["evidence_plan"]
    if store.dialect in INLINE:
        return _ask_inline(store, question, params, where)
    if not _gather(store, question, params, where):
        return []  # no evidence, no finding (a test holds every verdict to it): skip asking
    return store.rows(f"findings/{question}", params, **VERDICT_SNIPPETS.get(question, {}))


def gather_keys(store: ReadStore, params: Mapping[str, Any], from_ns: int) -> None:
    """Gather the key counts (KEY_COUNTS) of every minute from the one holding `from_ns` on
    into `temp.evidence_rows`: the clean minutes' stored evidence, the rest from raw rows (all
    of them when the window's plan takes nothing from storage: one task's spans, or no
    evidence stored)."""
    where = plan(store, from_ns // MINUTE_NS * MINUTE_NS, _LAST_NS,
                 stored=bool(params["evidence_plan"].ready), hours=False)
    _gather(store, KEY_COUNTS, params, where)


def _gather(store: ReadStore, question: str, params: Mapping[str, Any], where: Plan) -> int:
    """Fill `temp.evidence_rows` with a question's evidence of the plan's window: the clean
    whole minutes from the stored evidence (when stored with these thresholds), the rest from
    raw rows. Returns the rows gathered."""
    stored_as = question_id(store, question, params)
    raw = where.raw
    store.rows("findings/evidence_reset", **COLUMNS.get(question, {}))
    copied = 0
    if stored_as not in where.ready:
        raw = ((where.start_ns, where.end_ns),)
    elif where.roll_lo < where.roll_hi:
        copied = _copy_stored(store, question, stored_as, where)
    for lo, hi in raw:
        copied += _inserted(store.rows("findings/evidence_raw",
                                       _question_range(store, question, params, lo, hi),
                                       evidence=f"evidence_{question}"))
    return copied


def _inserted(result: list[dict]) -> int:
    """The rows an insert statement added (DuckDB answers one row, `Count`)."""
    return sum(row["Count"] for row in result)


def _ask_inline(store: ReadStore, question: str, params: Mapping[str, Any], where: Plan
                ) -> list[dict]:
    """Answer a question whose verdict asks its evidence as a snippet: the stored minutes of
    the plan and the rest from raw rows (a question not stored, or stored with other
    thresholds: all of the window). Raw rows spanning up to RAW_RANGE_NS are one evidence
    query in the verdict's statement, keeping the minutes not stored (`_evidence_mixed.sql`);
    wider ones (a worker behind, minutes changed far apart, no evidence stored) are asked one
    range of at most RAW_RANGE_NS a statement and given to the verdict as rows
    (`_evidence_given.sql`), so no statement holds more than that range's spans."""
    verdict, snippets = f"findings/{question}", VERDICT_SNIPPETS.get(question, {})
    stored_as = (question_id(store, question, params)
                 if question in STORED[store.dialect] else None)
    if stored_as in where.ready and where.roll_lo < where.roll_hi:
        raw = where.raw
        stored = {"question": stored_as, "roll_lo": where.roll_lo, "roll_hi": where.roll_hi,
                  "raw_minutes": [m for lo, hi in raw
                                  for m in range(max(lo, where.roll_lo), min(hi, where.roll_hi),
                                                 MINUTE_NS)]}
    else:
        raw = ((where.start_ns, where.end_ns),) if where.start_ns < where.end_ns else ()
        stored = {"question": "", "roll_lo": 0, "roll_hi": 0, "raw_minutes": []}
    if not raw:
        if not stored["question"]:  # an empty window
            return store.rows(verdict, _range(params, where.start_ns, where.end_ns), **snippets)
        return store.rows(verdict, {**params, **stored},
                          **{f"evidence_{question}": "evidence_stored"}, **snippets)
    lo, hi = raw[0][0], raw[-1][1]
    if hi - lo <= RAW_RANGE_NS:
        if not stored["question"]:
            return store.rows(verdict, _range(params, lo, hi), **snippets)
        return store.rows(verdict, {**_question_range(store, question, params, lo, hi), **stored},
                          **{f"evidence_{question}": "evidence_mixed",
                             "evidence_source": f"evidence_{question}"}, **snippets)
    lines = [row["line"] for a, b in _cut(raw, RAW_RANGE_NS) for row in store.rows(
        "findings/evidence_raw", _question_range(store, question, params, a, b),
        evidence=f"evidence_{question}")]
    return store.rows(verdict, {**params, **stored, "raw_evidence": "\n".join(lines)},
                      **{f"evidence_{question}": "evidence_given"}, **snippets)


def _cut(ranges: tuple[tuple[int, int], ...], most: int) -> list[tuple[int, int]]:
    """Cut the ranges at the multiples of `most` (a whole number of minutes): pieces no longer
    than `most`, no minute in two (evidence of minutes adds up to that of their range)."""
    pieces = []
    for lo, hi in ranges:
        cuts = range((lo // most + 1) * most, hi, most)
        pieces += list(zip([lo, *cuts], [*cuts, hi]))
    return pieces


def _range(params: Mapping[str, Any], lo: int, hi: int, grain_ns: int = MINUTE_NS
           ) -> dict[str, Any]:
    # start_ns/end_ns: the rows read (the snippets' window); lo_ns/hi_ns: the evidence kept;
    # reach_ns, reach_end_ns: where the parents, roots, tasks and siblings of its spans may start;
    # grain_ns: the period a row of evidence holds (a minute, or an hour for the hour tier);
    # clock_slack_ns: how much earlier than a sibling's end a span may seem to start and still
    # have followed it (attempts.CLOCK_SLACK_NS)
    return {**params, "lo_ns": lo, "hi_ns": hi, "start_ns": lo - SLACK_NS,
            "end_ns": hi + SLACK_NS, "reach_ns": lo - SPAN_SLACK_NS,
            "reach_end_ns": hi + SPAN_SLACK_NS, "span_slack_ns": SPAN_SLACK_NS,
            "clock_slack_ns": CLOCK_SLACK_NS, "grain_ns": grain_ns}


def _question_range(store: ReadStore, question: str, params: Mapping[str, Any], lo: int,
                    hi: int, grain_ns: int = MINUTE_NS) -> dict[str, Any]:
    """The parameters of one question's evidence of [lo, hi) (`_range`, and for FAR_TASKS
    where their tasks start)."""
    ranged = _range(params, lo, hi, grain_ns)
    if question in FAR_TASKS:
        ranged["tasks_from_ns"] = _tasks_from(store, ranged)
    return ranged


def _tasks_from(store: ReadStore, ranged: Mapping[str, Any]) -> int:
    """Where the tasks of the spans that ended in the range start: from its reach_ns when all
    of them are there (nearly always: a task's spans start within 30 minutes of it), else
    from the first task."""
    (row,) = store.rows("findings/evidence_tasks_near", ranged)
    return ranged["reach_ns"] if row["near"] else _FIRST_NS


def refresh(store: ReadStore, thresholds: Mapping[str, Any],
            budget_minutes: int = ROUND_MINUTES, now_ns: int | None = None,
            quiet_ns: int = 0) -> Round:
    """Store the evidence of (up to `budget_minutes`) dirty minutes that no mark has changed
    within `quiet_ns` before `now_ns` (default: the clock; `quiet_ns` 0: every dirty minute),
    then build (up to ROUND_HOURS) hours settled by then that need it; say how many of each it
    did and left.

    A minute still changing is left for a later round: a request reads a dirty minute from raw
    rows, so its evidence stored now would be read by nobody once the next span marks it again,
    and a live minute would be computed again every round (docs/findings.md, The worker waits
    for a minute to settle).

    One transaction on DuckDB: the dirty ranges it saw are replaced by those it left, so ranges
    the writer adds meanwhile (outside its snapshot) stay dirty for the next round.
    The writes go in the order that keeps a crash safe where there is no transaction
    (ClickHouse): a minute's evidence before the dirty marks it saw are deleted, the marks of
    the minutes it left before those, each write at a newer `version` than the last.
    """
    version = time.time_ns()  # one refresher (docs/scale-out.md): newer than its last round
    now_ns = version if now_ns is None else now_ns
    store.rows("findings/evidence_begin")
    try:
        ids = {q: question_id(store, q, thresholds) for q in STORED[store.dialect]}
        hourly = {q: ids[q] for q in HOURLY[store.dialect]}
        _register(store, ids, hourly, version)
        marks = store.rows("findings/evidence_dirty")
        changing = _runs([m for m in marks
                          if quiet_ns and (m["marked_ns"] or 0) > now_ns - quiet_ns])
        done, left = _take_newest(_without(_runs(marks), changing), budget_minutes)
        for lo, hi in done:
            for question, stored_as in ids.items():
                _store(store, question, stored_as, thresholds, (lo, hi), version)
            if hourly:
                store.rows("findings/evidence_hours_mark", {"lo_ns": lo, "hi_ns": hi})
        if done or len(marks) > len(left) + len(changing):  # else the marks are as compact
            for lo, hi in left + changing:
                store.rows("findings/evidence_redirty",
                           {"lo_ns": lo, "hi_ns": hi - MINUTE_NS, "version": version,
                            "marked_ns": _newest_mark(marks, lo, hi)})
            store.rows("findings/evidence_undirty", {"seen": [r["id"] for r in marks]})
        built, due = _build_hours(store, hourly, thresholds, version, now_ns - HOUR_SETTLE_NS)
        store.rows("findings/evidence_commit")
    except BaseException:
        store.rows("findings/evidence_rollback")
        raise
    settling = _minutes(changing)
    return Round(_minutes(done), _minutes(left) + settling, built, due - built, settling)


def _build_hours(store: ReadStore, hourly: Mapping[str, str], thresholds: Mapping[str, Any],
                 version: int, settled_ns: int) -> tuple[int, int]:
    """Build the hour tier of the newest ROUND_HOURS stale hours that ended by `settled_ns`
    and have no dirty minute; return how many it built, and how many were due."""
    if not hourly:
        return 0, 0
    due = [r["hour_ns"] for r in store.rows("findings/evidence_hours_due",
                                             {"settled_ns": settled_ns, "hour_ns": HOUR_NS})]
    for hour in due[:ROUND_HOURS]:
        for question, stored_as in hourly.items():
            _store(store, question, hour_id(stored_as), thresholds, (hour, hour + HOUR_NS),
                   version, hour=True)
        store.rows("findings/evidence_hours_built", {"hour_ns": hour})
    return min(len(due), ROUND_HOURS), len(due)


def _store(store: ReadStore, question: str, stored_as: str, thresholds: Mapping[str, Any],
           period: tuple[int, int], version: int, hour: bool = False) -> None:
    """Replace a question's stored evidence of the minutes of [lo, hi) (or, with `hour`, the
    hour tier's hour) with its evidence query's; `version`: the round's (ClickHouse's deleted
    rows at it, the new ones after)."""
    lo, hi = period
    grain_ns = HOUR_NS if hour else MINUTE_NS
    at = {"evidence_table": table(hour_table(question) if hour else minute_table(question))}
    store.rows("findings/evidence_clear",
               {"lo_ns": lo, "hi_ns": hi, "version": version, "question": stored_as}, **at)
    store.rows("findings/evidence_store",
               {**_question_range(store, question, thresholds, lo, hi, grain_ns),
                "question": stored_as, "version": version},
               evidence=f"evidence_{question}", **at)


def _minutes(runs: list[tuple[int, int]]) -> int:
    return sum((hi - lo) // MINUTE_NS for lo, hi in runs)


def _register(store: ReadStore, ids: Mapping[str, str], hourly: Mapping[str, str],
              version: int) -> None:
    """When the questions to store changed (a new one, other thresholds, a store that had
    none), create their tables, forget their other versions' evidence and compute every
    minute again."""
    tables = [(q, stored_as, minute_table(q)) for q, stored_as in ids.items()]
    tables += [(q, hour_id(stored_as), hour_table(q)) for q, stored_as in hourly.items()]
    wanted = sorted(stored_as for _, stored_as, _ in tables)
    if sorted(r["question"] for r in store.rows("findings/evidence_questions")) == wanted:
        return
    at = {"questions": wanted, "version": version}
    store.rows("findings/evidence_dirty_all", at)  # first: a crash after it only recomputes
    for question, stored_as, name in tables:
        store.rows("findings/evidence_create", evidence_table=table(name),
                   **COLUMNS.get(question, {}))
        store.rows("findings/evidence_forget", {**at, "question": stored_as, "name": question},
                   evidence_table=table(name))
    store.rows("findings/evidence_unregister")
    store.rows("findings/evidence_register", at)


def _runs(rows: list[dict]) -> list[tuple[int, int]]:
    """Dirty rows (inclusive minute bounds) as disjoint half-open runs, oldest first."""
    return _merged([(r["lo_ns"], r["hi_ns"] + MINUTE_NS) for r in rows])


def _without(runs: list[tuple[int, int]], cut: list[tuple[int, int]]
             ) -> list[tuple[int, int]]:
    """The minutes of half-open `runs` outside the half-open `cut`, as runs (both sorted)."""
    kept: list[tuple[int, int]] = []
    for lo, hi in runs:
        for cut_lo, cut_hi in cut:
            if cut_hi <= lo or cut_lo >= hi:
                continue
            if cut_lo > lo:
                kept.append((lo, cut_lo))
            lo = max(lo, cut_hi)
        if lo < hi:
            kept.append((lo, hi))
    return kept


def _newest_mark(marks: list[dict], lo: int, hi: int) -> int:
    """When the newest of the marks reaching the minutes of [lo, hi) was made (0: unknown)."""
    return max((m["marked_ns"] or 0 for m in marks
                if m["lo_ns"] < hi and m["hi_ns"] + MINUTE_NS > lo), default=0)


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join overlapping or touching half-open ranges (empty ones dropped), in order."""
    runs: list[tuple[int, int]] = []
    for lo, hi in sorted(r for r in ranges if r[0] < r[1]):
        if runs and lo <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], hi))
        else:
            runs.append((lo, hi))
    return runs


def _take_newest(runs: list[tuple[int, int]], budget: int
                 ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Split runs into those done this round (newest minutes first, `budget` in all) and left."""
    done: list[tuple[int, int]] = []
    left: list[tuple[int, int]] = []
    for lo, hi in reversed(runs):
        take = min((hi - lo) // MINUTE_NS, budget)
        budget -= take
        if take:
            done.append((hi - take * MINUTE_NS, hi))
        if hi - take * MINUTE_NS > lo:
            left.append((lo, hi - take * MINUTE_NS))
    return done, left


def expire(store: ReadStore, before_ns: int) -> None:
    """Retention on DuckDB (ClickHouse's evidence expires by TTL): forget the stored evidence
    of the minutes before `before_ns`, and of the hours none of whose minutes is kept. Raw
    rows' clock: a finding names tasks and spans, so it lives as long as they do."""
    periods = [(minute_table(q), before_ns) for q in STORED[store.dialect]] + \
        [(hour_table(q), before_ns // HOUR_NS * HOUR_NS) for q in HOURLY[store.dialect]]
    for name, before in periods:
        store.rows("findings/evidence_clear", {"lo_ns": 0, "hi_ns": before},
                   evidence_table=table(name))


class EvidenceWorker:
    """Keeps the stored evidence current: a refresh round, then a pause of `interval` s; a
    minute is stored once it went one interval without changing. With `retention_s` it also
    forgets the evidence older than that, every `retention_interval_s` (`expire`)."""

    def __init__(self, stores: Callable[[], ReadStore], thresholds: Mapping[str, Any],
                 interval: float, retention_s: float | None = None,
                 retention_interval_s: float = 3600.0) -> None:
        self._stores = stores
        self._thresholds = dict(thresholds)
        self._interval = interval
        self._retention = retention_s, retention_interval_s
        self._next_expiry = time.monotonic()  # due after the first round (tables registered)
        self._stop = threading.Event()
        self._store: ReadStore | None = None
        self.rounds = 0  # rounds that stored some minutes or built some hours
        self.minutes = 0  # minutes stored in all
        self.hours = 0  # hours of the hour tier built in all
        self.pending: int | None = None  # dirty minutes the last round left (None: no round yet)
        self.settling: int | None = None  # of which, still changing
        self.hours_pending: int | None = None  # settled hours it left to build
        self._thread = threading.Thread(target=self._run, name="agentsla-evidence", daemon=True)

    def start(self) -> None:
        """Start the thread (nothing when the interval is 0)."""
        if self._interval > 0:
            self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the running round (interrupted), and wait for the thread."""
        self._stop.set()
        if self._store is not None:
            self._store.interrupt()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def health(self) -> dict[str, Any]:
        """The worker's counters for /api/v1/health."""
        return {"running": self._thread.is_alive(), "rounds": self.rounds,
                "minutes_stored": self.minutes, "minutes_pending": self.pending,
                "minutes_settling": self.settling,
                "hours_built": self.hours, "hours_pending": self.hours_pending}

    def _run(self) -> None:
        self._store = self._stores()
        try:
            while not self._stop.is_set():
                try:
                    did = refresh(self._store, self._thresholds,
                                  quiet_ns=int(self._interval * 1e9))
                    self.pending, self.hours_pending = did.pending, did.hours_pending
                    self.settling = did.settling
                    self.rounds += bool(did.minutes or did.hours)
                    self.minutes, self.hours = self.minutes + did.minutes, self.hours + did.hours
                    more = did.pending > did.settling or did.hours_pending > 0
                    self._expire()
                except Exception as exc:  # the minutes stay dirty: requests read them raw
                    if self._stop.is_set():
                        break
                    log.error("findings evidence round failed (retrying): %s", exc)
                    more = False
                if not more:
                    self._stop.wait(self._interval)
        finally:
            self._store.close()

    def _expire(self) -> None:
        retention_s, every_s = self._retention
        if retention_s is not None and time.monotonic() >= self._next_expiry:
            expire(self._store, time.time_ns() - int(retention_s * 1e9))
            self._next_expiry = time.monotonic() + every_s
