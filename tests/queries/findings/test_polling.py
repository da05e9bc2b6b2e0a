"""Polling and multiplying contexts as real traffic shows them, numbers written from the story."""

from __future__ import annotations

import pytest
from shapes import Trace

from agentsla.queries.findings import find_findings
from spanfactory import BASE_NS

EVERYTHING = (BASE_NS - 10**12, BASE_NS + 10**15)


def only(load, kind: str, rows: list[dict]) -> list[dict]:
    return find_findings(load(rows), *EVERYTHING, kind, {})


def polls(t: Trace, parent: dict, starts: list[float], length: float = 100,
          name: str = "GET /jobs/42") -> list[dict]:
    return [t.child(parent, "tool", name, s, s + length) for s in starts]


# -- polling ------------------------------------------------------------------------------------

def short_polls_with_job_in_trace() -> list[dict]:
    # The orchestrator submits a job (the worker's span is in the trace) and polls every 5 s;
    # the job ends at 20.5 s, the poll at 25 s sees it: 25.1 - 20.5 = 4.6 s late.
    t = Trace(root_end_ms=27_000)
    agent = t.child(t.root, "agent", "orchestrator", 0, 26_000)
    t.child(agent, "queue", "submit", 0, 50)
    t.child(t.root, "other", "render-job", 100, 20_500)
    polls(t, agent, [0, 5_000, 10_000, 15_000, 20_000, 25_000])
    return t.rows


def long_polls_filling_the_timeline() -> list[dict]:
    # Each poll waits out its 5 s (no gap between polls); the job ends at 21 s and the poll
    # running 20-25 s is the one that saw it: 4 s late.
    t = Trace(root_end_ms=26_000)
    agent = t.child(t.root, "agent", "orchestrator", 0, 25_500)
    t.child(t.root, "other", "render-job", 10, 21_000)
    polls(t, agent, [0, 5_000, 10_000, 15_000, 20_000], length=5_000)
    return t.rows


def job_elsewhere() -> list[dict]:
    # Nothing in the trace is the job: lateness unknown, up to one 2 s interval per wait.
    t = Trace(root_end_ms=21_000)
    agent = t.child(t.root, "agent", "waiter", 0, 20_500)
    polls(t, agent, [i * 2_000 for i in range(10)])
    return t.rows


def two_waits_in_one_task() -> list[dict]:
    # Two agents of the same name each poll every 3 s for a job: the first job ends at 11 s and
    # the poll at 12 s sees it (1.1 s late), the second ends at 29 s, seen at 32.1 s (3.1 s).
    t = Trace(root_end_ms=40_000)
    for offset, job_end in ((0, 11_000), (20_000, 29_000)):
        agent = t.child(t.root, "agent", "orchestrator", offset, offset + 15_000)
        t.child(t.root, "other", "render-job", offset + 10, job_end)
        polls(t, agent, [offset + i * 3_000 for i in range(5)])
    return t.rows


def sleeps_between_polls() -> list[dict]:
    # The loop sleeps between polls (spans of their own): a sleep is not the job.
    t = Trace(root_end_ms=27_000)
    agent = t.child(t.root, "agent", "orchestrator", 0, 26_000)
    t.child(t.root, "other", "render-job", 10, 13_000)
    starts = [0, 5_000, 10_000, 15_000, 20_000]
    polls(t, agent, starts)
    for s in starts[:-1]:
        t.child(agent, "other", "sleep", s + 100, s + 5_000)
    return t.rows


@pytest.mark.parametrize(("shape", "evidence", "severity"), [
    # short polls: 6 polls every 5 s, 4.6 s late (per wait and per task)
    (short_polls_with_job_in_trace, {"loops": 1, "polls_per_loop": 6, "interval_ms": 5_000,
                                     "loops_with_job": 1, "late_ms": 4_600,
                                     "task_late_ms": 4_600, "late_seconds": 4.6}, "warning"),
    # polls that fill the timeline: no idle gap at all, still 4 s late
    (long_polls_filling_the_timeline, {"loops": 1, "polls_per_loop": 5, "interval_ms": 5_000,
                                       "late_ms": 4_000, "task_late_ms": 4_000}, "warning"),
    # the job runs elsewhere: lateness unknown, the 2 s interval is judged (>= 1 s: warning)
    (job_elsewhere, {"loops": 1, "polls_per_loop": 10, "interval_ms": 2_000,
                     "loops_with_job": 0, "late_ms": None, "task_late_ms": None}, "warning"),
    # two waits of one hop in one task: per wait 1.1 s and 3.1 s (median 2.1 s), task 4.2 s
    (two_waits_in_one_task, {"loops": 2, "late_ms": 2_100, "max_late_ms": 3_100,
                             "task_late_ms": 4_200, "late_seconds": 4.2}, "warning"),
    # sleeps between polls: the job ended at 13 s, the poll at 20 s saw it (20.1 s): 7.1 s
    (sleeps_between_polls, {"loops": 1, "late_ms": 7_100}, "warning"),
])
def test_polling_lateness(load, shape, evidence, severity) -> None:
    (finding,) = only(load, "wait_amplification", shape())
    assert (finding["rule"], finding["severity"]) == ("polling", severity)
    assert finding["hop"]["kind"] == "agent"
    assert {k: finding["evidence"][k] for k in evidence} == pytest.approx(evidence)


def test_a_prompt_poll_is_info(load) -> None:
    # The job ends at 15.9 s, the poll at 16 s sees it at 16.1 s: 200 ms late.
    t = Trace(root_end_ms=18_000)
    agent = t.child(t.root, "agent", "orchestrator", 0, 17_000)
    t.child(t.root, "other", "render-job", 10, 15_900)
    polls(t, agent, [0, 4_000, 8_000, 12_000, 16_000])
    (finding,) = only(load, "wait_amplification", t.rows)
    assert finding["severity"] == "info" and finding["evidence"]["late_ms"] == pytest.approx(200)


def irregular_repeats() -> list[dict]:
    # a tool called five times at uneven times: a loop of work, not polling
    t = Trace(root_end_ms=20_000)
    agent = t.child(t.root, "agent", "researcher", 0, 19_000)
    polls(t, agent, [0, 500, 4_000, 4_600, 11_000], name="web_search")
    return t.rows


def steady_model_calls() -> list[dict]:
    # model calls at a steady pace are steps of an agent loop, never polls
    t = Trace(root_end_ms=7_000)
    agent = t.child(t.root, "agent", "planner", 0, 6_500)
    for i in range(6):
        t.child(agent, "model", "gpt-4o", i * 1_000, i * 1_000 + 950)
    return t.rows


def three_polls() -> list[dict]:
    # three polls (two intervals) are too few to call a loop
    t = Trace(root_end_ms=7_000)
    agent = t.child(t.root, "agent", "orchestrator", 0, 6_500)
    polls(t, agent, [0, 3_000, 6_000])
    return t.rows


@pytest.mark.parametrize("shape", [irregular_repeats, steady_model_calls, three_polls])
def test_not_polling(load, shape) -> None:
    # (a parent idle between uneven calls may still be `idle_gaps`: that is not polling)
    assert [f for f in only(load, "wait_amplification", shape()) if f["rule"] == "polling"] == []


# -- multiplying contexts ---------------------------------------------------------------------

def conversation(tokens: list[int], durations: list[float], overlap: bool = False,
                 gap_ms: float = 50) -> list[dict]:
    t = Trace(root_end_ms=60_000, task_type="support")
    clock = 10.0
    for n, ms in zip(tokens, durations):
        t.child(t.root, "model", "gpt-4o", clock, clock + ms, hop_timeout_ms=30_000,
                input_tokens=n)
        clock += 100 if overlap else ms + gap_ms
    return t.rows


def test_prompt_multiplying_over_three_calls(load) -> None:
    # 1.5k → 5k → 12k input tokens (8×, √8 = 2.828× per call) while the model went
    # 800 ms → 3 s (3.75×)
    rows = conversation([1_500, 5_000, 12_000], [800, 1_500, 3_000])
    (finding,) = only(load, "context_growth", rows)
    assert (finding["rule"], finding["task_type"]) == ("multiplying_context", "support")
    assert finding["evidence"] == pytest.approx({
        "tasks": 1, "calls_per_task": 3, "first_tokens": 1_500, "final_tokens": 12_000,
        "token_factor": 8.0, "token_factor_per_call": 2.828, "first_latency_ms": 800,
        "final_latency_ms": 3_000, "latency_factor": 3.75,
        "ms_per_1k_tokens": 210.204,  # least-squares slope of the three (tokens, ms) points
        "timeouts_or_overflows": 0})


def test_a_conversation_stamped_in_whole_milliseconds_still_multiplies(load) -> None:
    # The OpenTelemetry JS SDK stamps starts in whole ms: each call seems to start 0.5 ms
    # before the one before it ended, and is still the conversation's next call
    rows = conversation([1_500, 5_000, 12_000], [800, 1_500, 3_000], gap_ms=-0.5)
    (finding,) = only(load, "context_growth", rows)
    assert finding["rule"] == "multiplying_context"


@pytest.mark.parametrize(("tokens", "durations", "overlap"), [
    ([1_500, 5_000, 12_000], [800, 820, 850], False),     # latency did not rise with it
    ([100, 300, 900], [800, 1_500, 3_000], False),        # tiny prompts
    ([1_500, 5_000, 12_000], [800, 1_500, 3_000], True),  # parallel calls, not a conversation
    ([1_500, 6_000, 1_000, 12_000], [800, 1_500, 500, 3_000], False),  # trimmed in between
    ([4_000, 6_000, 9_000], [800, 1_500, 3_000], False),  # 1.5× per call, under 1.6×
    # a long, mild growth (3.4× over twelve calls, 1.1× per call) is no multiplying prompt
    ([round(1_350 * 1.118 ** i) for i in range(12)], [700 + 90 * i for i in range(12)], False),
])
def test_not_multiplying(load, tokens, durations, overlap) -> None:
    assert only(load, "context_growth", conversation(tokens, durations, overlap)) == []
