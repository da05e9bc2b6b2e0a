"""Materializer shards own tasks, not traces: one task whose traces hash to different shards is
judged whole by the shard of its task id, counted once in the rollups, also when one of its
traces first arrived without declaring it; replayed passes change nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentsla.collector.store.clickhouse import rollups
from agentsla.collector.store.clickhouse.materializer import Shard, run_pass
from agentsla.errors import PermanentError
from agentsla.queries.engines.clickhouse import ChdbRunner
from test_clickhouse_store import CONFIG, _now, _row, _store

LATE = replace(CONFIG, late_window=120.0)  # later passes re-read the first ones' spans
SHARDS = [Shard(0, 2), Shard(1, 2)]
A, B, C = (f"{t:032x}" for t in (11, 12, 13))  # the task's three traces


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    """One chdb session for the module (chdb allows one path per process)."""
    made = ChdbRunner(str(tmp_path_factory.mktemp("chdb")))
    yield made
    made.close()


def _failed(row: dict) -> dict:
    return {**row, "StatusCode": "STATUS_CODE_ERROR"}


def _request() -> list[dict]:
    """Trace A: the task's entry request (0-3 s), failed because its work failed."""
    return [_failed(_row(11, 1, None, 0, 3_000, task__id="story"))]


def _work() -> list[dict]:
    """Trace B: a worker's request (0.5-2 s) whose tool call `search` failed at 1.5 s."""
    return [_row(12, 1, None, 500, 2_000, task__id="story"),
            _failed(_row(12, 2, 1, 600, 1_500, gen_ai__operation__name="execute_tool",
                         gen_ai__tool__name="search", error__type="ToolError"))]


def _summary_call() -> list[dict]:
    """Trace C's model call (2.2-2.4 s), exported without its root and naming no task."""
    return [_row(13, 2, 1, 2_200, 2_400, gen_ai__operation__name="chat",
                 gen_ai__request__model="m")]


def _summary_root() -> list[dict]:
    """Trace C's root (2.1-2.5 s), declaring the task."""
    return [_row(13, 1, None, 2_100, 2_500, task__id="story")]


def _every_shard(runner, database: str, now_ms: int, shards=SHARDS) -> None:
    for shard in shards:
        run_pass(runner, database, "otel_traces", shard, LATE, _now(now_ms))


def _state(runner, database: str) -> dict:
    """What the readers see: task rows, task traces, span facts' tasks, and the rollups summed
    over shards (task counts, causes, hop calls and errors)."""
    def rows(sql: str) -> list[dict]:
        return runner.arrow(sql.format(db=database), {}).to_pylist()

    return {
        "tasks": rows("select task_id, span_count, finished, outcome, ffh_kind, ffh_name, "
                      "ffh_span_id from {db}.tasks order by task_id"),
        "task_traces": rows("select task_id, trace_id from {db}.agentsla_task_traces final "
                            "order by all"),
        "span_tasks": rows("select distinct task_id from {db}.agentsla_span_facts final"),
        "task_minutes": rows("select sum(finished) as finished, sum(failed) as failed, "
                             "sum(in_progress) as in_progress from {db}.task_minutes"),
        "causes": rows("select ffh_kind, ffh_name, sum(tasks) as tasks from "
                       "{db}.cause_minutes group by all order by all"),
        "hops": rows("select hop_name, sum(calls) as calls, sum(errors) as errors from "
                     "{db}.hop_minutes group by hop_name order by hop_name"),
        "hop_tasks": rows("select distinct task_id from {db}.hop_spans"),
    }


def _hashes(runner, ids: list[str], count: int) -> list[int]:
    return [r["h"] for r in runner.arrow(
        "select cityHash64(id) % {n:UInt64} as h from (select arrayJoin({ids:Array(String)}) "
        "as id, rowNumberInAllBlocks() as i) order by i", {"ids": ids, "n": count}).to_pylist()]


#: After every shard's passes: one task of five spans (three traces), failed, first failing
#: hop the tool `search` of trace B (span 2, failed at 1.5 s, before the entry request at 3 s),
#: counted once in every rollup.
STORY = {
    "tasks": [{"task_id": "story", "span_count": 5, "finished": True, "outcome": "failed",
               "ffh_kind": "tool", "ffh_name": "search", "ffh_span_id": f"{2:016x}"}],
    "task_traces": [{"task_id": "story", "trace_id": t} for t in (A, B, C)],
    "span_tasks": [{"task_id": "story"}],
    "task_minutes": [{"finished": 1, "failed": 1, "in_progress": 0}],
    "causes": [{"ffh_kind": "tool", "ffh_name": "search", "tasks": 1}],
    "hops": [{"hop_name": "POST /ask", "calls": 3, "errors": 1},
             {"hop_name": "m", "calls": 1, "errors": 0},
             {"hop_name": "search", "calls": 1, "errors": 1}],
    "hop_tasks": [{"task_id": "story"}],
}


def test_the_ids_of_the_story_hash_to_both_shards(runner):
    """The ground the stories stand on: under the traces' hash the task would be split."""
    assert _hashes(runner, ["story", A, B, C], 2) == [1, 1, 1, 0]


def test_a_task_over_traces_of_both_shards_is_judged_once_by_the_shard_of_its_id(runner):
    _store(runner, "whole")
    runner.insert("whole.otel_traces", _request() + _work() + _summary_call()
                  + _summary_root())
    _every_shard(runner, "whole", 3_100)
    assert _state(runner, "whole") == STORY
    watermarks = runner.arrow("select shard, watermark_ns from whole.agentsla_watermarks "
                              "final order by shard", {}).to_pylist()
    assert watermarks == [{"shard": "0/2", "watermark_ns": _now(3_100)},
                          {"shard": "1/2", "watermark_ns": _now(3_100)}]


@pytest.mark.parametrize("order", ["trace's shard first", "task's shard first"])
def test_a_trace_first_keyed_by_its_id_moves_to_the_task_of_another_shard(runner, order):
    """Trace C's model call comes first: a task keyed by C's id, in progress, on shard 0 (C's
    hash). C's root then declares `story` (shard 1): shard 1 takes the trace, and shard 0,
    once shard 1's rows are written, drops its own task and its rollups' counts."""
    database = "moves_" + order.split("'")[0]
    _store(runner, database)
    runner.insert(f"{database}.otel_traces", _request() + _work() + _summary_call())
    _every_shard(runner, database, 3_100)
    before = _state(runner, database)
    assert [(t["task_id"], t["finished"]) for t in before["tasks"]] == [(C, False),
                                                                        ("story", True)]
    assert before["task_minutes"] == [{"finished": 1, "failed": 1, "in_progress": 1}]
    runner.insert(f"{database}.otel_traces", _summary_root())
    shards = SHARDS if order == "trace's shard first" else SHARDS[::-1]
    _every_shard(runner, database, 3_200, shards)  # trace's shard first: its task stays...
    _every_shard(runner, database, 3_300, shards)  # ...until the task's shard wrote its rows
    assert _state(runner, database) == STORY


def test_a_replayed_pass_changes_nothing(runner):
    """Each shard's last pass run again from the same watermark (a crash before it moved)."""
    _store(runner, "replay")
    runner.insert("replay.otel_traces", _request() + _work() + _summary_call())
    _every_shard(runner, "replay", 3_100)
    runner.insert("replay.otel_traces", _summary_root())
    _every_shard(runner, "replay", 3_200)
    _every_shard(runner, "replay", 3_300)
    assert _state(runner, "replay") == STORY
    for shard in SHARDS:
        runner.insert("replay.agentsla_watermarks",
                      [{"shard": str(shard), "watermark_ns": _now(3_200), "version": _now(3_400)}])
        run_pass(runner, "replay", "otel_traces", shard, LATE, _now(3_300))
        assert _state(runner, "replay") == STORY


def test_workers_refuse_rollups_cut_by_an_earlier_versions_trace_rule(runner):
    """A store kept by two shards of a version whose shards owned traces holds two shards'
    rollups and no rule: its workers refuse until `rollups rebuild --shards 2` cuts them by
    task, while a new store's first worker records the task rule and starts."""
    _store(runner, "upgraded")
    rollups.check_shards(runner, "upgraded", Shard(0, 2))  # a new store: rule recorded
    runner.insert("upgraded.otel_traces", _request() + _work() + _summary_call()
                  + _summary_root())
    _every_shard(runner, "upgraded", 3_100)
    rollups.check_shards(runner, "upgraded", Shard(1, 2))  # kept by this version: starts
    runner.execute("truncate table upgraded.agentsla_shard_rule")  # as the old version left it
    with pytest.raises(PermanentError, match=r"earlier agentsla, whose shards owned traces.*"
                                             r"rollups rebuild --store URL --shards 2`"):
        rollups.check_shards(runner, "upgraded", Shard(0, 2))
    rollups.reshard(runner, "upgraded", 2)
    rollups.check_shards(runner, "upgraded", Shard(0, 2))
    assert _state(runner, "upgraded") == STORY
