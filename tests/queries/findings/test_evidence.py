"""Findings from stored per-minute evidence equal the findings from raw spans (issue #15).

The store holds every detector shape of test_detectors.py, each in an hour of its own; the
evidence worker's rounds (queries.findings.evidence.refresh) store their minutes' evidence, and
then every window, aligned or not, must give the raw path's findings exactly: types, rules,
hops, evidence numbers, examples. A span arriving later makes its task's minutes dirty until the
next round, and the answer stays exact meanwhile.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from serverproc import ServerProcess
from shapes import Trace
from spanfactory import BASE_NS, make_span
from test_detectors import CASES, EVERYTHING, SLOT_NS, _tagged

from agentsla.collector.store.database import cursor, open_store
from agentsla.collector.store.evidence import (HOUR_TABLES, MINUTE_TABLES, evidence_tables,
                                               minute_table)
from agentsla.collector.store.schema import migrate
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from agentsla.queries.engines.duckdb import DuckDBStore
from agentsla.queries.findings import _detect, evidence, find_findings, resolve_thresholds
from agentsla.simulator.runner import run

TH = resolve_thresholds({})
NS = 10**9
MINUTE_NS = 60 * NS


def _store(rows: list[dict]) -> tuple[duckdb.DuckDBPyConnection, TaskWriter, DuckDBStore]:
    con = duckdb.connect(config={"threads": "1"})
    migrate(con)
    writer = TaskWriter(con, load_config(environ={}).tasks)
    writer.write([dict(r) for r in rows], now_ns=max(r["end_ns"] for r in rows) + 1)
    return con, writer, DuckDBStore(cursor(con))


def _refresh_all(store: DuckDBStore, thresholds=TH) -> int:
    """Worker rounds until no minute is dirty and every settled hour is built; return the
    minutes stored."""
    done = 0
    while any(did := evidence.refresh(store, thresholds)):
        done += did.minutes
    return done


def _both(store: DuckDBStore, start_ns: int, end_ns: int,
          kind: str | None = None) -> tuple[list[dict], list[dict]]:
    return (_detect(store, start_ns, end_ns, kind, TH, stored=False),
            _detect(store, start_ns, end_ns, kind, TH, stored=True))


def _stored_ns(store: DuckDBStore, start_ns: int, end_ns: int) -> int:
    """How much of the window the stored path takes from the stored evidence."""
    store.rows("findings/evidence_begin")
    try:
        where = evidence.plan(store, start_ns, end_ns)
    finally:
        store.rows("findings/evidence_commit")
    return end_ns - start_ns - sum(b - a for a, b in where.raw)


@pytest.fixture(scope="module")
def shapes():
    rows = [r for i, (shape, _) in enumerate(CASES) for r in _tagged(shape(), i)]
    con, writer, store = _store(rows)
    yield con, store
    con.close()


def test_worker_rounds_store_every_minute_with_spans(shapes):
    con, store = shapes
    assert _refresh_all(store) > 0
    assert con.execute("select count(*) from evidence_dirty").fetchone() == (0,)
    assert {q.split("@")[0] for q in _stored_ids(con)} == set(evidence.STORED["duckdb"])
    # each question's rows in its own table
    for table in evidence_tables(con, MINUTE_TABLES):
        assert {q.split("@")[0] for q in _stored_ids(con, [table])} == {
            table.removeprefix(MINUTE_TABLES)}


def _stored_ids(con, tables: list[str] | None = None) -> set[str]:
    """The stored question ids of the per-minute evidence tables (all, or `tables`)."""
    return {q for table in (tables or evidence_tables(con, MINUTE_TABLES))
            for (q,) in con.execute(f"select distinct question from {table}").fetchall()}


@pytest.mark.parametrize("offset_s,length_s", [
    (0, None),                # everything
    (0, 3600),                # aligned hours
    (37.5, 3600 * 5 + 13.25),  # ragged edges
    (3600 * 9 + 59.9, 600.2),
])
def test_stored_evidence_gives_the_raw_findings(shapes, offset_s, length_s):
    con, store = shapes
    _refresh_all(store)
    if length_s is None:
        start, end = EVERYTHING
    else:
        start = BASE_NS + int(offset_s * 1e9)
        end = start + int(length_s * 1e9)
    raw, stored = _both(store, start, end)
    assert stored == raw
    # the stored path read every whole minute from the stored evidence
    assert _stored_ns(store, start, end) == (end // MINUTE_NS - -(-start // MINUTE_NS)) * MINUTE_NS


class _CountingStore:
    """A read store that counts the statements it runs, by question."""

    dialect = "duckdb"

    def __init__(self, inner: DuckDBStore) -> None:
        self._inner, self.asked = inner, []

    def rows(self, question, params=None, **fragments):
        self.asked.append(question)
        return self._inner.rows(question, params, **fragments)


def test_find_findings_widens_a_ragged_window_to_whole_minutes_read_from_storage(shapes):
    # a ragged window (37.5 s past BASE_NS, itself 20 s into its minute) answered by
    # find_findings: the whole minutes around it, every one from the stored evidence (no raw
    # evidence query once the worker is current), with the raw path's findings of those minutes
    con, store = shapes
    _refresh_all(store)
    start, end = BASE_NS + 37_500_000_000, BASE_NS + int((3600 * 5 + 50.75) * 1e9)
    counting = _CountingStore(store)
    found = find_findings(counting, start, end, None, {})
    lo, hi = start // MINUTE_NS * MINUTE_NS, -(-end // MINUTE_NS) * MINUTE_NS
    assert (lo, hi) == (BASE_NS - 20 * NS, BASE_NS + (3600 * 5 + 100) * NS)
    assert "findings/evidence_raw" not in counting.asked
    # its four whole hours from the hour tier, the minutes before and after them from the
    # minutes; the questions the tier does not hold, every minute from the minutes
    hourly = len(evidence.HOURLY["duckdb"])
    assert counting.asked.count("findings/evidence_stored_hours") == hourly
    assert counting.asked.count("findings/evidence_stored") == (
        2 * hourly + len(evidence.STORED["duckdb"]) - hourly)
    assert found == _detect(store, lo, hi, None, TH, stored=False) and found


def test_each_shape_hour_alone_gives_the_raw_findings(shapes):
    # the types with converted rules (the others read raw rows both ways)
    con, store = shapes
    _refresh_all(store)
    for i, (_, expected) in enumerate(CASES):
        start = BASE_NS + i * SLOT_NS - 30 * 10**9
        raw, stored = _both(store, start, start + SLOT_NS, "retry_amplification")
        assert stored == raw, CASES[i][0].__name__


def test_other_thresholds_than_the_stored_evidence_s_read_raw_rows(shapes):
    # Idle gaps' evidence depends on wait_min_idle_ms: asked with another value, the stored
    # evidence (of the default) is not used, and the answer is that of the raw rows.
    con, store = shapes
    _refresh_all(store)
    other = resolve_thresholds({"wait_min_idle_ms": 3_600_000})  # no parent is that idle
    raw = _detect(store, *EVERYTHING, "wait_amplification", other, stored=False)
    assert _detect(store, *EVERYTHING, "wait_amplification", other, stored=True) == raw
    assert raw != _detect(store, *EVERYTHING, "wait_amplification", TH, stored=True)
    # a worker with the other thresholds stores their evidence instead, for every minute
    assert _refresh_all(store, other) > 0
    assert _detect(store, *EVERYTHING, "wait_amplification", other, stored=True) == raw
    _refresh_all(store)  # back to the defaults for the module's other tests


def test_evidence_of_an_earlier_version_of_a_query_is_computed_again(shapes):
    # A question's stored name holds a digest of its evidence query: evidence stored by another
    # version of the query (here renamed as if it were) is forgotten, every minute computed again.
    con, store = shapes
    _refresh_all(store)
    (current,) = con.execute("select question from evidence_questions "
                             "where question like 'attempts_per_call@%'").fetchone()
    table = minute_table("attempts_per_call")
    for name in (table, "evidence_questions"):
        con.execute(f"update {name} set question = 'attempts_per_call@0123456789ab' "
                    "where question = ?", [current])
    assert _refresh_all(store) > 0
    assert con.execute(f"select count(*) from {table} where question like "
                       "'attempts_per_call@0123456789ab'").fetchone() == (0,)
    assert con.execute(f"select count(*) from {table} where question = ?",
                       [current]).fetchone()[0] > 0
    raw, stored = _both(store, *EVERYTHING, "retry_amplification")
    assert stored == raw and raw


def _timed_out_call(at_ms: float, attempts: int) -> Trace:
    t = Trace(at_ms=at_ms, root_end_ms=100_000)
    for attempt in range(attempts):
        t.child(t.root, "tool", "search", 1_000 + attempt * 31_000, 31_000 + attempt * 31_000,
                hop_timeout_ms=30_000, retry_attempt=attempt, retry_max=3,
                **({"error_type": "timeout", "status_code": "error"} if attempt < attempts - 1
                   else {}))
    return t


def test_a_late_attempt_is_found_before_and_after_the_next_round():
    # Five calls retried once after a timeout, 2 minutes apart; then the third attempt of the
    # first call arrives, after its evidence was stored: its minute (the call's end moves by
    # 31 s) is dirty and read raw until the next round stores it again.
    traces = [_timed_out_call(i * 120_000, 2) for i in range(5)]
    con, writer, store = _store([r for t in traces for r in t.rows])
    _refresh_all(store)
    start, end = BASE_NS - MINUTE_NS, BASE_NS + 20 * MINUTE_NS
    before = _detect(store, start, end, "retry_amplification", TH)
    assert [(f["rule"], f["evidence"]["retried_timeouts"]) for f in before] == [
        ("retried_timeouts", 5)]
    late = _timed_out_call(0, 3)
    first = traces[0]
    third = {**late.rows[-1], "trace_id": first.trace_id,
             "parent_span_id": first.root["span_id"], "span_id": "f" * 16}
    # the second attempt now timed out too: the late third attempt follows it
    writer.write([third], now_ns=third["end_ns"] + 1)
    assert con.execute("select count(*) from evidence_dirty").fetchone()[0] > 0
    raw, stored = _both(store, start, end)
    assert stored == raw
    _refresh_all(store)
    assert _both(store, start, end)[1] == raw
    con.close()


def _charged(at_ms: float, key: str) -> Trace:
    t = Trace(at_ms=at_ms, root_end_ms=2_000)
    t.child(t.root, "tool", "charge_card", 10, 900, idempotency_key=key)
    return t


def _duplicates(store: DuckDBStore, start: int, end: int, thresholds
                ) -> tuple[list[dict], list[str]]:
    """The stored path's duplicate_side_effect findings, checked against the raw path's, and
    the statements it asked."""
    counting = _CountingStore(store)
    stored = _detect(counting, start, end, "duplicate_side_effect", thresholds, stored=True)
    assert stored == _detect(store, start, end, "duplicate_side_effect", thresholds,
                             stored=False)
    return stored, counting.asked


@pytest.mark.parametrize("lookback_s,found", [
    (86_400, 1),           # the first charge, 20 h before the window, is within the lookback
    (20 * 3600 - 10, 1),   # the lookback starts 10 s before the first charge's end
    (20 * 3600 - 30, 0),   # ... 9.1 s after it, in the same minute: a candidate, no duplicate
])
def test_a_duplicate_reaching_into_the_lookback_is_found_from_the_stored_key_counts(
        lookback_s, found):
    # One order charged twice, 20 h apart. The window is the hour of the second charge; its
    # candidate keys come from the key counts of the day before, stored by the worker (no raw
    # evidence read), whose minutes reach a candidate past the lookback's exact start: the
    # executions are counted from raw rows, and the answer is the raw path's. Then a late span
    # of the first task makes its minutes dirty: read raw until the next round, still exact.
    first, second = _charged(0, "order-9"), _charged(20 * 3_600_000, "order-9")
    con, writer, store = _store(first.rows + second.rows)
    _refresh_all(store)
    thresholds = {**TH, "duplicate_lookback_s": lookback_s}
    start = BASE_NS - 20 * NS + 20 * 3600 * NS  # the minute of the second charge
    end = start + 3600 * NS
    found_now, asked = _duplicates(store, start, end, thresholds)
    assert len(found_now) == found
    assert "findings/evidence_raw" not in asked and "findings/evidence_stored" in asked
    assert "findings/duplicate_executions" in asked  # a candidate key in each case
    late = first.child(first.root, "other", "audit", 950, 1_500)
    writer.write([late], now_ns=late["end_ns"] + 1)
    found_now, asked = _duplicates(store, start, end, thresholds)
    assert len(found_now) == found
    assert "findings/evidence_raw" in asked
    con.close()


def _marks(con: duckdb.DuckDBPyConnection) -> list[tuple[int, int, int | None]]:
    return con.execute("select lo_ns, hi_ns, marked_ns from evidence_dirty order by 1").fetchall()


def test_a_minute_still_changing_is_stored_once_it_settles():
    # Five calls retried once after a timeout, 2 minutes apart, then the late third attempt of
    # the first: a round with a quiet period that the late mark is within stores the other
    # calls' minutes and leaves the first call's (still changing) dirty, under the late mark's
    # time; they are stored once that time is a quiet period old. The answer is exact throughout.
    traces = [_timed_out_call(i * 120_000, 2) for i in range(5)]
    con, writer, store = _store([r for t in traces for r in t.rows])
    ((_, _, first_mark),) = _marks(con)  # the calls' minutes are one run
    late = _timed_out_call(0, 3)
    third = {**late.rows[-1], "trace_id": traces[0].trace_id,
             "parent_span_id": traces[0].root["span_id"], "span_id": "f" * 16}
    writer.write([third], now_ns=third["end_ns"] + 1)
    late_lo, late_hi, late_mark = max(_marks(con), key=lambda mark: mark[2])
    assert late_mark > first_mark
    quiet = late_mark - first_mark
    start, end = BASE_NS - MINUTE_NS, BASE_NS + 20 * MINUTE_NS

    did = evidence.refresh(store, TH, now_ns=late_mark, quiet_ns=quiet)
    changing = (late_hi - late_lo) // MINUTE_NS + 1
    assert did.settling == changing and did.pending == changing
    assert did.minutes > 0
    assert _marks(con) == [(late_lo, late_hi, late_mark)]  # kept its time, not the round's
    settling = _stored_ns(store, start, end)
    raw, stored = _both(store, start, end)
    assert stored == raw

    did = evidence.refresh(store, TH, now_ns=late_mark + quiet - 1, quiet_ns=quiet)
    assert (did.minutes, did.settling) == (0, changing)
    did = evidence.refresh(store, TH, now_ns=late_mark + quiet, quiet_ns=quiet)
    assert (did.minutes, did.pending, did.settling) == (changing, 0, 0)
    assert _marks(con) == [] and _stored_ns(store, start, end) == settling + changing * MINUTE_NS
    assert _both(store, start, end) == (raw, raw)
    con.close()


def test_marks_made_before_they_carried_their_time_count_as_settled():
    # migration 13 adds marked_ns as null to the marks already there: they are stored at once
    con, _, store = _store(_timed_out_call(0, 2).rows)
    con.execute("update evidence_dirty set marked_ns = null")
    did = evidence.refresh(store, TH, quiet_ns=3600 * NS)
    assert did.minutes > 0 and (did.pending, did.settling) == (0, 0)
    con.close()


def test_ghost_work_ending_long_after_its_task_began_is_found_in_every_window():
    # A crawler left running 45 minutes after its task gave up (root timed out at 10 s): its
    # task started long before the 30 minutes a minute's evidence reads tasks from, so the
    # evidence of the minute (and of a ragged edge) holding its end looks among all tasks;
    # a model call that ran 15 s past its task's root, 40 minutes in, finds its task nearby.
    far = Trace(root_end_ms=10_000, error_type="timeout", status_code="error")
    far.child(far.root, "tool", "crawler", 100, 45 * 60_000 + 7_000, hop_timeout_ms=3_600_000)
    near = Trace(at_ms=40 * 60_000, root_end_ms=10_000, error_type="timeout",
                 status_code="error")
    near.child(near.root, "model", "gpt-4o", 100, 25_000, hop_timeout_ms=30_000)
    con, writer, store = _store(far.rows + near.rows)
    _refresh_all(store)
    crawler_end = BASE_NS + (45 * 60 + 7) * NS
    edge = evidence._range(TH, crawler_end - NS, crawler_end + NS)
    assert evidence._tasks_from(store, edge) < BASE_NS  # its task is not within reach
    windows = {(BASE_NS - MINUTE_NS, BASE_NS + 2 * 3600 * NS): {"crawler", "gpt-4o"},
               (BASE_NS + 44 * MINUTE_NS + NS // 2, BASE_NS + 46 * MINUTE_NS + NS // 2):
                   {"crawler"},
               (crawler_end - NS // 2, BASE_NS + 47 * MINUTE_NS + 3 * NS): {"crawler"},
               (BASE_NS + 40 * MINUTE_NS + 20 * NS, BASE_NS + 44 * MINUTE_NS): {"gpt-4o"}}
    for (start, end), hops in windows.items():
        raw, stored = _both(store, start, end, "ghost_work")
        assert stored == raw, (start - BASE_NS, end - BASE_NS)
        assert {f["hop"]["name"] for f in stored} == hops
        for f in stored:  # seconds after the cutoff: the root's end at 10 s
            assert f["evidence"]["seconds_after"] == {"crawler": 45 * 60 + 7 - 10,
                                                      "gpt-4o": 15}[f["hop"]["name"]]
    con.close()


def _retry_traffic(rng: random.Random, tasks: int) -> list[dict]:
    """Tasks over ~20 minutes whose calls retry (timeouts, 429s), numbered or not, some
    declaring a task id, some losing their root; calls of up to 3 minutes straddle minutes."""
    spans = []
    for n in range(tasks):
        trace = f"{n:032x}"
        t0 = rng.uniform(0, 1200_000)  # ms after BASE_NS
        root = make_span(trace_id=trace, span_id=f"{n:08x}00000001", hop_kind="gateway",
                         start_ms=t0, end_ms=t0 + rng.uniform(1000, 200_000),
                         task_type=rng.choice(("chat", "search")))
        root["task_id"] = f"task-{n}" if rng.random() < 0.5 else None
        if rng.random() < 0.9:  # the others' roots never arrive: declared lost
            spans.append(root)
        for call in range(rng.randint(1, 3)):
            start, numbered = t0 + call * 70_000 + rng.uniform(0, 5000), rng.random() < 0.6
            hop = rng.choice((("model", "gpt-4o"), ("tool", "search")))
            attempts = rng.choice((1, 1, 2, 3))
            for attempt in range(attempts):
                end = start + rng.uniform(100, 60_000)
                error = (rng.choice(("timeout", "rate_limited")) if attempt < attempts - 1
                         else rng.choice(("timeout", None, None)))
                spans.append(make_span(
                    trace_id=trace, span_id=f"{n:08x}{call:04x}{attempt:04x}", parent=root,
                    hop_kind=hop[0], hop_name=hop[1], start_ms=start, end_ms=end,
                    hop_timeout_ms=30_000.0, retry_attempt=attempt if numbered else None,
                    error_type=error, status_code="error" if error else "unset"))
                start = end + rng.uniform(0, 2000)
    return spans


def test_out_of_order_traffic_with_rounds_between_batches(tmp_path: Path):
    # Late spans, roots after children, lost tasks found again, traces moving to their declared
    # task: after every few batches a worker round stores only some dirty minutes; the stored
    # path must give the raw path's findings at every point.
    rng = random.Random(15)
    con = open_store(tmp_path / "db.duckdb")
    try:
        writer = TaskWriter(con, replace(load_config().tasks, default_budget=60.0, lost_grace=30.0))
        store = DuckDBStore(cursor(con))
        spans = _retry_traffic(rng, 300)
        rng.shuffle(spans)
        now = BASE_NS
        windows = [(BASE_NS - 600 * NS, BASE_NS + 7200 * NS), (BASE_NS + 7 * NS, BASE_NS + 1000 * NS),
                   (BASE_NS + 40 * NS, BASE_NS + 340 * NS)]
        for n, first in enumerate(range(0, len(spans), 37)):
            now += 20 * NS
            writer.write(spans[first:first + 37], now_ns=now)
            if n % 3 == 0:
                writer.sweep_lost(now_ns=now)
            evidence.refresh(store, TH, budget_minutes=4)  # leaves minutes dirty
            for start, end in windows[n % 3:n % 3 + 1]:
                for kind in ("retry_amplification", "rate_limit_masking"):
                    raw, stored = _both(store, start, end, kind)
                    assert stored == raw, (n, kind, start, end)
        assert _refresh_all(store) > 0
        for start, end in windows:
            raw, stored = _both(store, start, end)
            assert stored == raw and _stored_ns(store, start, end) > 0
        kinds = {f["rule"] for f in raw}
        # the traffic exercises these
        assert {"attempts_per_call", "retried_timeouts", "absorbed_429s"} <= kinds
    finally:
        con.close()


def test_serve_stores_evidence_of_simulator_traffic(tmp_path: Path):
    # The worker thread of `agentsla serve` stores the evidence of what arrives; after the
    # server stopped, the stored path gives the raw path's findings over the file it left.
    server = ServerProcess(tmp_path / "data", env={"AGENTSLA_EVIDENCE_INTERVAL": "0.2"}).start()
    try:
        began = time.time_ns()
        for seed, scenario in enumerate(("baseline", "rate_limit_storm", "model_long_tail")):
            run(scenario, seed=seed, tasks=30, endpoint=server.otlp_url, speed=0)
        deadline = time.monotonic() + 60
        while server.api("/api/v1/health").json()["evidence"]["minutes_stored"] == 0:
            assert time.monotonic() < deadline, "the evidence worker stored nothing"
            time.sleep(0.2)
    finally:
        assert server.stop() == 0
    con = open_store(tmp_path / "data" / "agentsla.duckdb")
    try:
        # what the worker stored before the server stopped
        stored = {q.split("@")[0] for q in _stored_ids(con)}
        assert stored and stored <= set(evidence.STORED["duckdb"])
        store = DuckDBStore(cursor(con))
        _refresh_all(store)
        end = time.time_ns() + 3600 * NS
        for start, stop in ((began - 600 * NS, end), (began + 7 * NS, end - 3590 * NS)):
            raw, stored = _both(store, start, stop)
            assert stored == raw
        assert raw  # the scenarios raise findings
    finally:
        con.close()


@pytest.mark.parametrize("kind,rule", [
    ("retry_amplification", "retry_storm"),
    ("false_failover", "backup_failed"),
    ("saturation", "rising_queue_wait"),
    ("runaway_loop", "steps_beyond_limit"),
    ("budget_inversion", "children_exceed_parent_timeout"),
])
def test_each_shape_hour_alone_gives_the_raw_findings_of_a_converted_rule(shapes, kind, rule):
    # every shape's hour, its edges ragged, of the rule's type: the shape raising the rule
    # raises it the same from stored evidence, and the others raise what the raw path does
    con, store = shapes
    _refresh_all(store)
    raised = []
    for i, _ in enumerate(CASES):
        start = BASE_NS + i * SLOT_NS - 30 * NS
        raw, stored = _both(store, start, start + SLOT_NS, kind)
        assert stored == raw, CASES[i][0].__name__
        raised += [CASES[i][0].__name__ for f in stored if f["rule"] == rule]
        assert _stored_ns(store, start, start + SLOT_NS) == SLOT_NS - MINUTE_NS
    assert raised == [name for name, expected in ((c[0].__name__, c[1]) for c in CASES)
                      if (kind, rule) in expected]


#: The detector types of the questions converted after the first four, each checked alone.
CONVERTED_TYPES = ("runaway_loop", "stream_stall", "missing_timeout",
                   "ghost_work", "context_growth", "saturation", "rate_limit_masking",
                   "wait_amplification")


@pytest.mark.parametrize("kind", CONVERTED_TYPES)
def test_each_shape_hour_alone_gives_the_raw_findings_of(shapes, kind):
    con, store = shapes
    _refresh_all(store)
    for i, (_, expected) in enumerate(CASES):
        start = BASE_NS + i * SLOT_NS - 30 * 10**9
        raw, stored = _both(store, start, start + SLOT_NS, kind)
        assert stored == raw, CASES[i][0].__name__


def _mixed_traffic(rng: random.Random, tasks: int) -> list[dict]:
    """Tasks over ~20 minutes raising the later converted rules: rejected roots, calls without
    a timeout (mostly brief, some long for their hop, some over 30 s), streams slow to their
    first token, long prompts timing out, work after the root ended, loops stopped by their
    limit, 429s a retry absorbed (numbered or not), agents polling for a job (in the trace
    or not) every 2-4 s; spans straddle minutes."""
    spans = []
    for n in range(tasks):
        trace = f"{n:030x}ab"
        t0 = rng.uniform(0, 1200_000)  # ms after BASE_NS
        rejected = rng.random() < 0.1
        root_end = t0 + (50 if rejected else rng.uniform(2_000, 90_000))
        root = make_span(trace_id=trace, span_id=f"{n:08x}00000001", hop_kind="gateway",
                         start_ms=t0, end_ms=root_end, task_type="chat",
                         **({"error_type": "rejected", "status_code": "error",
                             "http_status": 503} if rejected else {}))
        spans.append(root)
        if rejected:
            continue
        for call in range(rng.randint(1, 4)):
            start = t0 + rng.uniform(0, root_end - t0)
            kind = rng.choice(("untimed", "stream", "prompt", "agent", "rated", "poll"))
            ghost = rng.random() < 0.1  # runs past the root's end
            end = (root_end + rng.uniform(1_000, 20_000) if ghost
                   else min(root_end, start + rng.uniform(50, 20_000)))
            common = dict(trace_id=trace, span_id=f"{n:08x}{call:02x}d00000", parent=root,
                          start_ms=start, end_ms=end)
            if kind == "untimed":
                # fetch: brief, some over 30 s; crawl: ~1 s, its 6-14 s calls long or not by
                # the window's p50
                hop, brief, long = rng.choice((("fetch", (80, 400), (6_000, 45_000)),
                                               ("crawl", (600, 1_400), (6_000, 14_000))))
                spans.append(make_span(**{**common, "end_ms": start + rng.uniform(
                    *(long if rng.random() < 0.15 else brief))},
                    hop_kind="tool", hop_name=hop, hop_timeout_ms=0.0))
            elif kind == "stream":
                stalled = rng.random() < 0.3
                spans.append(make_span(**common, hop_kind="model", hop_name="gpt-4o",
                                       hop_timeout_ms=30_000.0, ttft_ms=rng.choice(
                                           (11_000.0, 12_500.0)) if stalled
                                       else rng.uniform(100, 900)))
            elif kind == "prompt":
                timed_out = rng.random() < 0.2  # long prompts, cut at their 30 s timeout
                spans.append(make_span(
                    **{**common, **({"end_ms": start + 30_000} if timed_out else {})},
                    hop_kind="model", hop_name="claude", hop_timeout_ms=30_000.0,
                    input_tokens=rng.randint(9_000, 20_000) if timed_out
                    else rng.randint(200, 3_000),
                    **({"error_type": "timeout", "status_code": "error"} if timed_out else {})))
            elif kind == "poll":
                # polls every 2-4 s until they see the job (a sibling, or elsewhere) done
                step, count = rng.uniform(2_000, 4_000), rng.randint(5, 9)
                waiter = make_span(**{**common, "end_ms": start + step * count + 200},
                                   hop_kind="agent", hop_name="waiter")
                spans.append(waiter)
                if rng.random() < 0.7:
                    spans.append(make_span(
                        trace_id=trace, span_id=f"{n:08x}{call:02x}b00000", parent=root,
                        hop_kind="tool", hop_name="job", start_ms=start,
                        end_ms=start + step * (count - 1) - rng.uniform(50, step)))
                for i in range(count):
                    spans.append(make_span(
                        trace_id=trace, span_id=f"{n:08x}{call:02x}a{i:05x}", parent=waiter,
                        hop_kind="tool", name="GET /jobs", start_ms=start + i * step + 50,
                        end_ms=start + i * step + 150))
            elif kind == "rated":
                # a 429 (sometimes two), then the attempt that succeeds
                numbered, tries = rng.random() < 0.5, rng.choice((1, 1, 2))
                for attempt in range(tries + 1):
                    first = start + attempt * rng.uniform(100, 3_000)
                    spans.append(make_span(
                        **{**common, "span_id": f"{n:08x}{call:02x}c{attempt:05x}",
                           "start_ms": first, "end_ms": first + rng.uniform(20, 2_000)},
                        hop_kind="model", hop_name="mistral", hop_timeout_ms=30_000.0,
                        retry_attempt=attempt if numbered else None,
                        **({"error_type": "rate_limited", "status_code": "error",
                            "http_status": 429} if attempt < tries else {})))
            else:
                stopped = rng.random() < 0.3
                spans.append(make_span(**common, hop_kind="agent", hop_name="planner",
                                       loop_limit=8,
                                       **({"error_type": "loop_limit", "status_code": "error"}
                                          if stopped else {})))
    return spans


def test_later_converted_rules_on_out_of_order_traffic(tmp_path: Path):
    # The same as above for the later converted rules: partial worker rounds between shuffled
    # batches, then every window (aligned, ragged) after the worker caught up.
    rng = random.Random(16)
    con = open_store(tmp_path / "db.duckdb")
    try:
        writer = TaskWriter(con, replace(load_config().tasks, default_budget=60.0, lost_grace=30.0))
        store = DuckDBStore(cursor(con))
        spans = _mixed_traffic(rng, 400)
        rng.shuffle(spans)
        now = BASE_NS
        for n, first in enumerate(range(0, len(spans), 53)):
            now += 20 * NS
            writer.write(spans[first:first + 53], now_ns=now)
            evidence.refresh(store, TH, budget_minutes=4)  # leaves minutes dirty
            start = BASE_NS + (n % 5) * 97 * NS
            for kind in CONVERTED_TYPES:
                raw, stored = _both(store, start, start + 700 * NS + 1, kind)
                assert stored == raw, (n, kind)
        writer.sweep_lost(now_ns=now + 3600 * NS)
        assert _refresh_all(store) > 0
        found = set()
        for start, end in ((BASE_NS - 600 * NS, BASE_NS + 7200 * NS),
                           (BASE_NS + 7 * NS, BASE_NS + 1000 * NS),
                           (BASE_NS + 60 * NS, BASE_NS + 360 * NS),
                           (BASE_NS + 40 * NS + 7, BASE_NS + 340 * NS)):
            raw, stored = _both(store, start, end)
            assert stored == raw and _stored_ns(store, start, end) > 0
            found |= {(f["type"], f["rule"]) for f in raw}
        # the traffic exercises the converted rules of CONVERTED_TYPES
        assert {t for t, _ in found} >= set(CONVERTED_TYPES)
    finally:
        con.close()


@pytest.mark.parametrize("declared", [False, True])
def test_a_lost_task_found_again_counts_once_among_the_finished(declared):
    # Six rejected tasks and one declared lost (its root late), then found again when its root
    # arrives (declaring a task id: the trace moves to that task, the lost row is deleted): its
    # end moves back from the lost deadline, minutes later, to the root's end, so the rejected
    # share is 6 of 7 finished tasks both ways. The writer marks the replaced row's minute
    # dirty, else the stored evidence would keep the lost row there.
    spans = [make_span(trace_id=f"{i:032x}", span_id=f"{i:016x}", hop_kind="gateway",
                       start_ms=i * 1000, end_ms=i * 1000 + 50, error_type="rejected",
                       status_code="error", http_status=503) for i in range(6)]
    root = make_span(trace_id="f" * 32, span_id="e" * 16, hop_kind="gateway", start_ms=0,
                     end_ms=5000)
    child = make_span(trace_id="f" * 32, span_id="d" * 16, parent=root, hop_kind="tool",
                      hop_name="fetch", start_ms=100, end_ms=200)
    con, writer, store = _store(spans)
    writer.write([child], now_ns=BASE_NS + NS)
    writer.sweep_lost(now_ns=BASE_NS + 600 * NS)
    _refresh_all(store)
    assert con.execute("select outcome from tasks where trace_id = ?", ["f" * 32]).fetchone() == (
        "lost",)
    writer.write([{**root, "task_id": "declared" if declared else None}],
                 now_ns=BASE_NS + 700 * NS)
    assert con.execute("select task_id, outcome from tasks where trace_id = ?", ["f" * 32]
                       ).fetchall() == [("declared" if declared else "f" * 32, "success")]
    _refresh_all(store)
    raw, stored = _both(store, BASE_NS - 600 * NS, BASE_NS + 3600 * NS, "saturation")
    assert [(f["rule"], f["evidence"]) for f in raw] == [
        ("rejections", {"rejected_tasks": 6, "rejected_share": round(6 / 7, 3)})]
    assert stored == raw
    con.close()


# --- the hour tier ----------------------------------------------------------------------------

HOUR_NS = evidence.HOUR_NS


def _whole_hours(start_ns: int, end_ns: int) -> list[int]:
    return list(range(-(-start_ns // HOUR_NS) * HOUR_NS, end_ns // HOUR_NS * HOUR_NS, HOUR_NS))


def _hour_ids(con) -> list[str]:
    return [q for (q,) in con.execute(
        "select question from evidence_questions where ends_with(question, '/hour')").fetchall()]


def test_whole_hours_are_read_from_the_hour_tier_alone():
    # Every detector shape, an hour each: once the worker is current every settled hour is
    # built. A window's whole hours then come from the hour tier: with the minute rows of those
    # hours deleted (for the questions the tier holds) the stored path still gives the raw
    # path's findings, and with the hour tier's rows deleted instead it no longer does.
    rows = [r for i, (shape, _) in enumerate(CASES) for r in _tagged(shape(), i)]
    con, writer, store = _store(rows)
    _refresh_all(store)
    assert con.execute("select count(*) from evidence_hours_stale").fetchone() == (0,)
    hour_ids = _hour_ids(con)
    assert {q.split("@")[0] for q in hour_ids} == set(evidence.HOURLY["duckdb"])
    start = BASE_NS - 20 * NS  # a minute boundary, 46 min 40 s before an hour's start
    end = start + len(CASES) * SLOT_NS
    hours = _whole_hours(start, end)
    assert len(hours) == len(CASES) - 1
    store.rows("findings/evidence_begin")
    try:
        assert evidence.plan(store, start, end).hours == tuple(hours)
    finally:
        store.rows("findings/evidence_commit")
    raw = _detect(store, start, end, None, TH, stored=False)
    assert {f["type"] for f in raw} >= {"retry_amplification", "missing_timeout", "ghost_work"}
    hour_tables = evidence_tables(con, HOUR_TABLES)
    assert len(hour_tables) == len(hour_ids)
    for table in hour_tables:
        con.execute(f"create temp table kept_{table} as select * from {table}")
        con.execute(f"delete from {table.replace(HOUR_TABLES, MINUTE_TABLES)} "
                    "where minute_ns >= ? and minute_ns < ?", [hours[0], hours[-1] + HOUR_NS])
    assert _detect(store, start, end, None, TH, stored=True) == raw
    for table in hour_tables:
        con.execute(f"delete from {table}")
    assert _detect(store, start, end, None, TH, stored=True) != raw
    for table in hour_tables:
        con.execute(f"insert into {table} select * from kept_{table}")
    assert _detect(store, start, end, None, TH, stored=True) == raw
    con.close()


def test_migration_12_moves_each_questions_evidence_into_tables_of_its_own():
    # A store of schema 11 kept every question's evidence interleaved in two tables (minutes,
    # hours): the migration moves each question's rows, unchanged, into its own tables, and the
    # stored path answers from them at once (nothing is computed again).
    rows = [r for i, (shape, _) in enumerate(CASES[:3]) for r in _tagged(shape(), i)]
    con, writer, store = _store(rows)
    _refresh_all(store)
    # schema 11 knew no key counts (registered since): the questions' tables alone
    con.execute(f"drop table {minute_table(evidence.KEY_COUNTS)}")
    con.execute("delete from evidence_questions where starts_with(question, ?)",
                [evidence.KEY_COUNTS + "@"])
    tables = {prefix: evidence_tables(con, prefix) for prefix in (MINUTE_TABLES, HOUR_TABLES)}
    assert len(tables[MINUTE_TABLES]) == len(evidence.QUESTIONS)
    assert len(tables[HOUR_TABLES]) == len(evidence.HOURLY["duckdb"])
    before = {t: sorted(map(repr, con.execute(f"select * from {t}").fetchall()))
              for names in tables.values() for t in names}
    for old, prefix in (("finding_evidence", MINUTE_TABLES), ("finding_evidence_hourly",
                                                              HOUR_TABLES)):
        con.execute(f"create table {old} as select * from ("
                    + " union all ".join(f"select * from {t}" for t in tables[prefix])
                    + ") order by minute_ns, question")
        for t in tables[prefix]:
            con.execute(f"drop table {t}")
    con.execute("delete from schema_version where version >= 12")
    assert migrate(con) == 11
    after = {t: sorted(map(repr, con.execute(f"select * from {t}").fetchall()))
             for prefix in tables for t in evidence_tables(con, prefix)}
    assert after == before
    assert not con.execute("select * from information_schema.tables "
                           "where table_name in ('finding_evidence', 'finding_evidence_hourly')"
                           ).fetchall()
    start, end = BASE_NS - 20 * NS, BASE_NS - 20 * NS + 3 * SLOT_NS
    assert _stored_ns(store, start, end) == end - start
    raw, stored = _both(store, start, end)
    assert stored == raw and raw


def test_a_late_span_in_a_built_hour_is_read_from_its_minutes_until_the_hour_is_rebuilt():
    # A call retried once after a timeout every 2 minutes for 2 hours; the hour tier holds the
    # whole hour they cover. A third attempt of a call in that hour arrives late: its minutes
    # are dirty (read raw), then stored while the hour is marked stale (read from the minutes),
    # then the hour is rebuilt (read from the tier again); the answer is exact at every step.
    traces = [_timed_out_call(i * 120_000, 2) for i in range(60)]
    con, writer, store = _store([r for t in traces for r in t.rows])
    _refresh_all(store)
    start, end = BASE_NS - 20 * NS, BASE_NS + 7200 * NS
    (hour,) = _whole_hours(start, end)

    def answer() -> tuple[list[dict], tuple[int, ...]]:
        raw, stored = _both(store, start, end, "retry_amplification")
        assert stored == raw
        store.rows("findings/evidence_begin")
        try:
            return stored, evidence.plan(store, start, end).hours
        finally:
            store.rows("findings/evidence_commit")

    def attempts(found: list[dict]) -> int:
        (f,) = [f for f in found if f["rule"] == "attempts_per_call"]
        return f["evidence"]["attempts"]

    before, hours = answer()
    assert hours == (hour,) and attempts(before) == 120
    call = traces[30]  # starts 60 min after BASE_NS: inside the hour
    assert hour <= call.rows[-1]["end_ns"] < hour + HOUR_NS
    late = _timed_out_call(60 * 60_000, 3)
    third = {**late.rows[-1], "trace_id": call.trace_id,
             "parent_span_id": call.root["span_id"], "span_id": "f" * 16}
    writer.write([third], now_ns=third["end_ns"] + 1)
    dirty, hours = answer()
    assert hours == () and attempts(dirty) == 121
    # a round that stores the minutes before the hour has settled leaves the hour stale
    did = evidence.refresh(store, TH, now_ns=hour + HOUR_NS + evidence.HOUR_SETTLE_NS - 1)
    assert did.minutes > 0 and did.hours == 0
    stale, hours = answer()
    assert hours == () and stale == dirty
    did = evidence.refresh(store, TH, now_ns=hour + HOUR_NS + evidence.HOUR_SETTLE_NS)
    assert (did.minutes, did.hours, did.hours_pending) == (0, 1, 0)
    rebuilt, hours = answer()
    assert hours == (hour,) and rebuilt == dirty
    con.close()


@pytest.mark.parametrize("question", evidence.QUESTIONS)
def test_no_evidence_gives_no_finding(question):
    # `evidence.ask` skips the verdict of a question without evidence rows in the window;
    # that is only the same answer if every verdict finds nothing in an empty table.
    con = duckdb.connect(config={"threads": "1"})
    migrate(con)
    store = DuckDBStore(cursor(con))
    store.rows("findings/evidence_reset")
    params = {**TH, "start_ns": BASE_NS, "end_ns": BASE_NS + 3600 * NS}
    assert store.rows(f"findings/{question}", params,
                      **evidence.VERDICT_SNIPPETS.get(question, {})) == []


def _stored_minutes(con, prefix: str) -> set[int]:
    """The minutes (or hours) every stored evidence table of `prefix` holds rows of."""
    return {m for table in evidence_tables(con, prefix)
            for (m,) in con.execute(f"select distinct minute_ns from {table}").fetchall()}


def test_retention_forgets_the_evidence_of_minutes_before_it():
    """The evidence worker forgets evidence on the raw rows' clock: of an incident 40 days
    before another, with retention reaching back to halfway between them, only the later
    one's minutes and hours stay (an hour stays while any of its minutes does)."""
    con = duckdb.connect(config={"threads": "1"})
    migrate(con)
    store = DuckDBStore(cursor(con))
    evidence.refresh(store, TH)  # registered first: it then stores the minutes marked
    rows = _tagged(CASES[0][0](), 0) + _tagged(CASES[0][0](), 40 * 24)  # hour slots
    TaskWriter(con, load_config(environ={}).tasks).write(
        rows, now_ns=max(r["end_ns"] for r in rows) + 1)
    _refresh_all(store)
    halfway = BASE_NS + 20 * 24 * SLOT_NS
    for prefix in (MINUTE_TABLES, HOUR_TABLES):
        assert {m < halfway for m in _stored_minutes(con, prefix)} == {True, False}, prefix
    worker = evidence.EvidenceWorker(lambda: store, TH, interval=0.05,
                                     retention_s=(time.time_ns() - halfway) / NS)
    worker.start()
    deadline = time.monotonic() + 60
    while any(m < halfway for m in _stored_minutes(con, MINUTE_TABLES)) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    worker.stop()
    for prefix in (MINUTE_TABLES, HOUR_TABLES):
        assert {m < halfway for m in _stored_minutes(con, prefix)} == {False}, prefix
    con.close()
