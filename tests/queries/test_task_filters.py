"""The shared task filter (queries._sql.TASK_FILTERS) on every question: `service_name` keeps
the tasks whose root is of that service, through the task for hops; counts computed by hand."""

from __future__ import annotations

import duckdb
import pytest

from agentsla.collector.store.schema import migrate
from agentsla.queries.budget import budget_waterfall
from agentsla.queries.engines.duckdb import DuckDBStore
from agentsla.queries.hops import hop_series, hop_stats
from agentsla.queries.root_causes import root_cause_series, root_causes
from agentsla.queries.sla import sla_by, sla_series, sla_totals
from agentsla.queries.tasks import list_tasks
from queryrows import NS, T0, insert, span, task

START, END = T0, T0 + 60 * NS
STEP = 30 * NS
TOOL = {"ffh_kind": "tool", "ffh_name": "search", "ffh_reason": "timeout"}
MODEL = {"ffh_kind": "model", "ffh_name": "gpt-4", "ffh_reason": "timeout"}


@pytest.fixture(scope="module")
def two_services():
    """Tasks g1 (failed at 10 s) and g2 (success at 20 s) of service gw, b1 (failed at 30 s) of
    billing. Every span's own service is `svc`: the filter must read the task's service."""
    con = duckdb.connect()
    migrate(con)
    tg1, tg2, tb1 = "1" * 32, "2" * 32, "3" * 32
    insert(con, tasks=[
        task("g1", "failed", end_s=10, duration_ms=2000, trace_id=tg1, root_span_id="r", **TOOL),
        task("g2", "success", end_s=20, duration_ms=1000, trace_id=tg2, root_span_id="r"),
        task("b1", "failed", end_s=30, duration_ms=4000, trace_id=tb1, root_span_id="r",
             service_name="billing", **MODEL),
    ], spans=[
        span("r", None, 8000, 10_000, task_id="g1", trace_id=tg1, hop_kind="gateway",
             hop_name="gw"),
        span("x", "r", 8100, 9000, task_id="g1", trace_id=tg1, hop_kind="tool",
             hop_name="search", error_type="timeout"),
        span("r", None, 19_000, 20_000, task_id="g2", trace_id=tg2, hop_kind="gateway",
             hop_name="gw"),
        span("r", None, 26_000, 30_000, task_id="b1", trace_id=tb1, hop_kind="gateway",
             hop_name="gw"),
        span("m", "r", 26_100, 29_000, task_id="b1", trace_id=tb1, hop_kind="model",
             hop_name="gpt-4", error_type="timeout"),
    ])
    yield DuckDBStore(con)
    con.close()


def _budget(cur, service: str | None) -> tuple[int, list[str]]:
    answer = budget_waterfall(cur, START, END, service_name=service)
    return answer["tasks"], sorted(k["hop_kind"] for k in answer["by_hop_kind"])


#: (question, what to read from its answer for one service_name)
QUESTIONS = {
    "sla totals": lambda c, s: sla_totals(c, START, END, service_name=s)["finished"],
    "sla group_by": lambda c, s: [(g["task_type"], g["finished"])
                                  for g in sla_by(c, START, END, "task_type", service_name=s)],
    "sla series": lambda c, s: [b["finished"]
                                for b in sla_series(c, START, END, STEP, service_name=s)],
    "root causes": lambda c, s: [r["ffh_kind"] for r in root_causes(c, START, END,
                                                                    service_name=s)],
    "root-cause series": lambda c, s: [((r["bucket_ns"] - T0) // NS, r["ffh_kind"]) for r in
                                       root_cause_series(c, START, END, STEP, service_name=s)],
    "budget": _budget,
    "tasks": lambda c, s: [t["task_id"] for t in list_tasks(c, START, END, service_name=s)],
    "hops": lambda c, s: sorted((r["hop_kind"], r["calls"])
                                for r in hop_stats(c, START, END, service_name=s)),
    "hop series": lambda c, s: [((r["bucket_ns"] - T0) // NS, r["hop_kind"], r["calls"]) for r in
                                hop_series(c, START, END, STEP, service_name=s)],
}

CASES = [
    # question, service_name, expected
    ("sla totals", None, 3),
    ("sla totals", "gw", 2),                          # g1 g2
    ("sla totals", "billing", 1),                     # b1
    ("sla totals", "gw' or '1'='1", 0),               # bound, not spliced
    ("sla group_by", "billing", [("chat", 1)]),
    ("sla series", None, [2, 1]),                     # [0,30): g1 g2; [30,60): b1
    ("sla series", "gw", [2, 0]),
    ("sla series", "billing", [0, 1]),
    ("root causes", None, ["model", "tool"]),         # tie at 1 task: b1 lost more seconds
    ("root causes", "gw", ["tool"]),
    ("root causes", "billing", ["model"]),
    ("root-cause series", "gw", [(0, "tool")]),
    ("root-cause series", "billing", [(30, "model")]),
    ("budget", None, (3, ["gateway", "model", "tool"])),
    ("budget", "gw", (2, ["gateway", "tool"])),
    ("budget", "billing", (1, ["gateway", "model"])),
    ("tasks", None, ["b1", "g2", "g1"]),
    ("tasks", "gw", ["g2", "g1"]),
    ("tasks", "billing", ["b1"]),
    ("tasks", "svc", []),                             # the spans' own service is not the task's
    ("hops", None, [("gateway", 3), ("model", 1), ("tool", 1)]),
    ("hops", "gw", [("gateway", 2), ("tool", 1)]),
    ("hops", "billing", [("gateway", 1), ("model", 1)]),
    ("hops", "svc", []),
    # spans by end: r(g1) 10 s, x 9 s, r(g2) 20 s in [0,30); r(b1) and m end at 30 s and 29 s
    ("hop series", "gw", [(0, "gateway", 2), (0, "tool", 1)]),
    ("hop series", "billing", [(0, "model", 1), (30, "gateway", 1)]),
]


@pytest.mark.parametrize("question, service, expected", CASES,
                         ids=[f"{q}-{s}" for q, s, _ in CASES])
def test_service_filter(two_services, question, service, expected):
    assert QUESTIONS[question](two_services, service) == expected


def test_service_filter_combines_with_the_others(two_services):
    assert sla_totals(two_services, START, END, task_type="chat", tenant_id="acme",
                      service_name="billing")["finished"] == 1
    assert sla_totals(two_services, START, END, tenant_id="globex",
                      service_name="billing")["finished"] == 0
