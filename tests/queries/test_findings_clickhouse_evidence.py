"""On ClickHouse (chdb), findings from stored per-minute evidence equal the raw path's (#18).

The stories of test_findings_engines_agree.py go into chdb's otel_traces as the exporter writes
them; materializer passes mark the minutes they touch dirty, and evidence worker rounds
(queries.findings.evidence.refresh) store the stored questions' evidence of those minutes.
Then every window, aligned or ragged, must give the raw path's findings exactly, also while
some minutes are dirty (spans arriving out of order between partial rounds: children before
their roots, so tasks first judged lost are found again), and after a round that crashed
between writing a minute's evidence and deleting its dirty marks.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentsla.collector.store.clickhouse.materializer import Shard, run_pass
from agentsla.collector.store.clickhouse.url import parse_store_url
from agentsla.queries.engines.clickhouse import ChdbRunner, ClickHouseStore, prepare
from agentsla.queries.engines.duckdb import DuckDBStore
from agentsla.queries.findings import _detect, evidence, find_findings, resolve_thresholds
from test_engines_agree import CONFIG, _span, duck_with, exporter_rows
from test_findings_engines_agree import NOW, THRESHOLDS, WINDOW, _agree, _root, stories

S = 10**9
TH = resolve_thresholds(THRESHOLDS)
#: every pass re-reads every span: batches arrive in any order
LATE = replace(CONFIG, late_window=1e6)
STORED = evidence.STORED["clickhouse"]


class Recording(ClickHouseStore):
    """A store noting which verdicts read stored evidence (their snippet)."""

    def __init__(self, runner) -> None:
        super().__init__(runner)
        self.stored: set[str] = set()

    def rows(self, question, params=None, **fragments):
        if any(v in ("evidence_stored", "evidence_mixed") for v in fragments.values()):
            self.stored.add(question.removeprefix("findings/"))
        return super().rows(question, params, **fragments)


@pytest.fixture
def runner(tmp_path):
    url = parse_store_url(f"chdb://{tmp_path}")
    runner = ChdbRunner(url.path)
    prepare(runner, url)
    yield runner
    runner.close()


def _feed(runner, rows: list[dict], now_ns: int = NOW) -> None:
    """Insert exporter rows, then passes of shard 0/1 until caught up."""
    runner.insert("default.otel_traces", rows)
    while not run_pass(runner, "default", "otel_traces", Shard(0, 1), LATE, now_ns).caught_up:
        pass


def _refresh_all(store) -> int:
    done = 0
    while minutes := evidence.refresh(store, TH)[0]:
        done += minutes
    return done


def _key(finding: dict) -> tuple:
    return finding["type"], finding["rule"], str(finding["hop"]), str(finding["task_type"])


def _windows() -> list[tuple[int, int]]:
    lo, hi = WINDOW
    return [(lo, hi), (lo + 7 * S, hi - 13 * S), (lo + 61 * S, lo + 1201 * S),
            (lo + 1500 * S + 1, hi)]


def _same(store: Recording, windows: int = 4) -> None:
    """Every window (the first `windows`): the stored path's findings are the raw path's."""
    for lo, hi in _windows()[:windows]:
        raw = sorted(_detect(store, lo, hi, None, TH, stored=False), key=_key)
        got = sorted(_detect(store, lo, hi, None, TH, stored=True), key=_key)
        _agree(got, raw)


def _dirty(store) -> list[dict]:
    return store.rows("findings/evidence_dirty")


def test_stored_equals_raw_aligned_and_ragged(runner):
    store = Recording(runner)
    _feed(runner, exporter_rows(stories()))
    assert _dirty(store), "a pass marks the minutes it touched"
    assert _refresh_all(store) > 0
    assert _dirty(store) == []
    _same(store)
    assert store.stored == set(STORED), "every stored question read its stored minutes"
    assert len(_detect(store, *WINDOW, None, TH)) == 22  # the stories' findings


def test_raw_rows_wider_than_one_statement_are_asked_a_range_at_a_time(runner, monkeypatch):
    """Raw rows wider than RAW_RANGE_NS (minutes changed far apart, a window asked raw) are
    asked one range a statement and given to the verdict as rows: the same findings as one
    statement over all of them. Here the limit is a minute, so every raw window is cut."""
    store = Recording(runner)
    _feed(runner, exporter_rows(stories()))
    _refresh_all(store)
    lo, hi = WINDOW
    # two minutes changed far apart, as a worker behind leaves them
    minute = evidence.MINUTE_NS
    runner.insert("default.agentsla_evidence_dirty",
                  [{"id": f"far/{n}", "lo_ns": at // minute * minute,
                    "hi_ns": at // minute * minute, "marked_ns": NOW}
                   for n, at in enumerate((lo + 120 * S, hi - 240 * S))])
    whole = {(window, stored): sorted(_detect(store, *window, None, TH, stored=stored), key=_key)
             for window in _windows() for stored in (False, True)}
    asked = []
    monkeypatch.setattr(evidence, "RAW_RANGE_NS", evidence.MINUTE_NS)
    monkeypatch.setattr(Recording, "rows", lambda self, question, params=None, **fragments: (
        asked.append(question), ClickHouseStore.rows(self, question, params, **fragments))[1])
    cut = {(window, stored): sorted(_detect(store, *window, None, TH, stored=stored), key=_key)
           for window in _windows() for stored in (False, True)}
    assert "findings/evidence_raw" in asked
    for window, stored in whole:
        _agree(cut[window, stored], whole[window, stored])
        _agree(cut[window, True], cut[window, False])
    assert len(cut[WINDOW, True]) == 22  # the stories' findings


def test_out_of_order_with_partial_rounds_and_lost_tasks_found_again(runner):
    store = Recording(runner)
    rows = exporter_rows(stories())
    roots = [r for r in rows if not r["ParentSpanId"]]
    children = [r for r in rows if r["ParentSpanId"]]
    random.Random(18).shuffle(children)
    half = len(children) // 2
    # children first, an hour after the stories: their rootless tasks are judged lost
    for batch in (children[:half], children[half:], roots[::2], roots[1::2]):
        _feed(runner, batch)
        _same(store, 2)  # dirty minutes read raw
        evidence.refresh(store, TH, budget_minutes=3)  # a partial round
        _same(store, 2)
    lost = runner.arrow("select count() as n from tasks where outcome = 'lost'", {})
    assert lost.to_pylist() == [{"n": 0}], "every task found again once its root came"
    _refresh_all(store)
    assert _dirty(store) == []
    _same(store)
    assert store.stored == set(STORED)


class Crash(Exception):
    pass


class CrashingAt(Recording):
    """A store whose evidence round dies when it would delete the dirty marks it saw."""

    def rows(self, question, params=None, **fragments):
        if question == "findings/evidence_undirty":
            raise Crash
        return super().rows(question, params, **fragments)


def test_a_crash_between_evidence_and_dirty_delete_leaves_minutes_dirty(runner):
    store = Recording(runner)
    rows = exporter_rows(stories())
    last = rows[-1]["TraceId"]
    _feed(runner, [r for r in rows if r["TraceId"] != last])
    _refresh_all(store)
    _feed(runner, [r for r in rows if r["TraceId"] == last])  # one more story arrives
    marked = _dirty(store)
    assert marked
    with pytest.raises(Crash):
        evidence.refresh(CrashingAt(runner), TH)
    assert {m["id"] for m in marked} <= {m["id"] for m in _dirty(store)}, \
        "the marks outlive the crash"
    _same(store)  # the minutes written before the crash are read raw, not trusted
    _refresh_all(store)
    assert _dirty(store) == []
    _same(store)


def _queue_waits() -> ExportTraceServiceRequest:
    """Sixty tasks, a queue wait ending about every 20 s: 100 + 7 i ms for the first 30, then
    2000 + 311 (i - 30) ms; each with a 30 s budget but the last (none)."""
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    for i in range(60):
        at, wait = i * 20_000, 100 + 7 * i if i < 30 else 2000 + 311 * (i - 30)
        budget = {"budget__total_ms": 30_000.0} if i < 59 else {}
        spans.extend([_root(100 + i, f"queued-{i}", wait + 1000, at=at, **budget),
                      _span(100 + i, 2, 1, "jobs", at, at + wait, messaging__system="kafka")])
    return request


def test_rising_queue_waits_from_stored_minutes_cut_by_the_quarters_agree(runner):
    """The quarters' boundary seconds cut stored minutes, whose waits are read one by one
    (their seconds and buckets, a wait without a budget among them): ClickHouse's stored path
    gives DuckDB's finding (p90s, median budget, examples of the late quarter)."""
    request = _queue_waits()
    store = Recording(runner)
    _feed(runner, exporter_rows(request))
    _refresh_all(store)
    duck = duck_with(request, NOW)
    try:
        want = find_findings(DuckDBStore(duck), *WINDOW, "saturation", THRESHOLDS)
    finally:
        duck.close()
    assert [f["rule"] for f in want] == ["rising_queue_wait"]
    assert want[0]["evidence"]["late_budget_ms"] is not None
    _agree(find_findings(store, *WINDOW, "saturation", THRESHOLDS), want)
    assert "rising_queue_waits" in store.stored
