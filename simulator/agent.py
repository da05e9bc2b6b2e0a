"""The worker's agent loop: one script per task type, stepping through model and tool calls."""

from __future__ import annotations

from agentsla.simulator.builder import RESERVE_S, Builder
from agentsla.simulator.calls import CallResult, model_call, tool_call
from agentsla.simulator.model import SpanPlan

AGENT_NAMES = {"support": "support-agent", "orders": "orders-agent",
               "research": "research-orchestrator", "conversation": "assistant-agent",
               "runaway": "kb-research-agent"}


class Stop(Exception):
    """The agent loop ends early with a failure reason."""

    def __init__(self, at: float, reason: str, message: str = "") -> None:
        super().__init__(reason)
        self.at, self.reason, self.message = at, reason, message


def _gap(b: Builder) -> float:
    return b.u(0.004, 0.03)


def _check(b: Builder, result: CallResult) -> float:
    if not result.ok:
        raise Stop(result.end + 0.001, result.reason or "server_error", "dependency failed")
    return result.end + _gap(b)


def _budget(b: Builder, t: float) -> None:
    if b.profile.budget_aware and b.remaining(t) < RESERVE_S + 0.5:
        raise Stop(t + 0.001, "budget_exhausted", "not enough budget left for the next step")


def _model(b: Builder, agent: SpanPlan, t: float, tokens: float, output: int) -> float:
    _budget(b, t)
    return _check(b, model_call(b, agent, t, int(tokens), output))


def _tool(b: Builder, agent: SpanPlan, t: float, tool: str, low: float, high: float,
          timeout: float = 5.0, key: str | None = None) -> float:
    _budget(b, t)
    return _check(b, tool_call(b, agent, t, tool, b.u(low, high), timeout, idempotency_key=key))


def _support(b: Builder, agent: SpanPlan, t: float) -> float:
    tokens = b.u(800, 2000)
    t = _model(b, agent, t, tokens, int(b.u(40, 120)))
    t = _tool(b, agent, t, "search_kb", 0.08, 0.4)
    tokens += b.u(400, 1200)
    t = _model(b, agent, t, tokens, int(b.u(100, 400)))
    if b.rng.random() < 0.3:
        key = f"{b.task.task_id}-confirm"
        t = _tool(b, agent, t, "send_confirmation", 0.15, 0.6, 10.0, key)
        mark = len(b.task.failures)
        t = _model(b, agent, t, tokens + 200, 60)
        rate_limited = any(f.reason == "rate_limited" for f in b.task.failures[mark:])
        if rate_limited and b.rng.random() < b.profile.replay_p:
            # The framework re-runs the whole step after the 429s: the email goes out twice.
            b.task.findings.add("duplicate_side_effect")
            t = _tool(b, agent, t, "send_confirmation", 0.15, 0.6, 10.0, key)
            t = _model(b, agent, t, tokens + 260, 60)
    return t


def _orders(b: Builder, agent: SpanPlan, t: float) -> float:
    prof = b.profile
    tokens = b.u(700, 1500)
    t = _model(b, agent, t, tokens, int(b.u(30, 90)))
    _budget(b, t)
    hang = b.u(60.0, 180.0) if b.rng.random() < prof.db_hang_p else None
    result = tool_call(b, agent, t, "query_orders_db", b.u(0.02, 0.3), prof.db_timeout_s,
                       breaker=True, hang_s=hang)
    t = result.end + _gap(b)
    if not result.ok:
        fallback = {"fallback.used": True, "fallback.kind": "cached",
                    "fallback.from": "query_orders_db", "fallback.to": "orders-cache"}
        cache = b.span(agent, "get orders-cache", "cache", t, **fallback)
        cache.end = t + b.u(0.002, 0.01)
        agent.attrs.update(fallback)
        b.task.fallback_served = True
        t = cache.end + _gap(b)
    return _model(b, agent, t, tokens + b.u(300, 800), int(b.u(80, 250)))


def _research(b: Builder, agent: SpanPlan, t: float) -> float:
    deep = b.task.task_type == "deep_research"
    t = _model(b, agent, t, b.u(600, 1200), int(b.u(60, 160)))
    t = _tool(b, agent, t, "submit_job", 0.05, 0.15)
    done = t + (b.u(20.0, 60.0) if deep else b.u(0.3, 1.5))
    wait = b.span(agent, "await_job", "other", t)
    interval = b.profile.poll_interval_s
    if interval is None:  # event-driven: the executor's callback wakes the orchestrator
        wait.end = done + b.u(0.005, 0.02)
    else:
        tp, polls = t + 0.002, 0
        while True:
            if b.profile.budget_aware and b.remaining(tp) < RESERVE_S + 0.5:
                wait.end = tp
                raise Stop(tp + 0.001, "budget_exhausted", "job not done within the budget")
            poll = tool_call(b, wait, tp, "get_job_status", b.u(0.02, 0.06), 5.0)
            polls += 1
            if not poll.ok or tp >= done:
                break
            tp = poll.end + interval
            if b.profile.budget_aware and b.remaining(tp) < RESERVE_S + 0.5:
                wait.end = poll.end + 0.0005
                raise Stop(poll.end + 0.001, "budget_exhausted", "job not done within the budget")
        wait.end = poll.end + 0.0005
        _check(b, poll)
        if polls >= 2:
            b.task.findings.add("wait_amplification")
    t = wait.end + _gap(b)
    return _model(b, agent, t, b.u(1500, 3000), int(b.u(150, 400)))


def _conversation(b: Builder, agent: SpanPlan, t: float) -> float:
    long = b.rng.random() < 0.45
    steps = b.rng.randint(5, 7) if long else b.rng.randint(2, 3)
    tokens, cap = b.u(1500, 2500), b.profile.context_cap
    for i in range(steps):
        if tokens > 8000 and cap is None:
            b.task.findings.add("context_growth")
        last = i == steps - 1
        t = _model(b, agent, t, tokens, int(b.u(150, 300) if last else b.u(30, 80)))
        if not last:
            t = _tool(b, agent, t, "fetch_doc", 0.1, 0.5)
            tokens += b.u(1800, 2600) if long else b.u(400, 900)
            if cap is not None and tokens > cap:
                tokens = b.u(2000, 2600)  # history compacted into a summary
    return t


def _runaway(b: Builder, agent: SpanPlan, t: float) -> float:
    limit, tokens = b.profile.loop_limit, b.u(900, 1500)
    if b.rng.random() >= b.profile.runaway_p:
        t = _model(b, agent, t, tokens, int(b.u(40, 100)))
        t = _tool(b, agent, t, "search_kb", 0.08, 0.4)
        return _model(b, agent, t, tokens + b.u(400, 900), int(b.u(100, 300)))
    # The model keeps asking for the same search; the guard trips late (or, fixed, after 3).
    steps = 3 if b.profile.loop_guard else limit + b.rng.randint(1, 4)
    for _ in range(steps):
        t = _model(b, agent, t, tokens, int(b.u(30, 60)))
        t = _tool(b, agent, t, "search_kb", 0.08, 0.4)
        tokens += b.u(200, 400)
    agent.attrs["agent.loop.steps"] = steps
    if not b.profile.loop_guard:
        b.task.findings.add("runaway_loop")
        raise Stop(t + 0.001, "loop_limit", f"agent exceeded {limit} steps")
    return _model(b, agent, t, tokens + 150, int(b.u(100, 300)))


SCRIPTS = {"support": _support, "orders": _orders, "research": _research,
           "conversation": _conversation, "runaway": _runaway}


def run_agent(b: Builder, parent: SpanPlan, t: float, script: str) -> SpanPlan:
    """Plan the agent span and its steps from t; return the ended agent span."""
    name = AGENT_NAMES[script]
    agent = b.span(parent, f"invoke_agent {name}", "agent", t, name, **{
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
        "agent.loop.limit": b.profile.loop_limit})
    try:
        agent.end = SCRIPTS[script](b, agent, t + _gap(b)) + 0.002
    except Stop as stop:
        exc = {"loop_limit": ("agents.exceptions.MaxTurnsExceeded", stop.message),
               "budget_exhausted": ("DeadlineExceeded", stop.message)}.get(stop.reason)
        if stop.reason == "budget_exhausted":
            agent.attrs["budget.exhausted"] = True
        b.fail(agent, stop.at, stop.reason, stop.message, exc)
    return agent
