"""Task listing filters and order, task detail trees, traces."""

from __future__ import annotations

import pytest

from agentsla.errors import PermanentError
from agentsla.queries.tasks import get_task, get_trace, list_tasks
from queryrows import NS, T0, insert, span, task

START, END = T0, T0 + 60 * NS
FFH = {"ffh_kind": "tool", "ffh_name": "search", "ffh_reason": "timeout", "ffh_span_id": "x",
       "ffh_detail_span_id": None}


@pytest.fixture
def data(con, store):
    insert(con, tasks=[
        task("t1", "failed", end_s=30, trace_id="f" * 32, root_span_id="r", **FFH),
        task("t2", "success", end_s=40, task_type="search"),
        task("t3", "in_progress", start_s=50),
        task("t4", "success", end_s=70),  # after the window
    ], spans=[
        span("r", None, 0, 1000, hop_kind="gateway"),
        span("a", "r", 10, 900, hop_kind="agent"),
        span("x", "a", 20, 500, hop_kind="tool", hop_name="search", error_type="timeout"),
        span("y", "a", 510, 800, hop_kind="model"),
        span("o", "gone", 5, 50, hop_kind="cache"),            # parent never arrived
        span("c1", "c2", 2, 3, hop_kind="other"),               # malformed: a parent cycle
        span("c2", "c1", 2, 3, hop_kind="other"),
    ])
    return store


@pytest.mark.parametrize("filters, ids", [
    ({}, ["t3", "t2", "t1"]),                      # newest first; in progress by start
    ({"outcome": "in_progress"}, ["t3"]),
    ({"outcome": "failed", "ffh_kind": "tool", "ffh_name": "search"}, ["t1"]),
    ({"task_type": "search"}, ["t2"]),
    ({"limit": 2}, ["t3", "t2"]),
    ({"ffh_name": "search' or '1'='1"}, []),
])
def test_list_filters(data, filters, ids):
    assert [t["task_id"] for t in list_tasks(data, START, END, **filters)] == ids


@pytest.mark.parametrize("kwargs, message", [
    ({"outcome": "bad"}, "bad outcome 'bad'"), ({"limit": 0}, "bad limit 0"),
    ({"limit": 1001}, "bad limit 1001")])
def test_list_refuses(data, kwargs, message):
    with pytest.raises(PermanentError, match=message):
        list_tasks(data, START, END, **kwargs)


def test_task_detail_tree(data):
    got = get_task(data, "t1")
    assert got["first_failing_hop"] == {"kind": "tool", "name": "search", "reason": "timeout",
                                        "span_id": "x", "detail_span_id": None}
    assert got["end"] == "2023-11-14T22:13:50.000Z"
    tops = [s["span_id"] for s in got["spans"]]
    assert tops == ["r", "c1", "c2", "o"]  # by start; the orphan and the cycle stay on top
    root = got["spans"][0]
    assert [c["span_id"] for c in root["children"]] == ["a"]
    assert [c["span_id"] for c in root["children"][0]["children"]] == ["x", "y"]
    assert root["attributes"] == {"k": "r"} and root["events"] == [] and not got["spans_truncated"]
    assert get_task(data, "t2")["first_failing_hop"] is None
    assert get_task(data, "nope") is None


def test_trace(data):
    got = get_trace(data, "f" * 32)
    assert got["task_ids"] == ["t1"] and got["spans"][0]["span_id"] == "r"
    assert get_trace(data, "0" * 32) is None
