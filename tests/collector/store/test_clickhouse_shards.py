"""Materializer shards own tasks, not traces: one task whose traces hash to different shards is
judged whole by the shard of its task id, counted once in the rollups, also when one of its
traces first arrived without declaring it, or is a queue consumer's own trace linked to its
producer's (whatever the order they arrive in); replayed passes change nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentsla.collector.store.clickhouse import rollups
from agentsla.collector.store.clickhouse.materializer import Shard, run_pass
from agentsla.errors import PermanentError
from agentsla.queries.engines.clickhouse import ChdbRunner
from test_clickhouse_store import CONFIG, _now, _row, _store, _tasks

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


# A request through a queue: the gateway's trace C (shard 0 of 2, as `story` hashes to 1:
# test_the_ids_of_the_story_hash_to_both_shards) publishes it; a worker
# consumes it in a trace of its own, B (shard 1), whose entry links to the publishing span (the
# OpenTelemetry messaging conventions: the link required, the parent optional). The worker's
# three model calls fail with 429, so the gateway answers 503. One request, one task.

def _messaging(row: dict, kind: str, links: tuple[tuple[int, int], ...] = ()) -> dict:
    """The row as a PRODUCER or CONSUMER span, its links as the clickhouseexporter writes
    them (trace id, span id)."""
    return {**row, "SpanKind": f"SPAN_KIND_{kind}",
            "Links.TraceId": [f"{t:032x}" for t, _ in links],
            "Links.SpanId": [f"{s:016x}" for _, s in links],
            "Links.TraceState": ["" for _ in links],
            "Links.Attributes": [{"messaging.operation.type": "receive"} for _ in links]}


def _gateway(end_ms: int = 3_000, **attrs) -> list[dict]:
    """Trace C's root (0-3 s unless said), failed with 503 once the work failed."""
    return [_failed(_row(13, 1, None, 0, end_ms, http__response__status_code="503", **attrs))]


def _publish() -> list[dict]:
    """Trace C's producer span (0.1-0.15 s), the request put on the queue."""
    return [_messaging({**_row(13, 2, 1, 100, 150), "SpanName": "ask publish"}, "PRODUCER")]


def _consume(links: tuple[tuple[int, int], ...] = ((13, 2),)) -> list[dict]:
    """Trace B's entry (0.2-2.5 s): a parentless CONSUMER span linking to the producer span."""
    return [_messaging({**_row(12, 11, None, 200, 2_500), "SpanName": "ask process"},
                       "CONSUMER", links)]


def _model_calls() -> list[dict]:
    """Trace B's three model calls (spans 12-14, from 0.3 s), each failing with 429."""
    return [_failed(_row(12, span, 11, start, start + 200, gen_ai__operation__name="chat",
                         gen_ai__request__model="m", http__response__status_code="429"))
            for span, start in ((12, 300), (13, 700), (14, 1_100))]


def _queue_story(task: str) -> dict:
    """After every pass: one task of six spans (both traces), failed, first failing hop the
    worker's first model call (rate limited at 0.5 s, before the gateway's 503 at 3 s), counted
    once in every rollup."""
    return {
        "tasks": [{"task_id": task, "span_count": 6, "finished": True, "outcome": "failed",
                   "ffh_kind": "model", "ffh_name": "m", "ffh_span_id": f"{12:016x}"}],
        "task_traces": [{"task_id": task, "trace_id": t} for t in (B, C)],
        "span_tasks": [{"task_id": task}],
        "task_minutes": [{"finished": 1, "failed": 1, "in_progress": 0}],
        "causes": [{"ffh_kind": "model", "ffh_name": "m", "tasks": 1}],
        "hops": [{"hop_name": "POST /ask", "calls": 1, "errors": 1},
                 {"hop_name": "ask process", "calls": 1, "errors": 0},
                 {"hop_name": "ask publish", "calls": 1, "errors": 0},
                 {"hop_name": "m", "calls": 3, "errors": 3}],
        "hop_tasks": [{"task_id": task}],
    }


#: The orders the spans may arrive in (one pass of every shard after each part), and the task
#: the request ends as: the gateway trace's id, or the task.id its root declares.
QUEUE_ORDERS = {
    "gateway first": ([_gateway() + _publish(), _consume() + _model_calls()], C),
    "worker first": ([_consume() + _model_calls(), _gateway() + _publish()], C),
    "worker's calls before its entry": (
        [_gateway() + _publish(), _model_calls(), _consume()], C),
    "worker's entry, its calls, then the gateway": (
        [_consume(), _model_calls(), _gateway() + _publish()], C),
    "declaring gateway first": (
        [_gateway(task__id="story") + _publish(), _consume() + _model_calls()], "story"),
    "worker first, then the declaring gateway": (
        [_consume() + _model_calls(), _gateway(task__id="story") + _publish()], "story"),
    "publish, worker, then the gateway's root declaring": (
        [_publish(), _consume() + _model_calls(), _gateway(task__id="story")], "story"),
}
SHARDINGS = {"one shard": [Shard(0, 1)], "two shards": SHARDS, "two shards, 1 first": SHARDS[::-1]}


def _deliver(runner, database: str, parts: list[list[dict]], shards: list[Shard]) -> int:
    """Insert each part and pass every shard after it, then pass twice more (a shard drops a
    task another shard took once that one's rows are written); return the last pass's ms."""
    _store(runner, database)
    at = 3_000
    for part in [*parts, [], []]:
        runner.insert(f"{database}.otel_traces", part)
        at += 100
        _every_shard(runner, database, at, shards)
    return at


def _reasons(runner, database: str) -> list[str]:
    return [r["ffh_reason"] for r in runner.arrow(
        f"select ffh_reason from {database}.tasks", {}).to_pylist()]


@pytest.mark.parametrize("sharding", SHARDINGS)
@pytest.mark.parametrize("order", QUEUE_ORDERS)
def test_a_consumer_trace_linked_to_its_producer_joins_its_task(runner, order, sharding):
    """Whatever the order (the consumer's trace before its producer's: a provisional task
    keyed by the producer's trace id, which moves whole when that trace declares a task), and
    whichever shard passes first: one task, blamed on the model."""
    parts, task = QUEUE_ORDERS[order]
    database = f"queue_{list(QUEUE_ORDERS).index(order)}_{list(SHARDINGS).index(sharding)}"
    _deliver(runner, database, parts, SHARDINGS[sharding])
    assert _state(runner, database) == _queue_story(task)
    assert _reasons(runner, database) == ["rate_limited"]


def test_a_batch_consumer_stays_a_task_of_its_own(runner):
    """A consumer entry linking to two producer spans works for two requests at once: no link
    is followed, so the gateway's trace and the worker's are two tasks."""
    _deliver(runner, "batch", [_gateway() + _publish(),
                               _consume(links=((13, 2), (11, 2))) + _model_calls()], SHARDS)
    assert {t: r["span_count"] for t, r in _tasks(runner, "batch").items()} == {B: 4, C: 2}


def _slow_gateway(runner, database: str, shards: list[Shard]) -> int:
    """The worker's trace first (a provisional task keyed by C, shard 0), then passes until
    its spans left every pass's window (no pass reads them again), then the gateway's trace,
    slow (0-130 s), declaring `story` (shard 1); return the last pass's ms."""
    _store(runner, database)
    runner.insert(f"{database}.otel_traces", _consume() + _model_calls())
    _every_shard(runner, database, 2_600, shards)
    _every_shard(runner, database, 125_000, shards)  # the window now starts at 5 s
    runner.insert(f"{database}.otel_traces", _gateway(130_000, task__id="story") + _publish())
    for at in (130_100, 130_200, 130_300):
        _every_shard(runner, database, at, shards)
    return 130_300


@pytest.mark.parametrize("sharding", SHARDINGS)
def test_a_provisional_task_moves_whole_when_its_trace_comes_after_the_window(runner,
                                                                               sharding):
    """No pass reads the worker's trace when the gateway's arrives: the shard of `story`
    finds the provisional task by its key (agentsla_provisional_tasks) and takes its trace,
    and the provisional task's shard drops it."""
    database = f"slow_{list(SHARDINGS).index(sharding)}"
    _slow_gateway(runner, database, SHARDINGS[sharding])
    assert _state(runner, database) == _queue_story("story")


def test_a_replayed_pass_over_a_moved_provisional_task_changes_nothing(runner):
    """Each shard's last passes of the slow gateway's story run again from an earlier
    watermark (a crash before it moved), the move's pass among them."""
    at = _slow_gateway(runner, "queue_replay", SHARDS)
    for shard in SHARDS:
        for mark in (125_000, at - 200, at - 100):  # the move's pass, then the two after it
            runner.insert("queue_replay.agentsla_watermarks",
                          [{"shard": str(shard), "watermark_ns": _now(mark),
                            "version": _now(at + 1_000 + mark)}])
            run_pass(runner, "queue_replay", "otel_traces", shard, LATE, _now(at))
            assert _state(runner, "queue_replay") == _queue_story("story")


def _forward() -> list[dict]:
    """Trace B's producer span (2.0-2.1 s) handing the request on to a second worker, whose
    own trace A is its entry (2.2-2.4 s) linking to that span."""
    return [_messaging({**_row(12, 15, 11, 2_000, 2_100), "SpanName": "ask forward"},
                       "PRODUCER"),
            _messaging({**_row(11, 1, None, 2_200, 2_400), "SpanName": "ask finish"},
                       "CONSUMER", ((12, 15),))]


@pytest.mark.parametrize("sharding", SHARDINGS)
def test_a_chain_of_consumers_resolves_through_its_links(runner, sharding):
    """The second worker's trace first (a provisional task keyed by B), then the first
    worker's (B follows its link: the provisional task B moves whole into one keyed by C),
    then the gateway's declaring `story`: one task of the three traces' eight spans."""
    forwarded, handed = _forward()
    database = f"chain_{list(SHARDINGS).index(sharding)}"
    _deliver(runner, database, [[handed], _consume() + _model_calls() + [forwarded],
                                _gateway(task__id="story") + _publish()], SHARDINGS[sharding])
    assert _state(runner, database)["tasks"] == [
        {"task_id": "story", "span_count": 8, "finished": True, "outcome": "failed",
         "ffh_kind": "model", "ffh_name": "m", "ffh_span_id": f"{12:016x}"}]
    assert _state(runner, database)["task_traces"] == [
        {"task_id": "story", "trace_id": t} for t in (A, B, C)]
