"""The read store interface over DuckDB: named questions, bound parameters, safe fragments."""

from __future__ import annotations

import math
import re
from importlib import resources
from pathlib import Path

import pyarrow as pa
import pytest

from agentsla.queries._sql import task_filters
from agentsla.queries.rollup import split
from agentsla.queries.store import plain, question_sql
from queryrows import insert, task

ROOT = Path(__file__).resolve().parents[2]


def _asked_questions() -> set[str]:
    """Every question name the code asks a store for (`store.rows("name"` / `.arrow("name"`)."""
    names = set()
    for folder in ("queries", "alerts", "api", "agentsla", "dashboard"):
        for path in (ROOT / folder).rglob("*.py"):
            names |= set(re.findall(r"\.(?:rows|arrow)\(\s*\"([a-z0-9_/]+)\"", path.read_text()))
    return names


def test_every_question_asked_has_its_duckdb_sql():
    asked = _asked_questions()
    assert {"sla_by", "hop_stats", "slo_counts", "findings/evidence_plan"} <= asked
    folder = resources.files("agentsla.queries").joinpath("sql", "duckdb")
    missing = sorted(q for q in asked if not folder.joinpath(f"{q}.sql").is_file())
    assert missing == []


def test_rows_and_arrow_answer_the_same(con, store):
    insert(con, tasks=[task("a", "success"), task("b", "success"), task("c", "failed"),
                       task("d", "in_progress")])
    rows = store.rows("task", {"task_id": "c"})
    assert [(r["task_id"], r["outcome"]) for r in rows] == [("c", "failed")]
    table = store.arrow("task", {"task_id": "c"})
    assert isinstance(table, pa.Table)
    assert table.to_pylist() == rows


def test_parameters_beyond_the_statements_are_not_bound(con, store):
    insert(con, tasks=[task("a", "success")])
    rows = store.rows("task", {"task_id": "a", "start_ns": 0, "anything": "else"})
    assert [r["task_id"] for r in rows] == ["a"]


def test_user_values_are_bound_not_spliced(con, store):
    insert(con, tasks=[task("a", "success")])
    assert store.rows("task", {"task_id": "a' or '1'='1"}) == []


@pytest.mark.parametrize("fragment", [
    "task_type; drop table task_store",   # SQL text
    "outcome",                            # a column, but not a group-by dimension
    "../../etc/passwd",                   # a path
])
def test_a_fragment_must_be_a_snippet_a_dimension_or_nothing(store, fragment):
    with pytest.raises(ValueError, match="no question or snippet"):
        store.rows("sla_by", {"start_ns": 0, "end_ns": 1}, dimension=fragment)


def test_a_whitelisted_dimension_fills_the_placeholder(con, store):
    insert(con, tasks=[task("a", "success", tenant_id="t1"), task("b", "failed", tenant_id="t2")])
    sql = question_sql("duckdb", "sla_by", {"dimension": "tenant_id"})
    assert "select tenant_id as grp" in sql and "{{" not in sql
    rows = store.rows("sla_by", {**split(0, 2**62), **task_filters()},
                      dimension="tenant_id")
    assert sorted(r["grp"] for r in rows) == ["t1", "t2"]


def test_an_empty_fragment_leaves_a_snippet_out():
    with_filter = question_sql("duckdb", "hop_stats", {})
    without = question_sql("duckdb", "hop_stats", {"hop_task_filter": ""})
    assert "select task_id from tasks" in with_filter
    assert "select task_id from tasks" not in without


@pytest.mark.parametrize("question", ["no_such_question", "../store", "findings/../sla_by"])
def test_unknown_questions_are_refused(store, question):
    with pytest.raises(ValueError, match="no question or snippet"):
        store.rows(question)


def test_values_json_cannot_carry_become_none():
    assert plain(math.nan) is None
    assert plain([1.5, math.inf, -math.inf]) == [1.5, None, None]
    assert plain("text") == "text"


def test_a_question_another_engine_answers_is_501_not_a_crash():
    # one task's findings scope its spans in temporary tables on DuckDB only (docs/scale-out.md)
    from agentsla.errors import NotOnThisStore
    with pytest.raises(NotOnThisStore, match="clickhouse store does not answer") as err:
        question_sql("clickhouse", "findings/scope_spans", {})
    assert err.value.status == 501


def test_a_snippet_named_with_a_table_serves_each_table():
    """`{{rollup_tiers(hop_minutes)}}`: the same snippet reads each rollup's two tiers."""
    def code(question: str) -> str:  # the SQL without its comments, spaces collapsed
        sql = re.sub(r"--[^\n]*", "", question_sql("clickhouse", question, {}))
        return re.sub(r"\s+", " ", sql)

    for sql, table in ((code("metrics/hop_counts"), "hop_minutes"),
                       (code("metrics/causes"), "cause_minutes")):
        assert f"select * from {table}_hourly where minute_ns >= {{hr_lo:Int64}}" in sql
        assert f"select * from {table} where (minute_ns >= {{roll_lo:Int64}}" in sql
        assert "{{" not in sql


def test_the_table_placeholder_outside_a_named_snippet_is_refused(monkeypatch):
    from agentsla.queries import store as read_store
    monkeypatch.setattr(read_store, "_read", lambda dialect, name: "select * from {{_}}")
    read_store._fill.cache_clear()
    try:
        with pytest.raises(ValueError, match="outside a snippet named with a table"):
            question_sql("clickhouse", "anything", {})
    finally:
        read_store._fill.cache_clear()
