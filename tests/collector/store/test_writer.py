"""TaskWriter: task resolution per trace, duplicates, late spans, restarts, lost tasks, retention."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agentsla.collector.store.database import open_store
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from spanfactory import BASE_NS, make_span, ms

TRACE_A = "a" * 32
TRACE_B = "b" * 32


@pytest.fixture
def con(tmp_path: Path):
    connection = open_store(tmp_path / "db.duckdb")
    yield connection
    connection.close()


def tasks_config(**changes):
    return replace(load_config().tasks, **changes)


def task_rows(con) -> dict[str, dict]:
    cur = con.execute("select * from tasks")
    names = [d[0] for d in cur.description]
    return {row[0]: dict(zip(names, row)) for row in cur.fetchall()}


def span_task_ids(con) -> dict[str, str]:
    return dict(con.execute("select span_id, task_id from spans").fetchall())


def agent_task(trace_id: str = TRACE_A, task_id: str | None = "task-1") -> list[dict]:
    """A gateway root declaring task.id, with an agent and a model call below it."""
    root = make_span(trace_id=trace_id, span_id=trace_id[:15] + "1", hop_kind="gateway",
                     start_ms=0, end_ms=900, http_status=200, task_type="chat")
    root["task_id"] = task_id
    agent = make_span(span_id=trace_id[:15] + "2", parent=root, hop_kind="agent",
                      start_ms=5, end_ms=880)
    model = make_span(span_id=trace_id[:15] + "3", parent=agent, hop_kind="model",
                      model="gpt-4o", start_ms=10, end_ms=800, input_tokens=100)
    return [root, agent, model]


def test_children_first_then_root_moves_trace_to_declared_task(con) -> None:
    root, agent, model = agent_task()
    writer = TaskWriter(con, tasks_config())
    writer.write([agent, model], now_ns=BASE_NS)
    assert set(task_rows(con)) == {TRACE_A}  # provisional: keyed by the trace id
    writer.write([root], now_ns=BASE_NS + 10**9)
    tasks = task_rows(con)
    assert set(tasks) == {"task-1"}
    assert tasks["task-1"]["span_count"] == 3
    assert tasks["task-1"]["outcome"] == "success"
    assert tasks["task-1"]["first_seen_ns"] == BASE_NS  # the earliest arrival is kept
    assert set(span_task_ids(con).values()) == {"task-1"}


def test_duplicate_spans_are_stored_once(con) -> None:
    writer = TaskWriter(con, tasks_config())
    first = writer.write(agent_task(), now_ns=BASE_NS)
    again = writer.write(agent_task(), now_ns=BASE_NS)
    assert (first.accepted, first.duplicates) == (3, 0)
    assert (again.accepted, again.duplicates) == (0, 3)
    assert con.execute("select count(*) from spans").fetchone()[0] == 3


def test_a_retried_request_rewrites_no_task(con) -> None:
    """An exporter retrying a committed request: its tasks are current, none is rewritten."""
    writer = TaskWriter(con, tasks_config())
    writer.write(agent_task(), now_ns=BASE_NS)
    before = task_rows(con)
    appended = ("rollup_pending", "evidence_dirty")
    counts = [con.execute(f"select count(*) from {t}").fetchone()[0] for t in appended]
    again = writer.write(agent_task(), now_ns=BASE_NS + 10**9)
    assert (again.accepted, again.duplicates, again.tasks) == (0, 3, 0)
    assert task_rows(con) == before
    assert before["task-1"]["updated_ns"] == BASE_NS  # the first write's materialization
    assert [con.execute(f"select count(*) from {t}").fetchone()[0] for t in appended] == counts


def test_a_retried_span_declaring_the_task_moves_its_trace(con) -> None:
    """A duplicate that brings task.id (the retry carries it, the first copy did not) still
    moves the trace to the declared task, which is materialized."""
    agent, model = agent_task()[1:]
    writer = TaskWriter(con, tasks_config())
    writer.write([agent, model], now_ns=BASE_NS)
    assert set(task_rows(con)) == {TRACE_A}
    declaring = dict(agent, task_id="task-1")
    result = writer.write([declaring], now_ns=BASE_NS + 10**9)
    assert (result.accepted, result.duplicates, result.tasks) == (0, 1, 1)
    tasks = task_rows(con)
    assert set(tasks) == {"task-1"}
    assert tasks["task-1"]["span_count"] == 2
    assert set(span_task_ids(con).values()) == {"task-1"}


def test_late_span_after_restart_rematerializes_from_the_database(con) -> None:
    TaskWriter(con, tasks_config()).write(agent_task(), now_ns=BASE_NS)
    late = make_span(trace_id=TRACE_A, span_id="late", parent=TRACE_A[:15] + "2",
                     hop_kind="tool", tool="search", start_ms=850, end_ms=1200,
                     error_type="timeout")
    restarted = TaskWriter(con, tasks_config())  # empty memory, as after a restart
    result = restarted.write([late], now_ns=BASE_NS + 2 * 10**9)
    assert result.accepted == 1
    task = task_rows(con)["task-1"]
    assert task["span_count"] == 4 and task["tool_calls"] == 1
    assert span_task_ids(con)["late"] == "task-1"


def test_two_traces_declaring_one_task_make_one_task(con) -> None:
    writer = TaskWriter(con, tasks_config())
    worker = make_span(trace_id=TRACE_B, span_id="w1", hop_kind="agent", start_ms=20, end_ms=500)
    worker["task_id"] = "task-1"
    writer.write(agent_task(), now_ns=BASE_NS)
    writer.write([worker], now_ns=BASE_NS)
    tasks = task_rows(con)
    assert set(tasks) == {"task-1"}
    assert tasks["task-1"]["span_count"] == 4


def test_task_without_root_is_declared_lost_after_budget_and_grace(con) -> None:
    writer = TaskWriter(con, tasks_config(default_budget=10.0, lost_grace=5.0))
    _, agent, model = agent_task(task_id=None)
    writer.write([agent, model], now_ns=BASE_NS)
    assert writer.sweep_lost(now_ns=BASE_NS + 14 * 10**9) == 0
    assert task_rows(con)[TRACE_A]["outcome"] == "in_progress"
    assert writer.sweep_lost(now_ns=BASE_NS + 15 * 10**9) == 1
    task = task_rows(con)[TRACE_A]
    assert task["outcome"] == "lost" and task["finished"]
    assert task["end_ns"] == BASE_NS + 15 * 10**9


@pytest.mark.parametrize("declared", [False, True])
@pytest.mark.parametrize("remembered", [True, False])
def test_found_lost_task_marks_the_minute_its_lost_row_ended(con, declared, remembered) -> None:
    # A task declared lost ends at its deadline, 5.5 minutes after its spans (budget 300 s +
    # grace 30 s from its first span's arrival at BASE_NS). When its root arrives the row is
    # replaced (declared: deleted, the trace moving to its task.id) and ends with the root,
    # 5 s after BASE_NS: the deadline's minute must be marked for the evidence worker too,
    # whether the writer still holds the task or reads it back after a restart.
    writer = TaskWriter(con, tasks_config(default_budget=300.0, lost_grace=30.0))
    root, agent, model = agent_task(task_id="task-1" if declared else None)
    writer.write([agent, model], now_ns=BASE_NS)
    assert writer.sweep_lost(now_ns=BASE_NS + 400 * 10**9) == 1
    deadline = BASE_NS + 330 * 10**9
    assert task_rows(con)[TRACE_A]["end_ns"] == deadline
    con.execute("delete from evidence_dirty")
    if not remembered:
        writer.forget_memory()
    writer.write([root], now_ns=BASE_NS + 500 * 10**9)
    assert [t["outcome"] for t in task_rows(con).values()] == ["success"]
    minute = 60 * 10**9
    runs = con.execute("select lo_ns, hi_ns from evidence_dirty").fetchall()
    assert any(lo <= deadline // minute * minute <= hi for lo, hi in runs), runs
    assert any(lo <= BASE_NS // minute * minute <= hi for lo, hi in runs), runs


def test_tiny_cache_still_materializes_correctly(con) -> None:
    writer = TaskWriter(con, tasks_config(task_cache_spans=1))
    rows = agent_task()
    for row in rows:  # one span per batch: every batch evicts and reloads
        writer.write([row], now_ns=BASE_NS)
    task = task_rows(con)["task-1"]
    assert task["span_count"] == 3 and task["model_calls"] == 1


def test_cache_evicts_finished_tasks_before_unfinished_ones(con) -> None:
    writer = TaskWriter(con, tasks_config(task_cache_spans=5))
    _, agent, model = agent_task(TRACE_B, task_id=None)
    writer.write([agent, model], now_ns=BASE_NS)  # unfinished (no root yet), least recent
    writer.write(agent_task(TRACE_A, "task-1"), now_ns=BASE_NS)  # finished: 5 spans cached
    writer.write(agent_task("c" * 32, "task-3"), now_ns=BASE_NS)  # 8 spans: one task must go
    # plain LRU would drop the unfinished task, the one still waiting for spans; finished go first
    assert writer.cache.get(TRACE_B) is not None and writer.cache.get("task-1") is None
    assert writer.cache.span_count == 5


def test_retention_deletes_finished_tasks_and_their_spans(con) -> None:
    writer = TaskWriter(con, tasks_config())
    writer.write(agent_task(), now_ns=BASE_NS)
    writer.write(agent_task(TRACE_B, "task-2"), now_ns=BASE_NS)
    assert writer.delete_before(ms(950)) == 2
    assert task_rows(con) == {}
    assert con.execute("select count(*) from spans").fetchone()[0] == 0
    writer.write(agent_task(), now_ns=BASE_NS)  # a re-sent task is stored afresh
    assert set(task_rows(con)) == {"task-1"}


def long_run(calls: int, task_id: str | None = "long-run") -> tuple[dict, list[dict]]:
    """A long agent run: its gateway root (exported last, as it ends last) and, below an agent
    span, `calls` tool calls one after another; every fifth fails with a timeout and is
    retried once (the next call of the same tool, after it ended)."""
    root = make_span(trace_id=TRACE_A, span_id="f" * 15 + "0", hop_kind="gateway", start_ms=0,
                     end_ms=10 * calls + 100, http_status=200, task_type="research")
    root["task_id"] = task_id
    agent = make_span(span_id="f" * 15 + "1", parent=root, hop_kind="agent", start_ms=1,
                      end_ms=10 * calls + 90)
    children = [agent]
    for i in range(calls):
        failed = i % 5 == 0
        children.append(make_span(
            span_id=f"{i + 16:016x}", parent=agent, hop_kind="tool", tool=f"t{i // 2 % 3}"
            if not failed and i % 5 != 1 else "t-retried", start_ms=10 * i + 2,
            end_ms=10 * i + 9, status_code="error" if failed else "ok",
            error_type="timeout" if failed else None))
    return root, children


def stored_answers(con) -> tuple:
    """What readers see of the stores: tasks, each span's call numbering, hop rollups."""
    numbering = con.execute("select span_id, call_id, attempt from spans order by span_id")
    hops = con.execute("select * from hop_minutes order by all")
    return task_rows(con), numbering.fetchall(), hops.fetchall()


@pytest.mark.parametrize("task_id", ["long-run", None], ids=["declared", "trace-id"])
def test_a_large_task_in_progress_is_materialized_as_it_grows_and_whole_at_its_root(
        tmp_path: Path, task_id: str | None) -> None:
    """Past large_task_spans, a task in progress is materialized again only when it grew by a
    tenth: its row lags by less than that, and once its root arrives (declaring the task, so
    the trace moves to it, or not) the stores hold what a writer materializing every batch
    holds (tasks, call numbering, rollups)."""
    lazy_con, eager_con = open_store(tmp_path / "lazy.duckdb"), open_store(tmp_path / "eager.duckdb")
    lazy = TaskWriter(lazy_con, tasks_config(large_task_spans=50, large_task_refresh=3600.0))
    eager = TaskWriter(eager_con, tasks_config(large_task_spans=10**9))
    root, children = long_run(300, task_id)
    lagged = 0
    for first in range(0, len(children), 10):
        batch = children[first:first + 10]
        for writer in (lazy, eager):
            writer.write([dict(row) for row in batch], now_ns=BASE_NS + first * 10**6)
        sent = first + len(batch)
        stored = task_rows(lazy_con)[TRACE_A]["span_count"]
        assert stored * 1.1 > sent or sent <= 50, (stored, sent)
        lagged += stored < sent
    assert lagged >= 10  # past 100 spans, a tenth is more than a batch: batches wait
    for writer in (lazy, eager):
        writer.write([dict(root)], now_ns=BASE_NS + 10**9)
    assert task_rows(lazy_con)[task_id or TRACE_A]["span_count"] == 302
    assert stored_answers(lazy_con) == stored_answers(eager_con)
    lazy_con.close()
    eager_con.close()


def test_a_large_task_in_progress_is_materialized_again_after_large_task_refresh(con) -> None:
    writer = TaskWriter(con, tasks_config(large_task_spans=50, large_task_refresh=5.0))
    _, children = long_run(100)
    writer.write(children[:60], now_ns=BASE_NS)  # the first batch: materialized
    counts = []
    for second, row in enumerate(children[60:64], start=1):  # a span a second: < a tenth
        writer.write([row], now_ns=BASE_NS + second * 10**9)
        counts.append(task_rows(con)[TRACE_A]["span_count"])
    assert counts == [60, 60, 60, 60]
    writer.write([children[64]], now_ns=BASE_NS + 5 * 10**9)  # 5 s since: materialized
    assert task_rows(con)[TRACE_A]["span_count"] == 65
