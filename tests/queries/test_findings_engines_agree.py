"""Findings are the same on DuckDB and on ClickHouse (chdb, in-process), for all twelve types.

A corpus of OTLP requests, written by hand from the stories below (one trace each), goes into
DuckDB through the normalizer and the writer, and into chdb's otel_traces in the
clickhouseexporter's format, materialized by one pass (as in test_engines_agree.py, whose
helpers build the spans and the exporter's rows). Each test asks both stores for findings and
compares them (types, rules, hops, evidence numbers up to float rounding, examples), and checks
the findings the stories tell on the ClickHouse side. Thresholds that count (calls, retries,
429s, failures, stalls, rejections) are lowered so that one story is enough.
"""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from agentsla.collector.store.clickhouse import schema
from agentsla.config import load_config
from agentsla.queries.engines.clickhouse import ClickHouseStore
from agentsla.queries.engines.duckdb import DuckDBStore
from agentsla.queries.findings import find_findings
from test_engines_agree import SERVER, T0, _span, chdb_with, duck_with

S = 10**9
NOW = T0 + 3600 * S
WINDOW = (T0 - 60 * S, T0 + 1800 * S)

#: Lowered counts: each story shows its shape once.
THRESHOLDS = {"retry_min_calls": 1, "retry_storm_min_retries": 2, "rate_limit_min_absorbed": 1,
              "false_failover_min_failures": 1, "stream_stall_min_calls": 1,
              "saturation_min_rejections": 1}

CHAT = {"gen_ai__operation__name": "chat"}
TOOL = {"gen_ai__operation__name": "execute_tool"}
AGENT = {"gen_ai__operation__name": "invoke_agent"}
TIMED_OUT = {"error": "read timed out",
             "events": [("exception", {"exception.type": "httpx.ReadTimeout"})]}


def _model(name: str) -> dict:
    return {**CHAT, "gen_ai__request__model": name}


def _tool(name: str) -> dict:
    return {**TOOL, "gen_ai__tool__name": name}


def _agent(name: str) -> dict:
    return {**AGENT, "gen_ai__agent__name": name}


def _root(trace: int, task: str, end_ms: int, at: int = 0, **attrs):
    return _span(trace, 1, None, "POST /ask", at, at + end_ms, SERVER, task__id=task,
                 task__type=attrs.pop("task__type", "chat"), **attrs)


def stories() -> list:
    """One trace per story; the comment says which finding it must raise."""
    spans = []
    # ghost: a crawler runs 4 s past its root's end -> ghost_work tool/crawler
    spans += [_root(11, "ghost", 1000),
              _span(11, 2, 1, "crawler", 100, 5000, **_tool("crawler"))]
    # retry: search times out twice and answers on the third try -> retry_amplification
    # attempts_per_call (3 attempts, critical), retried_timeouts (2), retry_storm (2 of 3)
    spans += [_root(12, "retry", 5000),
              _span(12, 2, 1, "search", 10, 2000, retry__attempt=0, hop__timeout_ms=2000,
                    **_tool("search"), **TIMED_OUT),
              _span(12, 3, 1, "search", 2010, 4000, retry__attempt=1, hop__timeout_ms=2000,
                    **_tool("search"), **TIMED_OUT),
              _span(12, 4, 1, "search", 4010, 4500, retry__attempt=2, hop__timeout_ms=2000,
                    **_tool("search"))]
    # inversion: 45 s x 3 attempts under 50 s left -> budget_inversion model/slowmodel
    spans += [_root(13, "inversion", 3000, hop__timeout_ms=60000),
              _span(13, 2, 1, "chat slowmodel", 10, 2000, hop__timeout_ms=45000, retry__max=2,
                    retry__attempt=0, budget__remaining_ms=50000, **_model("slowmodel"))]
    # nested: two sequential 6 s tools under a 10 s agent that timed out ->
    # children_exceed_parent_timeout agent/orchestrator; `parse` started with 4.98 s of the
    # agent's 10 s left -> budget_inversion tool/parse
    spans += [_root(14, "nested", 12000),
              _span(14, 2, 1, "orchestrator", 10, 10010, hop__timeout_ms=10000,
                    **_agent("orchestrator"), **TIMED_OUT),
              _span(14, 3, 2, "fetch", 20, 5020, hop__timeout_ms=6000, **_tool("fetch")),
              _span(14, 4, 2, "parse", 5030, 10000, hop__timeout_ms=6000, **_tool("parse"))]
    # no timeout: a 40 s call of a tool declared without one -> missing_timeout tool/legacy
    spans += [_root(15, "no-timeout", 41000),
              _span(15, 2, 1, "legacy", 10, 40010, hop__timeout_ms=0, **_tool("legacy"))]
    # idle: 14 s of the agent's 20 s between its two lookups -> wait_amplification idle_gaps
    spans += [_root(16, "idle", 21000),
              _span(16, 2, 1, "waiter", 10, 20010, **_agent("waiter")),
              _span(16, 3, 2, "lookup", 20, 1020, **_tool("lookup")),
              _span(16, 4, 2, "lookup", 15020, 16020, **_tool("lookup"))]
    # poll: six status calls every 2 s, the render job they wait for done at 7.05 s and seen
    # by the poll ending at 10.2 s -> wait_amplification polling agent/poller (status), 3.15 s late
    spans += [_root(17, "poll", 13000),
              _span(17, 2, 1, "poller", 10, 12100, **_agent("poller")),
              _span(17, 20, 1, "render", 50, 7050, **_tool("render"))]
    spans += [_span(17, 3 + i, 2, "status", 100 + 2000 * i, 200 + 2000 * i, **_tool("status"))
              for i in range(6)]
    # growing: five research model calls, 2k to 10k input tokens -> context_growth
    # growing_context (task type research)
    spans += [_root(18, "growing", 6000, task__type="research")]
    spans += [_span(18, 2 + i, 1, "chat writer", 10 + 1000 * i, 910 + 1000 * i,
                    gen_ai__usage__input_tokens=2000 * (i + 1), **_model("writer"))
              for i in range(5)]
    # long prompts: claude's timed-out call had a 9k prompt, its others 1k -> context_growth
    # long_prompts_time_out model/claude
    spans += [_root(19, "long-prompt", 9000),
              _span(19, 2, 1, "chat claude", 10, 500, gen_ai__usage__input_tokens=1000,
                    **_model("claude")),
              _span(19, 3, 1, "chat claude", 510, 1000, gen_ai__usage__input_tokens=1000,
                    **_model("claude")),
              _span(19, 4, 1, "chat claude", 1010, 8010, gen_ai__usage__input_tokens=9000,
                    hop__timeout_ms=7000, **_model("claude"), **TIMED_OUT)]
    # absorbed: a 429 the retry hid, then a clean call -> rate_limit_masking model/mini (and
    # 1.5 attempts a call: retry_amplification attempts_per_call, warning)
    spans += [_root(20, "absorbed", 3000),
              _span(20, 2, 1, "chat mini", 10, 500, retry__attempt=0,
                    http__response__status_code=429, error="Too Many Requests",
                    **_model("mini")),
              _span(20, 3, 1, "chat mini", 600, 2900, retry__attempt=1, **_model("mini")),
              _span(20, 4, 1, "chat mini", 2910, 2990, **_model("mini"))]
    # failover: the backup model served the failover and failed too -> false_failover
    spans += [_root(21, "failover", 2000),
              _span(21, 2, 1, "chat primary", 10, 900, http__response__status_code=503,
                    error="Service Unavailable", **_model("primary")),
              _span(21, 3, 1, "chat backup", 910, 1900, fallback__used=True,
                    fallback__kind="backup_model", fallback__to="backup", fallback__from="primary",
                    http__response__status_code=503, error="Service Unavailable",
                    **_model("backup"))]
    # runaway: three model steps of an agent limited to two -> runaway_loop steps_beyond_limit
    spans += [_root(22, "runaway", 4000),
              _span(22, 2, 1, "looper", 10, 3500, agent__loop__limit=2, **_agent("looper"))]
    spans += [_span(22, 3 + i, 2, "chat stepper", 20 + 1000 * i, 900 + 1000 * i,
                    **_model("stepper")) for i in range(3)]
    # capped: an agent stopped by its step limit -> runaway_loop loop_limit_errors agent/capped
    spans += [_root(23, "capped", 2000),
              _span(23, 2, 1, "capped", 10, 1500, error="max steps exceeded",
                    error__type="loop_limit", **_agent("capped"))]
    # duplicate: one idempotency key charged twice (the first charge seen as the client's span
    # and the tool service's, one execution) -> duplicate_side_effect tool/charge, executions
    # the inner span 4 and span 3
    spans += [_root(24, "duplicate", 2000),
              _span(24, 2, 1, "charge", 10, 500, idempotency__key="order-1", **_tool("charge")),
              _span(24, 4, 2, "charge", 20, 490, SERVER, idempotency__key="order-1",
                    **_tool("charge")),
              _span(24, 3, 1, "charge", 600, 1100, idempotency__key="order-1",
                    **_tool("charge"))]
    # stall: a streamed call whose first token took 12 s -> stream_stall model/streamer
    spans += [_root(25, "stall", 15000),
              _span(25, 2, 1, "chat streamer", 10, 14000,
                    gen_ai__response__time_to_first_chunk=12.0, **_model("streamer"))]
    # queue: waits of 0.1 s early in the half hour, 5 s late -> saturation rising_queue_wait
    for i, (at, wait) in enumerate([(0, 100), (60, 100), (120, 100), (1500, 5000),
                                    (1560, 5000), (1620, 5000)]):
        spans += [_root(30 + i, f"queued-{i}", wait + 500, at=at * 1000),
                  _span(30 + i, 2, 1, "jobs", at * 1000 + 10, at * 1000 + 10 + wait,
                        messaging__system="kafka")]
    # rejected: the gateway turned one task away -> saturation rejections at the gateway
    spans += [_root(40, "rejected", 50, task__outcome="rejected")]
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.append(KeyValue(key="service.name",
                                                 value=AnyValue(string_value="gateway")))
    resource.scope_spans.add().spans.extend(spans)
    return request


@pytest.fixture(scope="module")
def duck():
    """DuckDB fed through the normalizer and the writer (its minutes dirty: the raw path)."""
    con = duck_with(stories(), NOW)
    yield DuckDBStore(con)
    con.close()


@pytest.fixture(scope="module", params=[schema.MAP, schema.JSON])
def house(request, tmp_path_factory):
    """chdb with the exporter's table (each variant in turn) holding the stories, materialized
    until caught up (the queue stories span half an hour: several passes)."""
    runner = chdb_with(tmp_path_factory.mktemp("chdb"), request.param, stories(), NOW)
    yield ClickHouseStore(runner)
    runner.close()


def _findings(store, kind=None) -> list[dict]:
    found = find_findings(store, *WINDOW, kind, THRESHOLDS)
    return sorted(found, key=lambda f: (f["type"], f["rule"], str(f["hop"]), str(f["task_type"])))


def _agree(got: list[dict], want: list[dict]) -> None:
    """Equal findings; evidence numbers up to float rounding (sums in another order)."""
    assert [(f["type"], f["rule"], f["severity"], f["hop"], f["task_type"], f["examples"],
             f["first_seen_ns"], f["last_seen_ns"], f["hint"] != "") for f in got] == \
        [(f["type"], f["rule"], f["severity"], f["hop"], f["task_type"], f["examples"],
          f["first_seen_ns"], f["last_seen_ns"], True) for f in want]
    for g, w in zip(got, want):
        assert g["evidence"].keys() == w["evidence"].keys()
        for key, value in w["evidence"].items():
            if isinstance(value, float):
                assert g["evidence"][key] == pytest.approx(value, rel=1e-9), (w["rule"], key)
            else:
                assert g["evidence"][key] == value, (w["rule"], key)


def test_findings_agree(duck, house):
    """Every finding of the stories: same type, rule, severity, hop, evidence and examples."""
    _agree(_findings(house), _findings(duck))


@pytest.mark.parametrize("kind", ["retry_amplification", "budget_inversion", "saturation"])
def test_findings_of_one_kind_agree(duck, house, kind):
    _agree(_findings(house, kind), _findings(duck, kind))


def _task(span: int, task: str) -> dict:
    return {"task_id": task, "span_id": f"{span:016x}"}


#: What the stories tell, by hand: (type, rule, severity, hop or task type) -> examples.
STORY_FINDINGS = {
    ("budget_inversion", "timeout_exceeds_budget_left", "critical", "tool parse"):
        [_task(4, "nested")],
    ("budget_inversion", "timeout_exceeds_budget_left", "warning", "model slowmodel"):
        [_task(2, "inversion")],
    ("budget_inversion", "children_exceed_parent_timeout", "warning", "agent orchestrator"):
        [_task(2, "nested")],
    ("retry_amplification", "attempts_per_call", "critical", "tool search"):
        [_task(4, "retry")],
    # mini: the 429 and its retry are one call (2 attempts), the clean call another: 1.5
    ("retry_amplification", "attempts_per_call", "warning", "model mini"):
        [_task(3, "absorbed"), _task(4, "absorbed")],
    # both timed-out tries took 1.99 s: the greater span id first
    ("retry_amplification", "retried_timeouts", "warning", "tool search"):
        [_task(3, "retry"), _task(2, "retry")],
    # highest attempt number first
    ("retry_amplification", "retry_storm", "critical", "tool search"):
        [_task(4, "retry"), _task(3, "retry"), _task(2, "retry")],
    # the masked call took 2.89 s, the clean one 80 ms: p99 far past 2x
    ("rate_limit_masking", "absorbed_429s", "critical", "model mini"): [_task(3, "absorbed")],
    ("false_failover", "backup_failed", "critical", "model backup"): [_task(3, "failover")],
    ("runaway_loop", "steps_beyond_limit", "critical", "agent looper"): [_task(2, "runaway")],
    ("runaway_loop", "loop_limit_errors", "warning", "agent capped"): [_task(2, "capped")],
    ("duplicate_side_effect", "key_executed_twice", "critical", "tool charge"):
        [_task(4, "duplicate"), _task(3, "duplicate")],
    ("ghost_work", "work_after_cutoff", "warning", "tool crawler"): [_task(2, "ghost")],
    ("missing_timeout", "no_timeout_ran_long", "warning", "tool legacy"):
        [_task(2, "no-timeout")],
    ("wait_amplification", "idle_gaps", "warning", "agent waiter"): [_task(2, "idle")],
    ("wait_amplification", "polling", "warning", "agent poller"): [_task(2, "poll")],
    ("context_growth", "growing_context", "info", "research"): [_task(6, "growing")],
    # claude's prompts: 1k, 1k, then 9k taking 7 s: 3x per call, also a multiplying context
    ("context_growth", "multiplying_context", "warning", "chat"): [_task(4, "long-prompt")],
    ("context_growth", "long_prompts_time_out", "warning", "model claude"):
        [_task(4, "long-prompt")],
    ("stream_stall", "slow_first_token", "warning", "model streamer"): [_task(2, "stall")],
    # the last quarter's waits, longest first (equal: the greater task id)
    ("saturation", "rising_queue_wait", "warning", "queue jobs"):
        [_task(2, "queued-5"), _task(2, "queued-4"), _task(2, "queued-3")],
    ("saturation", "rejections", "warning", "gateway POST /ask"): [_task(1, "rejected")],
}


def _where(finding: dict) -> str:
    hop = finding["hop"]
    return finding["task_type"] if finding["rule"].endswith("_context") else \
        f"{hop['kind']} {hop['name']}"


def test_findings_follow_the_stories(house):
    """Each story raises its finding on ClickHouse, with its examples; all twelve types."""
    from agentsla.contract import FINDING_TYPES

    found = find_findings(house, *WINDOW, None, THRESHOLDS)
    assert {(f["type"], f["rule"], f["severity"], _where(f)): f["examples"]
            for f in found} == STORY_FINDINGS
    assert {f["type"] for f in found} == set(FINDING_TYPES)


def test_story_numbers(house):
    """Evidence numbers by hand for a few stories."""
    by = {(f["rule"], _where(f)): f["evidence"]
          for f in find_findings(house, *WINDOW, None, THRESHOLDS)}
    search = by[("attempts_per_call", "tool search")]
    assert (search["calls"], search["attempts"], search["max_attempts"]) == (1, 3, 3)
    assert by[("retried_timeouts", "tool search")]["retried_timeouts"] == 2
    ghost = by[("work_after_cutoff", "tool crawler")]  # ran 1 s to 5 s, its root ended at 1 s
    assert (ghost["seconds_after"], ghost["spans"], ghost["max_ms_after"]) == (4.0, 1, 4000.0)
    poll = by[("polling", "agent poller")]  # render done at 7.05 s, seen by the poll at 10.2 s
    assert (poll["loops"], poll["late_ms"], poll["interval_ms"]) == (1, 3150.0, 2000.0)
    assert by[("no_timeout_ran_long", "tool legacy")]["max_ms"] == 40000.0
    charge = by[("key_executed_twice", "tool charge")]
    assert (charge["duplicated_keys"], charge["extra_executions"]) == (1, 1)
    steps = by[("steps_beyond_limit", "agent looper")]
    assert (steps["loop_limit"], steps["max_steps"]) == (2, 3)


def test_incident_ghost_work_agrees(duck, house):
    """An incident's impact reads ghost work on both engines (4 s of the crawler)."""
    from agentsla.alerts.incidents.queries import ghost_work

    config = load_config()
    want = ghost_work(duck, config, *WINDOW)
    assert ghost_work(house, config, *WINDOW) == want == {"seconds": 4.0, "tokens": 0, "spans": 1}


#: Tasks whose own findings are compared, one per shape of read: a task's spans found among
#: older tasks (ghost), attempts, poll loops, model-call steps with the task row, an
#: idempotency key's executions, a finished task's outcome.
ONE_TASK_STORIES = ("ghost", "retry", "poll", "long-prompt", "duplicate", "rejected")


def _own_findings(store, task: str) -> list[dict]:
    """What the task's own spans show (the scoped half of find_findings' task answer)."""
    from agentsla.queries.findings import _detect, resolve_thresholds
    from agentsla.queries.findings.scope import task_scope

    with task_scope(store, task, None) as scope:
        found = _detect(scope.store, scope.start_ns, scope.end_ns, None,
                        resolve_thresholds(THRESHOLDS), stored=False)
    return sorted(found, key=lambda f: (f["type"], f["rule"], str(f["hop"]), str(f["task_type"])))


@pytest.mark.parametrize("task", ONE_TASK_STORIES)
def test_one_tasks_own_findings_agree(duck, house, task):
    """Judged on its own spans only, each story's task shows the same findings on both
    engines, and no other task's spans reach them."""
    got = _own_findings(house, task)
    _agree(got, _own_findings(duck, task))
    assert {e["task_id"] for f in got for e in f["examples"]} <= {task}


def test_one_tasks_findings_agree(duck, house):
    """The whole answer for one task (its own findings, plus those of the window around it
    that name it) is the same on both engines."""
    _agree(_task_findings(house, task_id="retry"), _task_findings(duck, task_id="retry"))


def _task_findings(store, **asked) -> list[dict]:
    found = find_findings(store, *WINDOW, None, THRESHOLDS, **asked)
    return sorted(found, key=lambda f: (f["type"], f["rule"], str(f["hop"]), str(f["task_type"])))


def test_one_tasks_findings_follow_its_story(house):
    """Judged alone, the ghost task shows its ghost work (the crawler ran 4 s past the root)
    and nothing of the other stories; its trace names the same task."""
    by_task = find_findings(house, *WINDOW, None, THRESHOLDS, task_id="ghost")
    assert [(f["type"], f["rule"], _where(f), f["examples"]) for f in by_task] == \
        [("ghost_work", "work_after_cutoff", "tool crawler", [_task(2, "ghost")])]
    assert by_task[0]["evidence"]["seconds_after"] == 4.0
    by_trace = find_findings(house, *WINDOW, None, THRESHOLDS, trace_id=f"{11:032x}")
    assert by_trace == by_task


def test_one_unknown_tasks_findings_are_not_found(duck, house):
    """An unknown task or trace is a NotFound (404) on both engines, not an empty list."""
    from agentsla.errors import NotFound

    for store in (duck, house):
        with pytest.raises(NotFound, match="unknown task 'nobody'"):
            find_findings(store, *WINDOW, None, THRESHOLDS, task_id="nobody")
        with pytest.raises(NotFound, match="unknown trace"):
            find_findings(store, *WINDOW, None, THRESHOLDS, trace_id=f"{99:032x}")
