"""Each finding: a trace shape that must raise it and a near miss that must not (cases as data)."""

from __future__ import annotations

import pytest
from shapes import Trace, healthy_task, shifted
from spanfactory import BASE_NS

from agentsla.contract import FINDING_TYPES
from agentsla.queries.findings import find_findings

EVERYTHING = (BASE_NS - 10**12, BASE_NS + 10**15)  # 11 days: every slot


def _rows(*traces: Trace) -> list[dict]:
    return [r for t in traces for r in t.rows]


# -- budget_inversion ---------------------------------------------------------------------------

def inverted_retries():
    # the incident: 45 s read timeout × 3 attempts under a 60 s gateway
    t = Trace(root_end_ms=50_000, error_type="timeout", status_code="error")
    t.child(t.root, "model", "gpt-4o", 10, 45_010, hop_timeout_ms=45_000, retry_max=2,
            retry_attempt=0, error_type="timeout")
    return _rows(t)


def fitting_timeouts():
    # 15 s × 2 attempts = 30 s fits the 60 s gateway
    t = Trace(root_end_ms=2_000)
    t.child(t.root, "model", "gpt-4o", 10, 1_000, hop_timeout_ms=15_000, retry_max=1)
    return _rows(t)


def propagated_budget_too_small():
    # the span itself says 5 s of budget were left; its timeout is 10 s
    t = Trace(root_end_ms=2_000, hop_timeout_ms=0, budget_total_ms=None)
    t.child(t.root, "tool", "search", 10, 500, hop_timeout_ms=10_000, budget_remaining_ms=5_000)
    return _rows(t)


def untimed_long_call_under_gateway():
    # timeout 0 is a missing timeout, never an inversion, however long it ran
    t = Trace(root_end_ms=59_000)
    t.child(t.root, "tool", "crawler", 10, 58_000, hop_timeout_ms=0)
    return _rows(t)


def _sequential_children(duration_ms: float):
    # 3 tool calls started 6 s apart, each allowed 10 s, under an agent allowed 20 s, which
    # timed out
    t = Trace(root_end_ms=21_000, error_type="timeout", status_code="error")
    agent = t.child(t.root, "agent", "planner", 0, 20_000, hop_timeout_ms=20_000,
                    error_type="timeout")
    for i in range(3):
        start = 100 + i * 6000
        t.child(agent, "tool", "fetch", start, start + duration_ms, hop_timeout_ms=10_000)
    return _rows(t)


def children_sum_past_parent():
    return _sequential_children(5000)


def children_sum_past_parent_stamped_in_ms():
    # the same story from the OpenTelemetry JS SDK, which stamps starts in whole milliseconds:
    # each call seems to start 0.5 ms before the one before it ended; still one by one
    return _sequential_children(6000.5)


def children_sum_past_parent_in_parallel():
    # the same calls in parallel: their timeouts do not add up
    t = Trace(root_end_ms=21_000, error_type="timeout", status_code="error")
    agent = t.child(t.root, "agent", "planner", 0, 20_000, hop_timeout_ms=20_000,
                    error_type="timeout")
    for _ in range(3):
        t.child(agent, "tool", "fetch", 100, 5100, hop_timeout_ms=10_000)
    return _rows(t)


# -- missing_timeout ----------------------------------------------------------------------------

def untimed_fast_tool():
    t = Trace(root_end_ms=1_000)
    t.child(t.root, "tool", "calc", 10, 210, hop_timeout_ms=0)
    return _rows(t)


def unknown_timeout_long_call():
    # no timeout attribute at all (null) is unknown, not missing
    t = Trace(root_end_ms=50_000)
    t.child(t.root, "tool", "crawler", 10, 45_000)
    return _rows(t)


# -- retry_amplification ------------------------------------------------------------------------

def _calls(attempt_errors: list[list[str | None]], at_ms: float = 0.0, spacing: float = 2_000):
    traces = []
    for i, errors in enumerate(attempt_errors):
        t = Trace(at_ms=at_ms + i * spacing, root_end_ms=1_900)
        clock = 10.0
        for attempt, error in enumerate(errors):
            t.child(t.root, "model", "gpt-4o", clock, clock + 100, hop_timeout_ms=5_000,
                    retry_max=3, retry_attempt=attempt, error_type=error,
                    status_code="error" if error else "unset")
            clock += 110
        traces.append(t)
    return _rows(*traces)


def three_attempts_per_call():
    # 10 calls of 3 attempts, one call a minute: no storm
    return _calls([["server_error", "server_error", None]] * 10, spacing=60_000)


def occasional_retry():
    return _calls([["connection_error", None]] + [[None]] * 9)


def retried_timeout():
    return _calls([["timeout", None]])


def retry_storm():
    # 25 calls in one minute, each retried: also 2 attempts per call
    return _calls([["server_error", None]] * 25, spacing=1_000)


# -- ghost_work ---------------------------------------------------------------------------------

def model_after_root_ended():
    t = Trace(root_end_ms=10_000, error_type="timeout", status_code="error")
    t.child(t.root, "model", "gpt-4o", 100, 25_000, hop_timeout_ms=30_000, input_tokens=4000,
            output_tokens=800)
    return _rows(t)


def child_ends_with_root():
    t = Trace(root_end_ms=10_000)
    t.child(t.root, "model", "gpt-4o", 100, 9_990, hop_timeout_ms=30_000)
    return _rows(t)


# -- wait_amplification -------------------------------------------------------------------------

def polling_loop():
    t = Trace(root_end_ms=31_000)
    agent = t.child(t.root, "agent", "waiter", 0, 30_000, hop_timeout_ms=40_000)
    for i in range(10):
        t.child(agent, "tool", "job_status", i * 2_000, i * 2_000 + 100, hop_timeout_ms=1_000)
    return _rows(t)


def idle_parent():
    t = Trace(root_end_ms=21_000)
    agent = t.child(t.root, "agent", "planner", 0, 20_000, hop_timeout_ms=40_000)
    t.child(agent, "model", "gpt-4o", 0, 1_000, hop_timeout_ms=10_000)
    t.child(agent, "model", "gpt-4o", 15_000, 16_000, hop_timeout_ms=10_000)
    return _rows(t)


def retry_backoff_is_not_idle():
    # a 429, then 10 s of backoff before the retry: retry behaviour, not an idle parent
    t = Trace(root_end_ms=13_000)
    agent = t.child(t.root, "agent", "planner", 0, 12_000, hop_timeout_ms=40_000)
    model = dict(hop_timeout_ms=10_000, retry_max=1)
    t.child(agent, "model", "gpt-4o", 10, 110, retry_attempt=0, error_type="rate_limited",
            status_code="error", **model)
    t.child(agent, "model", "gpt-4o", 10_110, 11_000, retry_attempt=1, **model)
    return _rows(t)


def busy_parent():
    t = Trace(root_end_ms=6_000)
    agent = t.child(t.root, "agent", "planner", 0, 5_500, hop_timeout_ms=40_000)
    for i in range(5):
        t.child(agent, "model", "gpt-4o", i * 1_000 + 10, i * 1_000 + 990, hop_timeout_ms=10_000)
    return _rows(t)


# -- context_growth -----------------------------------------------------------------------------

def _growing(tokens: list[int]):
    t = Trace(root_end_ms=20_000)
    for i, n in enumerate(tokens):
        t.child(t.root, "model", "gpt-4o", i * 1_000 + 10, i * 1_000 + 900, hop_timeout_ms=30_000,
                input_tokens=n)
    return _rows(t)


def growing_context():
    return _growing([2_000, 3_500, 5_000, 6_500, 8_000, 9_500])


def growing_but_small():
    return _growing([1_000, 2_000, 3_000, 4_000, 5_000, 6_000])


def growing_then_trimmed():
    return _growing([2_000, 3_500, 5_000, 2_500, 8_000, 9_500])


def _prompts(timed_out_tokens: int):
    t = Trace(root_end_ms=50_000)
    for i in range(10):
        t.child(t.root, "model", "gpt-4o", i * 100, i * 100 + 900, hop_timeout_ms=30_000,
                input_tokens=1_000)
    for _ in range(2):  # two calls in parallel, both cut at their 30 s timeout
        t.child(t.root, "model", "gpt-4o", 1_000, 31_000, hop_timeout_ms=30_000,
                input_tokens=timed_out_tokens, error_type="timeout")
    return _rows(t)


def long_prompts_time_out():
    return _prompts(30_000)


def short_prompts_time_out():
    return _prompts(1_100)


def long_prompts_cut_by_deadline():
    # a growing conversation whose late calls (the longest prompts) get only what is left of
    # a nearly spent budget as their timeout: they time out after 0.8 s while their peers take
    # 2-3 s; the deadline, not the prompt, cut them short
    t = Trace(root_end_ms=50_000)
    for i in range(10):
        t.child(t.root, "model", "gpt-4o", i * 3_000, i * 3_000 + 2_000 + 100 * i,
                input_tokens=1_000 + 100 * i)
    for _ in range(2):  # two calls in parallel, both cut at the 0.8 s left
        t.child(t.root, "model", "gpt-4o", 31_000, 31_800, hop_timeout_ms=800,
                input_tokens=4_000, error_type="timeout")
    return _rows(t)


# -- rate_limit_masking -------------------------------------------------------------------------

def absorbed_429s():
    return _calls([["rate_limited", "rate_limited", None]] * 3 + [[None]] * 5)


def visible_429s():
    # the 429s won: every call failed, nothing is masked
    return _calls([["rate_limited", "rate_limited"]] * 5)


def few_absorbed_429s():
    return _calls([["rate_limited", None]] * 2 + [[None]] * 5)


def rare_absorbed_429s():
    # 6 of 200 calls (3 %) absorbed a 429: enough 429s, but the retry working, not a storm
    return _calls([["rate_limited", None]] * 6 + [[None]] * 194)


# -- false_failover -----------------------------------------------------------------------------

def _failovers(error: str | None, n: int = 3, caller_marks: bool = False):
    traces = []
    for i in range(n):
        marks = dict(fallback_kind="backup_model", fallback_from="gpt-4o",
                     fallback_to="backup-model") if caller_marks else {}
        t = Trace(at_ms=i * 5_000, root_end_ms=4_000, fallback_used=True, **marks)
        t.child(t.root, "model", "gpt-4o", 10, 100, hop_timeout_ms=10_000,
                error_type="rate_limited", status_code="error")
        t.child(t.root, "model", "backup-model", 110, 900, hop_timeout_ms=10_000,
                fallback_used=True, fallback_kind="backup_model", fallback_from="gpt-4o",
                fallback_to="backup-model", error_type=error,
                status_code="error" if error else "unset")
        traces.append(t)
    return _rows(*traces)


def failing_backup():
    return _failovers("rate_limited")


def working_backup():
    return _failovers(None)


def failing_backup_marked_twice():
    # the caller marks the failover too: still one failover per trace
    return _failovers("rate_limited", caller_marks=True)


def cached_fallback_of_a_failed_caller():
    # a cached result served by a caller that then ran out of budget: a fallback, not a failover
    traces = []
    for i in range(3):
        t = Trace(at_ms=i * 5_000, root_end_ms=4_000)
        agent = t.child(t.root, "agent", "orders", 0, 3_900, hop_timeout_ms=10_000,
                        fallback_used=True, fallback_kind="cached", fallback_from="orders_db",
                        fallback_to="orders-cache", error_type="budget_exhausted",
                        status_code="error")
        t.child(agent, "cache", "get orders-cache", 3_800, 3_810, hop_timeout_ms=1_000,
                fallback_used=True, fallback_kind="cached")
        traces.append(t)
    return _rows(*traces)


# -- runaway_loop -------------------------------------------------------------------------------

def _loop(limit: int, steps: int, **agent_kw):
    t = Trace(root_end_ms=20_000)
    agent = t.child(t.root, "agent", "planner", 0, 19_000, hop_timeout_ms=30_000,
                    loop_limit=limit, **agent_kw)
    for i in range(steps):
        t.child(agent, "model", "gpt-4o", i * 1_000 + 10, i * 1_000 + 900, hop_timeout_ms=10_000)
    return _rows(t)


def loop_past_limit():
    return _loop(limit=3, steps=5)


def loop_within_limit():
    return _loop(limit=5, steps=5)


def loop_stopped_by_limit():
    return _loop(limit=5, steps=5, error_type="loop_limit", status_code="error")


# -- duplicate_side_effect ----------------------------------------------------------------------

def _payments(second_error: str | None):
    first, second = Trace(root_end_ms=1_000), Trace(at_ms=5_000, root_end_ms=1_000)
    key = f"order-{first.trace_id}"
    first.child(first.root, "tool", "charge_card", 10, 500, hop_timeout_ms=5_000,
                idempotency_key=key)
    second.child(second.root, "tool", "charge_card", 10, 500, hop_timeout_ms=5_000,
                 idempotency_key=key, error_type=second_error,
                 status_code="error" if second_error else "unset")
    return _rows(first, second)


def charged_twice():
    return _payments(None)


def second_charge_refused():
    return _payments("server_error")


def one_key_two_hops():
    # the order's key passed along: the card charged once, the ledger written once
    t = Trace(root_end_ms=1_000)
    key = f"order-{t.trace_id}"
    t.child(t.root, "tool", "charge_card", 10, 400, hop_timeout_ms=5_000, idempotency_key=key)
    t.child(t.root, "storage", "ledger", 450, 500, hop_timeout_ms=5_000, idempotency_key=key)
    return _rows(t)


# -- stream_stall -------------------------------------------------------------------------------

def _streams(slow_ttft: float):
    t = Trace(root_end_ms=40_000)
    for i in range(10):
        ttft = slow_ttft if i < 3 else 400.0
        t.child(t.root, "model", "gpt-4o", i * 100, i * 100 + ttft + 500, hop_timeout_ms=30_000,
                ttft_ms=ttft)
    return _rows(t)


def slow_first_tokens():
    return _streams(15_000.0)


def brisk_first_tokens():
    return _streams(2_000.0)


# -- saturation ---------------------------------------------------------------------------------

def _queue(late_wait: float):
    traces = []
    for i in range(10):
        wait = 100.0 if i < 5 else late_wait
        t = Trace(at_ms=i * 10_000, root_end_ms=wait + 1_000)
        t.child(t.root, "queue", "jobs", 0, wait, hop_timeout_ms=30_000)
        traces.append(t)
    return _rows(*traces)


def rising_queue():
    # 100 ms, then 15 s of a 60 s budget
    return _queue(15_000.0)


def rising_queue_within_budget():
    # 100 ms, then 5 s: 50 × more, but most of the 60 s budget is left
    return _queue(5_000.0)


def steady_queue():
    return _queue(120.0)


def _rejected(n: int):
    traces = [Trace(at_ms=i * 1_000, root_end_ms=50, error_type="rejected", status_code="error",
                    http_status=503) for i in range(n)]
    traces += [Trace(at_ms=100_000 + i * 1_000, root_end_ms=500) for i in range(20)]
    return _rows(*traces)


def many_rejections():
    return _rejected(6)


def few_rejections():
    return _rejected(2)


CASES = [
    # (shape, the (type, rule) pairs it must raise, nothing else)
    (inverted_retries, {("budget_inversion", "timeout_exceeds_budget_left")}),
    (fitting_timeouts, set()),
    (propagated_budget_too_small, {("budget_inversion", "timeout_exceeds_budget_left")}),
    (untimed_long_call_under_gateway, {("missing_timeout", "no_timeout_ran_long")}),
    # ... and its third call started with 7.9 s left under a 10 s timeout
    (children_sum_past_parent, {("budget_inversion", "children_exceed_parent_timeout"),
                                ("budget_inversion", "timeout_exceeds_budget_left")}),
    (children_sum_past_parent_stamped_in_ms,
     {("budget_inversion", "children_exceed_parent_timeout"),
      ("budget_inversion", "timeout_exceeds_budget_left")}),
    (children_sum_past_parent_in_parallel, set()),
    (untimed_fast_tool, set()),
    (unknown_timeout_long_call, set()),
    (three_attempts_per_call, {("retry_amplification", "attempts_per_call")}),
    (occasional_retry, set()),
    (retried_timeout, {("retry_amplification", "retried_timeouts")}),
    (retry_storm, {("retry_amplification", "retry_storm"),
                   ("retry_amplification", "attempts_per_call")}),
    (model_after_root_ended, {("ghost_work", "work_after_cutoff")}),
    (child_ends_with_root, set()),
    (polling_loop, {("wait_amplification", "polling")}),
    (idle_parent, {("wait_amplification", "idle_gaps")}),
    (busy_parent, set()),
    (retry_backoff_is_not_idle, set()),
    (growing_context, {("context_growth", "growing_context")}),
    (growing_but_small, set()),
    (growing_then_trimmed, set()),
    (long_prompts_time_out, {("context_growth", "long_prompts_time_out")}),
    (short_prompts_time_out, set()),
    (long_prompts_cut_by_deadline, set()),
    (absorbed_429s, {("rate_limit_masking", "absorbed_429s")}),
    (visible_429s, set()),
    (few_absorbed_429s, set()),
    (rare_absorbed_429s, set()),
    (failing_backup, {("false_failover", "backup_failed")}),
    (working_backup, set()),
    (failing_backup_marked_twice, {("false_failover", "backup_failed")}),
    (cached_fallback_of_a_failed_caller, set()),
    (loop_past_limit, {("runaway_loop", "steps_beyond_limit")}),
    (loop_within_limit, set()),
    (loop_stopped_by_limit, {("runaway_loop", "loop_limit_errors")}),
    (charged_twice, {("duplicate_side_effect", "key_executed_twice")}),
    (second_charge_refused, set()),
    (one_key_two_hops, set()),
    (slow_first_tokens, {("stream_stall", "slow_first_token")}),
    (brisk_first_tokens, set()),
    (rising_queue, {("saturation", "rising_queue_wait")}),
    (rising_queue_within_budget, set()),
    (steady_queue, set()),
    (many_rejections, {("saturation", "rejections")}),
    (few_rejections, set()),
]


SLOT_NS = 3600 * 10**9  # each shape gets an hour of its own in one shared store
_NAMES = ("hop_name", "name", "model", "tool", "agent", "fallback_from", "fallback_to", "task_type")


def _tagged(rows: list[dict], index: int) -> list[dict]:
    """Move a shape into hour `index` and suffix its names with `#index`, so that each finding
    (aggregated per hop or task type) tells which shape raised it."""
    return [{**r, **{k: f"{r[k]}#{index}" for k in _NAMES if r[k] is not None}}
            for r in shifted(rows, index * SLOT_NS)]


def _case_of(finding: dict) -> int:
    hop = finding["hop"] or {}
    return int((hop.get("name") or finding["task_type"]).rsplit("#", 1)[1])


@pytest.fixture(scope="module")
def found_by_case(load_module):
    """Every case's findings, from one store and one pass (one query per rule, not per case)."""
    rows = [r for i, (shape, _) in enumerate(CASES) for r in _tagged(shape(), i)]
    by_case: dict[int, set] = {i: set() for i in range(len(CASES))}
    hints: dict[int, list] = {i: [] for i in range(len(CASES))}
    found = find_findings(load_module(rows), *EVERYTHING, None, {})
    for f in found:
        by_case[_case_of(f)].add((f["type"], f["rule"]))
        hints[_case_of(f)].append(f["hint"])
    return by_case, hints, found


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0].__name__ for c in CASES])
def test_shape_raises_exactly_its_findings(found_by_case, index):
    by_case, hints, _ = found_by_case
    assert by_case[index] == CASES[index][1], hints[index]


def test_a_failover_marked_twice_counts_once(found_by_case):
    *_, found = found_by_case
    index = [c[0] for c in CASES].index(failing_backup_marked_twice)
    (f,) = [f for f in found if f["hop"]["name"] == f"backup-model#{index}"]
    assert f["evidence"] == {"failovers": 3, "failed_failovers": 3, "failure_share": 1.0}
    assert f["hint"].startswith(f"failover from gpt-4o#{index} to model backup-model#{index} "
                                "failed 3 of 3 times (100 %, mostly rate_limited)")


def test_every_finding_is_well_formed(found_by_case):
    *_, found = found_by_case
    assert found
    for f in found:
        assert f["type"] in FINDING_TYPES and f["severity"] in ("critical", "warning", "info")
        assert f["evidence"] and all(isinstance(v, (int, float)) or v is None
                                     for v in f["evidence"].values()), f["evidence"]
        assert 1 <= len(f["examples"]) <= 5
        assert all(set(e) == {"task_id", "span_id"} for e in f["examples"])
        assert f["first_seen_ns"] <= f["last_seen_ns"] and f["first_seen"] <= f["last_seen"]
        assert f["hint"] and "\n" not in f["hint"]


def test_every_finding_type_has_a_positive_case():
    covered = {t for _, expected in CASES for t, _ in expected}
    assert covered == set(FINDING_TYPES)


def test_clean_traffic_raises_nothing(load):
    rows = [r for i in range(60) for r in healthy_task(i * 4_000.0, i)]
    assert find_findings(load(rows), *EVERYTHING, None, {}) == []
