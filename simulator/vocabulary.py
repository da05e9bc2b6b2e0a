"""The attribute vocabularies the simulator speaks: agentsla's contract, GenAI semconv, OpenInference.

A span is planned once, with agentsla's span contract; `attributes` rewrites it into the
vocabulary asked for, and `knowable` rewrites a task's truth into what that vocabulary still
lets anyone tell. The rules and the reasons are in docs/simulator.md ("Vocabularies").
"""

from __future__ import annotations

from typing import Any

from agentsla.errors import AgentslaError
from agentsla.simulator.model import SpanPlan, TaskPlan, first_failing_hop
from agentsla.simulator.scenarios import Profile

VOCABULARIES = ("agentsla", "genai", "openinference")

#: OpenTelemetry semantic-convention namespaces the simulator writes (kept in genai).
_SEMCONV = ("gen_ai.", "http.", "url.", "server.", "messaging.")
#: Attributes in those namespaces that no convention defines (TTFT is only a metric there).
_NOT_SEMCONV = frozenset(("gen_ai.response.time_to_first_chunk",))
#: Infrastructure namespaces OpenInference leaves to OpenTelemetry (HTTP servers, queues).
_INFRA = ("http.", "url.", "messaging.")
#: A budget is agentsla's word; a caller without one sees a deadline pass.
_NO_BUDGET = {"budget_exhausted": "DeadlineExceeded"}
_OPENINFERENCE_KINDS = {"model": "LLM", "tool": "TOOL", "agent": "AGENT"}
#: Hop kinds a standard vocabulary still tells (by operation, span kind or messaging.system).
_STANDARD_HOPS = ("gateway", "queue", "model", "tool", "agent")

#: Findings whose evidence only agentsla's attributes carry, per standard vocabulary, and what.
NEEDS_AGENTSLA = {
    "budget_inversion": "hop.timeout_ms and budget.remaining_ms",
    "missing_timeout": "hop.timeout_ms (no timeout and an unknown one look alike)",
    "false_failover": "fallback.used, fallback.from and fallback.to",
    "duplicate_side_effect": "idempotency.key",
    "stream_stall": "gen_ai.response.time_to_first_chunk",
}
#: Findings that only budget attributes rule out on a budget-aware platform: without them its
#: attempts cut to fit the budget are timeouts retried, and a long queue wait has no budget to
#: be measured against. In the standard vocabularies they may show there (incidental).
BUDGET_BLIND = ("retry_amplification", "saturation")


def check(vocabulary: str) -> str:
    """Return the vocabulary name, or refuse an unknown one."""
    if vocabulary not in VOCABULARIES:
        raise AgentslaError(f"unknown vocabulary {vocabulary!r}; use one of "
                            + ", ".join(VOCABULARIES))
    return vocabulary


def attributes(plan: SpanPlan, vocabulary: str) -> dict[str, Any]:
    """Return the span's attributes, error.type included, as `vocabulary` writes them."""
    if vocabulary == "agentsla":
        return {**plan.attrs, **({"error.type": plan.error} if plan.error else {})}
    if vocabulary == "genai":
        attrs = {k: v for k, v in plan.attrs.items()
                 if k.startswith(_SEMCONV) and k not in _NOT_SEMCONV}
        return {**attrs, **_error_type(plan)}
    oi_kind = _OPENINFERENCE_KINDS.get(plan.kind)
    if oi_kind is None:  # an OpenTelemetry-instrumented infrastructure span
        attrs = {k: v for k, v in plan.attrs.items() if k.startswith(_INFRA)}
        return {**attrs, **_error_type(plan)}
    # OpenInference spans say a failure by status and exception event, not error.type.
    return {"openinference.span.kind": oi_kind, **_openinference(plan.attrs)}


def _error_type(plan: SpanPlan) -> dict[str, Any]:
    """error.type as semconv asks: the exception's class, else the HTTP status, else the reason."""
    if plan.error is None:
        return {}
    if plan.exception:
        return {"error.type": plan.exception[0]}
    status = plan.attrs.get("http.response.status_code")
    if status is not None:
        return {"error.type": str(status)}
    return {"error.type": _NO_BUDGET.get(plan.error, plan.error)}


def _openinference(attrs: dict[str, Any]) -> dict[str, Any]:
    """Map the GenAI attributes of a model, tool or agent span to OpenInference's."""
    out: dict[str, Any] = {}
    pairs = (("gen_ai.request.model", "llm.model_name"), ("gen_ai.provider.name", "llm.provider"),
             ("gen_ai.usage.input_tokens", "llm.token_count.prompt"),
             ("gen_ai.usage.output_tokens", "llm.token_count.completion"),
             ("gen_ai.tool.name", "tool.name"), ("gen_ai.agent.name", "agent.name"))
    for genai, oi in pairs:
        if genai in attrs:
            out[oi] = attrs[genai]
    return out


def _standard_kind(span: SpanPlan) -> str:
    """The hop kind agentsla infers for a span written in a standard vocabulary."""
    return span.kind if span.kind in _STANDARD_HOPS else "other"


def _reported(span: SpanPlan) -> SpanPlan:
    """The span a blame on `span` is reported at: its nearest ancestor that is still a hop."""
    while _standard_kind(span) == "other" and span.parent is not None:
        span = span.parent
    return span


def knowable(record: dict[str, Any], task: TaskPlan, vocabulary: str) -> dict[str, Any]:
    """Rewrite a task's truth into what a standard vocabulary still tells (docs/simulator.md)."""
    if vocabulary == "agentsla":
        return record
    outcome, blame = record["outcome"], first_failing_hop(task)
    if outcome == "rejected":
        outcome = "failed"  # the gateway's 503 says failed; only error.type said rejected
    root_failed = task.root.error is not None
    if outcome == "degraded" or (outcome == "budget_exhausted" and not root_failed):
        outcome, blame = "success", None  # a fallback that served is told by fallback.used
    elif outcome == "budget_exhausted":
        outcome = "failed"
    told = None
    if blame is not None and record["first_failing_hop"] is not None:
        # a scheduler or cache span is no hop here: the blame is reported further up
        span, reason = _reported(blame[0]), blame[1]
        told = {"kind": _standard_kind(span), "name": span.hop_name,
                "reason": "timeout" if reason == "budget_exhausted" else reason}
    return {**record, "task_id": record["trace_id"], "outcome": outcome,
            "first_failing_hop": told, "findings": findings(record["findings"], vocabulary),
            "scenario_findings": findings(record["scenario_findings"], vocabulary)}


def findings(names: list[str] | tuple[str, ...], vocabulary: str) -> list[str]:
    """Keep the findings whose evidence `vocabulary` carries."""
    return [n for n in names if vocabulary == "agentsla" or n not in NEEDS_AGENTSLA]


def incidental(profile: Profile, vocabulary: str) -> list[str]:
    """Return the findings a scenario may show besides its planted ones, in `vocabulary`."""
    names = findings(profile.incidental, vocabulary)
    if vocabulary != "agentsla" and profile.budget_aware:
        names += [n for n in BUDGET_BLIND if n not in names and n not in profile.planted]
    return names
