"""ClickHouse rollups over chdb: re-judged tasks move between minutes and outcomes, and a pass
replayed after a crash between any two of its inserts leaves the rollups (and every answer) as
one clean pass does."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentsla.collector.store.clickhouse import ids, rollups
from agentsla.collector.store.clickhouse.materializer import Shard, run_pass
from agentsla.config import load_config
from agentsla.errors import PermanentError
from agentsla.queries import budget, hops, root_causes, sla, slo
from agentsla.queries.engines.clickhouse import ChdbRunner, ClickHouseStore, prepare
from agentsla.queries.metrics import Totals
from taskanswers import seven_task_answers, task_answers
from test_clickhouse_store import CONFIG, MS, _now, _row, _store

MINUTE_MS = 60_000
M0 = 20_000  # ms after T0 where a minute starts (T0 is 40 s into its minute)
M0_NS = _now(M0)
LATE = replace(CONFIG, late_window=120.0)  # the second pass re-reads the first pass's spans


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    """One chdb session for the module (chdb allows one path per process)."""
    made = ChdbRunner(str(tmp_path_factory.mktemp("chdb")))
    yield made
    made.close()


def _first_spans() -> list[dict]:
    """Minute 0: a child without its root (trace 1, in progress from 10 s), task b finished
    at 30 s (success), children of a trace naming no task (trace 3, in progress from 40 s)."""
    return [_row(1, 2, 1, M0 + 10_000, M0 + 20_000, gen_ai__operation__name="chat",
                 gen_ai__request__model="m"),
            _row(2, 1, None, M0 + 5_000, M0 + 30_000, task__id="b"),
            _row(3, 2, 1, M0 + 40_000, M0 + 50_000)]


def _second_spans() -> list[dict]:
    """Trace 1's root ends in minute 1 (its task moves there, finished); b's late child fell
    back (b turns degraded, same minute); trace 3's root declares task c, ending in minute 1
    (the task keyed by the trace id vanishes)."""
    return [_row(1, 1, None, M0, M0 + 90_000),
            _row(2, 2, 1, M0 + 10_000, M0 + 28_000, fallback__used="true"),
            _row(3, 1, None, M0 + 35_000, M0 + 100_000, task__id="c")]


def _minutes(runner, database: str, tier: str = "") -> list[tuple]:
    """(minute, finished, success, degraded, in progress, rows) of task_minutes (`tier`)."""
    return [tuple(r.values()) for r in runner.arrow(
        f"select minute_ns, sum(finished), sum(success), sum(degraded), sum(in_progress), "
        f"count() from {database}.task_minutes{tier} group by minute_ns order by minute_ns",
        {}).to_pylist()]


def test_re_judged_tasks_move_between_minutes_and_outcomes(runner):
    url = _store(runner, "moves")
    runner.insert("moves.otel_traces", _first_spans())
    run_pass(runner, "moves", url.table, Shard(0, 1), LATE, _now(M0 + 70_000))
    # (minute, finished, success, degraded, in progress, rows): b, and two in progress
    assert _minutes(runner, "moves") == [(M0_NS, 1, 1, 0, 2, 1)]
    runner.insert("moves.otel_traces", _second_spans())
    run_pass(runner, "moves", url.table, Shard(0, 1), LATE, _now(M0 + 130_000))
    # minute 0 keeps b, now degraded; trace 1's task and c finished in minute 1
    assert _minutes(runner, "moves") == [(M0_NS, 1, 0, 1, 0, 1),
                                         (M0_NS + MINUTE_MS * MS, 2, 2, 0, 0, 1)]
    hour = M0_NS // (3600 * 10**9) * 3600 * 10**9  # both minutes in one hour
    assert _minutes(runner, "moves", "_hourly") == [(hour, 3, 2, 1, 0, 1)]
    hop = {(r["minute_ns"], r["hop_name"]): r["calls"] for r in runner.arrow(
        "select minute_ns, hop_name, calls from moves.hop_minutes", {}).to_pylist()}
    # roots end at 30 s (b, minute 0), 90 s and 100 s (minute 1); children at 20, 28, 50 s
    assert hop == {(M0_NS, "POST /ask"): 1, (M0_NS + MINUTE_MS * MS, "POST /ask"): 2,
                   (M0_NS, "m"): 1, (M0_NS, "chat"): 2}


def _task_versions(runner, database: str) -> dict[str, tuple[int, str]]:
    """task -> (version, outcome) of its newest row."""
    return {r["task_id"]: (r["version"], r["outcome"]) for r in runner.arrow(
        f"select task_id, version, outcome from {database}.agentsla_tasks final", {}).to_pylist()}


def test_a_pass_judges_again_only_tasks_with_new_spans(runner):
    """The late window is read for late spans, not to judge its tasks again: a finished task
    with no new span keeps its row; one late span of it makes the next pass judge it again."""
    url = _store(runner, "unjudged")
    runner.insert("unjudged.otel_traces", _first_spans())
    run_pass(runner, "unjudged", url.table, Shard(0, 1), LATE, _now(M0 + 70_000))
    first = _task_versions(runner, "unjudged")
    # nothing new: only the two tasks in progress are judged again (a root may still come)
    again = run_pass(runner, "unjudged", url.table, Shard(0, 1), LATE, _now(M0 + 75_000))
    assert again.tasks == 2 and again.spans == 2
    assert _task_versions(runner, "unjudged")["b"] == first["b"] == (first["b"][0], "success")
    # b's late child ends at 28 s, before the watermark (70 s), inside the late window
    runner.insert("unjudged.otel_traces", [_row(2, 2, 1, M0 + 10_000, M0 + 28_000,
                                                fallback__used="true")])
    late = run_pass(runner, "unjudged", url.table, Shard(0, 1), LATE, _now(M0 + 80_000))
    assert late.tasks == 3
    assert _task_versions(runner, "unjudged")["b"] == (_now(M0 + 80_000), "degraded")


def test_id_lists_asked_in_chunks_give_the_same_rollups(runner, monkeypatch):
    """A pass asks its traces and tasks in chunks of ID_CHUNK ids (ClickHouse stops using the
    primary key for a long list): chunks of one id write what one list writes."""
    for database, chunk in (("one_list", ids.ID_CHUNK), ("chunked", 1)):
        monkeypatch.setattr(ids, "ID_CHUNK", chunk)
        url = _store(runner, database)
        runner.insert(f"{database}.otel_traces", _first_spans())
        run_pass(runner, database, url.table, Shard(0, 1), LATE, _now(M0 + 70_000))
        runner.insert(f"{database}.otel_traces", _second_spans())
        run_pass(runner, database, url.table, Shard(0, 1), LATE, _now(M0 + 130_000))
    assert _minutes(runner, "chunked") == [(M0_NS, 1, 0, 1, 0, 1),
                                           (M0_NS + MINUTE_MS * MS, 2, 2, 0, 0, 1)]
    assert _rollup_rows(runner, "chunked") == _rollup_rows(runner, "one_list")
    assert _span_rows(runner, "chunked") == _span_rows(runner, "one_list")


class Crash(RuntimeError):
    """The injected failure."""


class CrashingRunner:
    """A runner whose writes fail once `after` writes naming `table` went through."""

    def __init__(self, runner, table: str, after: int = 1) -> None:
        self._runner, self._table, self._left = runner, table, after

    def arrow(self, sql, params):
        return self._runner.arrow(sql, params)

    def execute(self, sql, params=None):
        self._write(sql)
        self._runner.execute(sql, params)
        self._count(sql)

    def insert(self, table, rows):
        self._write(table)
        self._runner.insert(table, rows)
        self._count(table)

    def insert_arrow(self, table, data):
        self._write(table)
        self._runner.insert_arrow(table, data)
        self._count(table)

    def _write(self, what: str) -> None:
        if self._left <= 0:
            raise Crash(f"injected crash before {what[:60]}")

    def _count(self, what: str) -> None:
        if f".{self._table} " in f"{what} " or what.endswith(f".{self._table}"):
            self._left -= 1


#: Where the second pass dies: after its journal, its task rows (the trace-keyed task already
#: dropped), its hop_spans, its finding_spans, its span facts (every row written, no rollup
#: rewritten yet), its first rollup's minutes rewritten (task_minutes) but not its hours nor
#: the others, and its budget minutes rewritten but not their self times per hop kind.
CRASHES = [("agentsla_rollup_journal", 1), ("agentsla_tasks", 1), ("agentsla_hop_spans", 1),
           ("agentsla_finding_spans", 1), ("agentsla_span_facts", 1), ("agentsla_task_minutes", 1),
           ("agentsla_budget_minutes", 1), ("agentsla_minute_tasks", 1),
           ("agentsla_unfinished_tasks", 1)]


def _rollup_rows(runner, database: str) -> dict[str, list]:
    """Every rollup's FINAL rows, both tiers (the views)."""
    return {view: runner.arrow(f"select * from {database}.{view} order by all", {}).to_pylist()
            for r in rollups.ROLLUPS for view in (r.duck.table, r.duck.table + "_hourly")}


def _span_rows(runner, database: str) -> dict[str, list]:
    """What the passes wrote per span: the FINAL hop_spans and finding_spans rows."""
    return {view: runner.arrow(f"select * from {database}.{view} order by all", {}).to_pylist()
            for view in ("hop_spans", "finding_spans")}


def _answers(runner, database: str, raw: bool = False) -> list:
    """The aggregate questions over three whole minutes (the rollups unless `raw`)."""
    window = (M0_NS, M0_NS + 3 * MINUTE_MS * MS)
    store = ClickHouseStore(runner)
    runner.execute(f"use {database}")  # the questions name their tables unqualified
    try:
        return [sla.sla_totals(store, *window, raw=raw),
                sla.sla_by(store, *window, "task_type", raw=raw),
                hops.hop_stats(store, *window, raw=raw),
                root_causes.root_causes(store, *window, raw=raw),
                budget.budget_waterfall(store, *window, raw=raw),
                slo.slo_window(store, load_config(), *window, raw=raw)]
    finally:
        runner.execute("use default")


def _second_pass_crashed(runner, clean: str, crashed: str, table: str, after: int = 1):
    """Two stores after the first pass, both given the second spans; the second pass of
    `crashed` crashes after `after` writes naming `table`. Returns the stores' url."""
    for database in (clean, crashed):
        url = _store(runner, database)
        runner.insert(f"{database}.otel_traces", _first_spans())
        run_pass(runner, database, url.table, Shard(0, 1), LATE, _now(M0 + 70_000))
        runner.insert(f"{database}.otel_traces", _second_spans())
    with pytest.raises(Crash):
        run_pass(CrashingRunner(runner, table, after), crashed, url.table, Shard(0, 1), LATE,
                 _now(M0 + 130_000))
    return url


@pytest.mark.parametrize("table, after", CRASHES)
def test_a_pass_replayed_after_a_crash_equals_one_clean_pass(runner, table, after):
    clean, crashed = f"clean_{table}", f"crashed_{table}"
    url = _second_pass_crashed(runner, clean, crashed, table, after)
    for database in (crashed, clean):  # the restarted worker replays; the other runs once
        run_pass(runner, database, url.table, Shard(0, 1), LATE, _now(M0 + 131_000))
    assert _rollup_rows(runner, crashed) == _rollup_rows(runner, clean)
    assert _span_rows(runner, crashed) == _span_rows(runner, clean)
    assert _minutes(runner, crashed) == [(M0_NS, 1, 0, 1, 0, 1),
                                         (M0_NS + MINUTE_MS * MS, 2, 2, 0, 0, 1)]
    # over the rollups (whole minutes) as over raw rows, and as the clean store answers
    assert _answers(runner, crashed) == _answers(runner, clean) \
        == _answers(runner, crashed, raw=True)


def _minute_tasks(runner, database: str) -> list[tuple]:
    """(minute, task, outcome) of every task counted somewhere (agentsla_minute_tasks FINAL)."""
    return [tuple(r.values()) for r in runner.arrow(
        f"select minute_ns, task_id, outcome from {database}.minute_tasks order by all",
        {}).to_pylist()]


def test_a_replay_that_judges_anew_leaves_each_task_counted_once(runner):
    """The crashed attempt wrote trace 1's task at minute 1 (its root ended there) and died
    before its task rows; then a span of trace 1 declares task e, so the replay drops trace 1's
    own task: it must leave minute 1 too, though no stored task row ever said it was there."""
    declares = _row(1, 3, 1, M0 + 60_000, M0 + 95_000, task__id="e")
    clean, crashed = "anew_clean", "anew_crashed"
    url = _second_pass_crashed(runner, clean, crashed, "agentsla_minute_tasks")
    for database in (crashed, clean):
        runner.insert(f"{database}.otel_traces", [declares])
        run_pass(runner, database, url.table, Shard(0, 1), LATE, _now(M0 + 131_000))
    minute_1 = M0_NS + MINUTE_MS * MS
    # b at minute 0 (degraded); c and e (trace 1, ending at 95 s) at minute 1
    assert _minute_tasks(runner, crashed) == [(M0_NS, "b", "degraded"),
                                              (minute_1, "c", "success"),
                                              (minute_1, "e", "success")]
    assert _minutes(runner, crashed) == [(M0_NS, 1, 0, 1, 0, 1), (minute_1, 2, 2, 0, 0, 1)]
    assert _rollup_rows(runner, crashed) == _rollup_rows(runner, clean)
    assert _answers(runner, crashed) == _answers(runner, clean) \
        == _answers(runner, crashed, raw=True)


def _budget_spans() -> list[dict]:
    """Two finished tasks in minute 0: a (root 0-30 s, a 20 s child; budget 60 s) and d
    (root 5-45 s, no budget, no child)."""
    return [_row(4, 1, None, M0, M0 + 30_000, task__id="a", budget__total_ms="60000"),
            _row(4, 2, 1, M0 + 5_000, M0 + 25_000, gen_ai__operation__name="chat",
                 gen_ai__request__model="m"),
            _row(7, 1, None, M0 + 5_000, M0 + 45_000, task__id="d")]


def test_the_budget_rollups_hold_the_stored_self_times(runner):
    """budget_minutes and budget_hop_minutes by hand: durations, budgets, self times."""
    url = _store(runner, "budget")
    runner.insert("budget.otel_traces", _budget_spans())
    run_pass(runner, "budget", url.table, Shard(0, 1), LATE, _now(M0 + 70_000))
    got = runner.arrow("select minute_ns, sum(tasks), sum(tasks_with_budget), "
                       "sum(duration_us), sum(budgeted_duration_us), sum(budget_us) "
                       "from budget.budget_minutes group by minute_ns", {}).to_pylist()
    # 30 s + 40 s of tasks; only a has a budget (60 s)
    assert [tuple(r.values()) for r in got] == [(M0_NS, 2, 1, 70e6, 30e6, 60e6)]
    kinds = {r["hop_kind"]: (r["tasks_with_hop"], r["self_us"], r["budgeted_self_us"])
             for r in runner.arrow("select hop_kind, sum(tasks_with_hop) as tasks_with_hop, "
                                   "sum(self_us) as self_us, sum(budgeted_self_us) as "
                                   "budgeted_self_us from budget.budget_hop_minutes_hourly "
                                   "group by hop_kind", {}).to_pylist()}
    # the gateways keep 10 s (a) and 40 s (d); a's model call 20 s
    assert kinds == {"gateway": (2, 50e6, 10e6), "model": (1, 20e6, 20e6)}


def test_a_rollup_added_later_is_built_at_start_up_for_every_kept_shard(runner):
    """A store kept by two shards before the budget rollups existed: start-up builds them
    per shard, equal to what the passes keep."""
    url = _store(runner, "added")
    runner.insert("added.otel_traces", _budget_spans())
    for k in (0, 1):
        run_pass(runner, "added", url.table, Shard(k, 2), LATE, _now(M0 + 70_000))
    kept = _rollup_rows(runner, "added")
    for rollup in rollups.BY_SOURCE[rollups.TASK][-2:]:  # drop the budget rollups
        assert rollup.duck.table.startswith("budget")
        for tier in rollup.tiers():
            runner.execute(f"drop table added.{tier}")
            runner.execute(f"drop view added.{tier.removeprefix('agentsla_')}")
    prepare(runner, url)
    assert _rollup_rows(runner, "added") == kept
    assert {r["shard"] for r in kept["budget_minutes"]} == {"0/2", "1/2"}


def test_a_store_with_the_older_minute_index_gets_its_tasks_by_minute_at_start_up(runner):
    """A store kept by two shards when the rollups found a minute's tasks through a minute
    index (task ids by minute): start-up writes each shard's tasks at their minutes, as the
    passes keep them, and drops the index; the shards' next passes keep them on."""
    url = _store(runner, "indexed")
    runner.insert("indexed.otel_traces", _first_spans())
    for k in (0, 1):
        run_pass(runner, "indexed", url.table, Shard(k, 2), LATE, _now(M0 + 70_000))
    kept = runner.arrow("select * except version from indexed.agentsla_minute_tasks final "
                        "order by all", {}).to_pylist()
    assert {r["shard"] for r in kept} == {"0/2", "1/2"}
    runner.execute("create table indexed.agentsla_task_minutes_index (minute_ns Int64, shard "
                   "String, task_id String) ENGINE = ReplacingMergeTree ORDER BY (minute_ns, shard, "
                   "task_id)")
    runner.execute("insert into indexed.agentsla_task_minutes_index select minute_ns, shard, "
                   "task_id from indexed.minute_tasks")
    runner.execute("truncate table indexed.agentsla_minute_tasks")
    prepare(runner, url)
    assert runner.arrow("select * except version from indexed.agentsla_minute_tasks final "
                        "order by all", {}).to_pylist() == kept
    assert not runner.arrow("select 1 from system.tables where database = 'indexed' and "
                            "name = 'agentsla_task_minutes_index'", {}).num_rows
    runner.insert("indexed.otel_traces", _second_spans())
    for k in (0, 1):
        run_pass(runner, "indexed", url.table, Shard(k, 2), LATE, _now(M0 + 130_000))
    # (minute, finished, success, degraded, in progress), each shard's rows summed
    assert [m[:5] for m in _minutes(runner, "indexed")] == [
        (M0_NS, 1, 0, 1, 0), (M0_NS + MINUTE_MS * MS, 2, 2, 0, 0)]
    assert [(m, outcome) for m, _, outcome in _minute_tasks(runner, "indexed")] == [
        (M0_NS, "degraded"), (M0_NS + MINUTE_MS * MS, "success"),
        (M0_NS + MINUTE_MS * MS, "success")]


def _aggregates(runner, database: str) -> tuple:
    """/metrics' counters, histograms, sums and tasks in progress (every story minute
    settled), the SLO window over three whole minutes and the burn status at their end."""
    store = ClickHouseStore(runner)
    config = load_config()
    end = M0_NS + 3 * MINUTE_MS * MS
    runner.execute(f"use {database}")
    try:
        totals = Totals(_now(M0 - 600_000))
        totals.advance(store, _now(M0 + 7_200_000))
        return (dict(totals.counters), dict(totals.histograms), dict(totals.sums_e6),
                sorted(totals.in_progress(store, _now(M0 + 130_000))),
                slo.slo_window(store, config, M0_NS, end), slo.slo_status(store, config, end))
    finally:
        runner.execute("use default")


def test_metrics_and_slo_windows_read_the_rollups_not_the_rows(runner):
    """With the task and hop_spans rows gone, /metrics and the SLO windows over whole minutes
    answer as before: they read only the rollups."""
    url = _store(runner, "rolled")
    runner.insert("rolled.otel_traces", _first_spans())
    run_pass(runner, "rolled", url.table, Shard(0, 1), LATE, _now(M0 + 70_000))
    runner.insert("rolled.otel_traces", _second_spans())
    run_pass(runner, "rolled", url.table, Shard(0, 1), LATE, _now(M0 + 130_000))
    before = _aggregates(runner, "rolled")
    # by hand: b degraded, trace 1's task and c succeeded; six spans, one of them a model call
    assert sum(before[0]["agentsla_tasks_total"].values()) == 3
    assert before[0]["agentsla_tasks_total"][("", "degraded")] == 1
    assert sum(before[0]["agentsla_hop_calls_total"].values()) == 6
    assert [(r["good"], r["bad"]) for r in before[4]] == [(3, 0)]  # degraded is good (default)
    for table in ("agentsla_tasks", "agentsla_hop_spans"):
        runner.execute(f"truncate table rolled.{table}")
    assert _aggregates(runner, "rolled") == before


def _shard_labels(runner, database: str) -> set[str]:
    return {r["shard"] for r in runner.arrow(
        " union all ".join(f"select shard from {database}.{r.duck.table}{tier}"
                           for r in rollups.ROLLUPS for tier in ("", "_hourly")),
        {}).to_pylist()}


def test_changing_the_shard_count_rebuilds_the_rollups_per_shard(runner):
    """N = 1 -> 2: workers of the new count refuse until the rollups are rebuilt; then the
    two shards answer as one shard does, also after passes of both new shards."""
    for database in ("one_shard", "two_shards"):
        url = _store(runner, database)
        runner.insert(f"{database}.otel_traces", _first_spans() + _budget_spans())
        run_pass(runner, database, url.table, Shard(0, 1), LATE, _now(M0 + 70_000))
    kept = _answers(runner, "one_shard")
    with pytest.raises(PermanentError, match=r"rollups rebuild --store URL --shards 2"):
        rollups.check_shards(runner, "two_shards", Shard(1, 2))
    lines: list[str] = []
    rollups.reshard(runner, "two_shards", 2, lines.append)
    assert [line.split(":")[0] for line in lines[1:3]] == ["shard 0/2", "shard 1/2"]
    assert _shard_labels(runner, "two_shards") == {"0/2", "1/2"}  # traces 1, 4 / 2, 3, 7
    assert _answers(runner, "two_shards") == kept
    rollups.check_shards(runner, "two_shards", Shard(1, 2))  # no error now
    with pytest.raises(PermanentError, match="shards 0/2, 1/2, not for 1 shard"):
        rollups.check_shards(runner, "two_shards", Shard(0, 1))
    for database, shards in (("one_shard", [Shard(0, 1)]),
                             ("two_shards", [Shard(0, 2), Shard(1, 2)])):
        runner.insert(f"{database}.otel_traces", _second_spans())
        for shard in shards:  # the new shards start from the old one's watermark
            run_pass(runner, database, url.table, shard, LATE, _now(M0 + 130_000))
    assert _answers(runner, "two_shards") == _answers(runner, "one_shard") \
        == _answers(runner, "two_shards", raw=True)
    # by hand: minute 0 holds b (degraded), a and d; minute 1 trace 1's task and c; with two
    # shards each minute has a row of each (b, d / a; c / trace 1)
    one, two = _minutes(runner, "one_shard"), _minutes(runner, "two_shards")
    assert [m[:5] for m in two] == [m[:5] for m in one] \
        == [(M0_NS, 3, 2, 1, 0), (M0_NS + MINUTE_MS * MS, 2, 2, 0, 0)]
    assert [m[5] for m in one] == [1, 1] and [m[5] for m in two] == [2, 2]


_CLI_SCRIPT = """
import sys
from agentsla.cli import main
from agentsla.collector.store.clickhouse.materializer import Shard, run_pass
from agentsla.collector.store.clickhouse.url import parse_store_url
from agentsla.queries.engines.clickhouse import open_runner
sys.path[:0] = [{tests!r}, {root!r}]  # this module and the helpers it imports
from test_clickhouse_rollups import LATE, M0, _first_spans, _now

url = parse_store_url({store!r})
runner = open_runner(url)
runner.insert("default.otel_traces", _first_spans())
run_pass(runner, "default", url.table, Shard(0, 1), LATE, _now(M0 + 70_000))
runner.close()
codes = [main(["rollups", "rebuild", "--store", {store!r}, "--shards", "2"]),
         main(["materialize", "--store", {store!r}, "--shard", "0/1", "--once"]),
         main(["rollups", "rebuild", "--store", {store!r}]),
         main(["rollups", "rebuild", "--shards", "2", "--data-dir", {store_dir!r}])]
print("codes", codes)
"""


def test_the_rebuild_command_and_a_worker_of_the_old_count(tmp_path):
    """`agentsla rollups rebuild --store URL --shards 2` in a process of its own (chdb: one
    data path a process): it logs each shard; a worker of the old count then exits 2 naming
    the command; --shards is required on ClickHouse and refused on DuckDB."""
    import subprocess
    import sys
    from pathlib import Path

    script = _CLI_SCRIPT.format(tests=str(Path(__file__).parent),
                                root=str(Path(__file__).parents[2]),
                                store=f"chdb://{tmp_path / 'store'}",
                                store_dir=str(tmp_path / "duck"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert "codes [0, 2, 2, 2]" in done.stdout, done.stderr[-2000:]
    assert "shard 0/2: rollups rebuilt (1/2)" in done.stderr
    assert "shard 1/2: rollups rebuilt (2/2)" in done.stderr
    assert "rollups rebuilt for 2 shard(s)" in done.stderr
    assert "run `agentsla rollups rebuild --store URL --shards 1`" in done.stderr
    assert "needs --shards M" in done.stderr and "DuckDB's rollups have no shards" in done.stderr


SECOND_MS, HOUR_MS = 1_000, 3_600_000
H1 = 2_000_000  # ms after T0 where an hour starts (T0 is 1,600 s into its hour)
#: [from, to) of a window holding three whole hours, the minutes around them and ragged edges
HOURS_WINDOW = (_now(2 * SECOND_MS), _now(H1 + 3 * HOUR_MS + 630 * SECOND_MS))
TASK_TABLES = ("task_minutes", "task_histograms", "cause_minutes", "budget_minutes",
               "budget_hop_minutes")


def _hours_spans() -> list[dict]:
    """Seven one-root tasks of distinct durations ending: a in the window's ragged first
    minute, b in a whole minute before the first whole hour, c, d and e (failed, its tool call
    timed out) inside the three whole hours, f in a whole minute after them, g in the ragged
    last minute."""
    ends = {"a": 5_000, "b": H1 - 1_800_000, "c": H1 + 1_200_000, "d": H1 + 4_800_000,
            "e": H1 + 6_000_000, "f": H1 + 3 * HOUR_MS + 300_000,
            "g": H1 + 3 * HOUR_MS + 610_000}
    rows = [_row(t, 1, None, end - 1_000 * (t + 1), end, task__id=task, tenant__id="acme",
                 budget__total_ms="60000")
            for t, (task, end) in enumerate(ends.items(), start=1)]
    rows[4] |= {"StatusCode": "STATUS_CODE_ERROR"}
    rows.append(_row(5, 2, 1, ends["e"] - 3_000, ends["e"] - 1_000, gen_ai__operation__name=
                     "execute_tool", gen_ai__tool__name="search", error__type="timeout"))
    rows[-1] |= {"StatusCode": "STATUS_CODE_ERROR"}
    return rows


def _delete_inner_hours(runner, database: str, tier: str) -> None:
    """Delete the stored rows of the window's three whole hours from every task rollup's tier."""
    for table in TASK_TABLES:
        runner.execute(f"alter table {database}.agentsla_{table}{tier} delete where "
                       f"minute_ns >= {_now(H1)} and minute_ns < {_now(H1 + 3 * HOUR_MS)} "
                       f"settings mutations_sync = 1")


def test_whole_hours_of_a_window_come_from_the_hour_tier(runner):
    """A window of three whole hours, the minutes around them and ragged edges: every task
    question equals its answer over raw rows; it stays so with the inner hours' minute rows
    deleted, and loses the inner hours' three tasks with their hour rows deleted."""
    url = _store(runner, "hours")
    runner.insert("hours.otel_traces", _hours_spans())
    run_pass(runner, "hours", url.table, Shard(0, 1),
             replace(CONFIG, materialize_max_window=6 * HOUR_MS / 1000),
             _now(H1 + 4 * HOUR_MS))
    runner.execute("use hours")
    try:
        store = ClickHouseStore(runner)
        rolled = seven_task_answers(store, HOURS_WINDOW)
        _delete_inner_hours(runner, "hours", "")
        assert task_answers(store, HOURS_WINDOW) == rolled
        _delete_inner_hours(runner, "hours", "_hourly")
        left = sla.sla_totals(store, *HOURS_WINDOW)
        assert (left["finished"], left["failed"]) == (4, 0)
    finally:
        runner.execute("use default")
