"""Model and tool calls: attempts, retries with backoff, breakers, timeouts and fallbacks."""

from __future__ import annotations

from dataclasses import dataclass

from opentelemetry.trace import SpanKind

from agentsla.simulator.builder import RESERVE_S, Builder
from agentsla.simulator.model import Call, SpanPlan


@dataclass(frozen=True)
class ModelEndpoint:
    """A model behind its provider's API."""

    model: str
    provider: str
    address: str
    error_module: str


PRIMARY = ModelEndpoint("gpt-4o", "openai", "api.openai.com", "openai")
BACKUP = ModelEndpoint("claude-3-5-sonnet", "anthropic", "api.anthropic.com", "anthropic")


@dataclass
class CallResult:
    """How a logical call (with its retries and fallback) ended."""

    end: float
    ok: bool
    reason: str | None = None


def _step(table: tuple[tuple[float, float], ...], phase: float) -> float:
    value = 0.0
    for since, p in table:
        if phase >= since:
            value = p
    return value


def _latency(b: Builder, tokens: int, output: int, hang: bool,
             backup: bool) -> tuple[float, float]:
    """Time to first chunk and total duration of a model call that answers."""
    prof = b.profile
    if tokens > 8000 and prof.context_cap is None:
        ttft = b.u(33.0, 46.0)  # long-context prefill
    else:
        ttft = (0.15 + tokens * 0.00012) * b.rng.lognormvariate(0.0, 0.35)
    if hang:
        ttft = b.u(100.0, 160.0)
    elif not backup and b.rng.random() < prof.slow_p:
        ttft += b.u(3.0, 25.0)
    return ttft, ttft + output / b.u(45.0, 90.0)


def _model_attempts(b: Builder, parent: SpanPlan, t: float, ep: ModelEndpoint, tokens: int,
                    output: int, backup: bool) -> CallResult:
    prof, call = b.profile, Call()
    breaker = b.world.breaker(ep.model) if prof.model_breaker and not backup else None
    retry_max = 1 if backup else prof.retry_max
    p429 = _step(prof.backup_rate_limit_p if backup else prof.rate_limit_p, b.phase(t))
    end, reason, saw_429 = t, None, False
    for attempt in range(retry_max + 1):
        if attempt:
            t = end + prof.backoff_s * 2 ** (attempt - 1) * b.u(0.8, 1.2)
            if prof.budget_aware and b.remaining(t) < RESERVE_S + 0.5:
                break  # no budget left for another attempt
            if reason == "timeout" or attempt >= 2:
                b.task.findings.add("retry_amplification")
        state = breaker.state_at(t) if breaker else None
        timeout = b.fitted_timeout(prof.read_timeout_s, t, retry_max + 1)
        span = b.span(parent, f"chat {ep.model}", "model", t, ep.model, SpanKind.CLIENT, **{
            "gen_ai.operation.name": "chat", "gen_ai.request.model": ep.model,
            "gen_ai.provider.name": ep.provider, "server.address": ep.address,
            "gen_ai.usage.input_tokens": tokens, "hop.timeout_ms": round(timeout * 1000),
            "retry.attempt": attempt, "retry.max": retry_max})
        if backup:
            span.attrs.update({"fallback.used": True, "fallback.kind": "backup_model",
                               "fallback.from": PRIMARY.model, "fallback.to": ep.model})
        if breaker:
            span.attrs["circuit.state"] = state
        if state == "open":
            b.fail(span, t + b.u(0.0005, 0.002), "circuit_open", f"circuit open for {ep.model}",
                   ("pybreaker.CircuitBreakerError", f"breaker for {ep.model} is open"), call)
            return CallResult(span.end, False, "circuit_open")
        if state == "half_open":
            breaker.trial(t)
        end, reason = _one_attempt(b, span, t, ep, tokens, output, timeout, p429, backup, call)
        saw_429 = saw_429 or reason == "rate_limited"
        if reason is None:
            call.succeeded = True
            if saw_429:
                b.task.findings.add("rate_limit_masking")
            if breaker:
                breaker.record(end, True)
            return CallResult(end, True)
        if reason not in prof.retry_on:
            break
    if breaker:
        breaker.record(end, False)
    return CallResult(end, False, reason)


def _one_attempt(b: Builder, span: SpanPlan, t: float, ep: ModelEndpoint, tokens: int,
                 output: int, timeout: float, p429: float, backup: bool,
                 call: Call) -> tuple[float, str | None]:
    prof, r = b.profile, b.rng.random()
    mod = ep.error_module
    if r < prof.conn_error_p:
        b.fail(span, t + b.u(0.05, 0.4), "connection_error", "Connection error.",
               (f"{mod}.APIConnectionError", "Connection error."), call)
        return span.end, "connection_error"
    if r < prof.conn_error_p + p429:
        b.fail(span, t + b.u(0.08, 0.3), "rate_limited", "429 Too Many Requests",
               (f"{mod}.RateLimitError", "Error code: 429 - rate limit exceeded"), call, 429)
        return span.end, "rate_limited"
    hang = not backup and b.rng.random() < prof.hang_p
    ttft, total = _latency(b, tokens, output, hang, backup)
    if ttft > 10.0:
        b.task.findings.add("stream_stall")
    if ttft > timeout:
        cut = timeout < prof.read_timeout_s
        if cut:
            span.attrs["budget.exhausted"] = True
        b.fail(span, t + timeout, "budget_exhausted" if cut else "timeout", "Request timed out.",
               (f"{mod}.APITimeoutError", "Request timed out."), call)
        return span.end, span.error
    limit = b.remaining(t) - RESERVE_S if prof.budget_aware else float("inf")
    if total > limit:  # a deadline-aware client cancels the stream at the deadline
        span.attrs["budget.exhausted"] = True
        b.fail(span, t + limit, "budget_exhausted", "deadline exceeded while streaming",
               ("DeadlineExceeded", "task budget exhausted"), call)
        return span.end, "budget_exhausted"
    span.end = t + total
    span.attrs.update({"gen_ai.usage.output_tokens": output,
                       "gen_ai.response.time_to_first_chunk": round(ttft, 4),
                       "gen_ai.response.model": ep.model})
    return span.end, None


def model_call(b: Builder, parent: SpanPlan, t: float, tokens: int, output: int) -> CallResult:
    """Call the primary model with retries; fail over to the backup where the profile says."""
    tokens = int(tokens)
    result = _model_attempts(b, parent, t, PRIMARY, tokens, output, backup=False)
    if result.ok or result.reason not in b.profile.backup_on:
        return result
    if b.profile.budget_aware and b.remaining(result.end) < RESERVE_S + 0.5:
        return result
    backup = _model_attempts(b, parent, result.end + b.u(0.002, 0.01), BACKUP, tokens, output,
                             backup=True)
    if backup.ok:
        b.task.fallback_served = True
        parent.attrs.update({"fallback.used": True, "fallback.kind": "backup_model",
                             "fallback.from": PRIMARY.model, "fallback.to": BACKUP.model})
    else:
        b.task.findings.add("false_failover")
    return backup


def tool_call(b: Builder, parent: SpanPlan, t: float, tool: str, duration: float,
              timeout_s: float, breaker: bool = False, hang_s: float | None = None,
              idempotency_key: str | None = None) -> CallResult:
    """Execute one tool: a breaker may fail it fast; a hang ends when the timeout fires."""
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
             "retry.attempt": 0, "retry.max": 0}
    timeout = b.fitted_timeout(timeout_s, t)
    attrs["hop.timeout_ms"] = round(timeout * 1000)
    if idempotency_key:
        attrs["idempotency.key"] = idempotency_key
    guard = b.world.breaker(tool) if breaker else None
    state = guard.state_at(t) if guard else None
    if guard:
        attrs["circuit.state"] = state
    span = b.span(parent, f"execute_tool {tool}", "tool", t, tool, SpanKind.CLIENT, **attrs)
    if state == "open":
        b.fail(span, t + b.u(0.0005, 0.002), "circuit_open", f"circuit open for {tool}",
               ("pybreaker.CircuitBreakerError", f"breaker for {tool} is open"))
        return CallResult(span.end, False, "circuit_open")
    if state == "half_open":
        guard.trial(t)
    took = duration if hang_s is None else hang_s
    if timeout > 0 and took > timeout:
        cut = timeout < timeout_s
        if cut:
            span.attrs["budget.exhausted"] = True
        b.fail(span, t + timeout, "budget_exhausted" if cut else "timeout",
               f"{tool} timed out after {timeout:.1f}s", ("TimeoutError", f"{tool} timed out"))
    elif hang_s is not None:
        b.fail(span, t + hang_s, "timeout", "canceling statement due to statement timeout",
               ("psycopg.errors.QueryCanceled", "canceling statement due to statement timeout"))
        if timeout <= 0 and hang_s > 30.0:
            b.task.findings.add("missing_timeout")
    else:
        span.end = t + duration
    if guard:
        guard.record(span.end, span.error is None)
    return CallResult(span.end, span.error is None, span.error)
