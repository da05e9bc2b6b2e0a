"""The mapping tables of span contract v1, as data: one place, documented in docs/span-contract.md.

Three vocabularies feed the same typed columns: agentsla's own contract, the OpenTelemetry
GenAI semantic conventions and OpenInference. Where several attributes feed one column, the
first present (and coercible) one in the listed order wins.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import orjson

from agentsla.contract import DECLARABLE_OUTCOMES, ERROR_TYPES, HOP_KINDS

from .attributes import to_bool, to_float, to_int, to_int32, to_str

#: task.outcome values (lower-cased) -> declared outcome; anything else leaves the column null.
OUTCOMES = {**{o: o for o in DECLARABLE_OUTCOMES}, "succeeded": "success", "ok": "success",
            "canceled": "cancelled", "failure": "failed", "error": "failed"}

#: circuit.state values (lower-cased, '-' and ' ' as '_') -> state; others are kept verbatim.
CIRCUIT_STATES = {"closed": "closed", "open": "open", "half_open": "half_open",
                  "halfopen": "half_open"}


def _outcome(value: Any) -> str | None:
    return OUTCOMES.get(value.strip().lower()) if isinstance(value, str) else None


def _circuit_state(value: Any) -> str | None:
    state = to_str(value)
    if state is None:
        return None
    return CIRCUIT_STATES.get(state.strip().lower().replace("-", "_").replace(" ", "_"), state)


def _invocation_model(value: Any) -> str | None:
    """Read "model" from llm.invocation_parameters (a JSON object string, or a kvlist)."""
    if isinstance(value, str):
        if '"model"' not in value:
            return None
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return to_str(value.get("model")) if isinstance(value, dict) else None


def _seconds_to_ms(value: Any) -> float | None:
    seconds = to_float(value)
    return None if seconds is None else seconds * 1000.0


#: Columns and the attributes feeding them, in priority order (the first present and
#: coercible one wins), with the coercion applied. Uncoercible values leave the column null;
#: the raw value is always kept in the `attributes` JSON.
COLUMN_SOURCES = (
    ("task_id", ("task.id",), to_str),
    ("task_type", ("task.type",), to_str),
    ("tenant_id", ("tenant.id",), to_str),
    ("task_outcome", ("task.outcome",), _outcome),
    ("hop_timeout_ms", ("hop.timeout_ms",), to_float),
    ("budget_total_ms", ("budget.total_ms",), to_float),
    ("budget_remaining_ms", ("budget.remaining_ms",), to_float),
    ("budget_exhausted", ("budget.exhausted",), to_bool),
    ("retry_attempt", ("retry.attempt", "http.request.resend_count"), to_int32),
    ("retry_max", ("retry.max",), to_int32),
    ("fallback_used", ("fallback.used",), to_bool),
    ("fallback_kind", ("fallback.kind",), to_str),
    ("fallback_from", ("fallback.from",), to_str),
    ("fallback_to", ("fallback.to",), to_str),
    ("circuit_state", ("circuit.state",), _circuit_state),
    ("idempotency_key", ("idempotency.key",), to_str),
    ("loop_limit", ("agent.loop.limit",), to_int32),
    ("http_status", ("http.response.status_code", "http.status_code"), to_int32),
    ("operation", ("gen_ai.operation.name", "openinference.span.kind"), to_str),
    ("model", ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name"), to_str),
    ("model", ("llm.invocation_parameters",), _invocation_model),
    ("tool", ("gen_ai.tool.name", "tool.name"), to_str),
    ("agent", ("gen_ai.agent.name", "agent.name"), to_str),
    ("input_tokens", ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
                      "llm.token_count.prompt"), to_int),
    ("output_tokens", ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                       "llm.token_count.completion"), to_int),
    ("ttft_ms", ("gen_ai.response.time_to_first_chunk",), _seconds_to_ms),
)


#: A value of this exact type needs no coercion (the hot path skips the call).
_READY_TYPE = {to_str: str, to_bool: bool, to_float: float, to_int: int}


def _column_table() -> dict[str, tuple[str, Any, int | None, type | None]]:
    """Index COLUMN_SOURCES by attribute: attribute -> (column, coercion, rank, ready type).

    The rank orders the sources of one column (0 wins); it is None for single-source columns,
    which need no bookkeeping on the hot path.
    """
    sources: dict[str, list[tuple[str, Any]]] = {}
    for column, keys, coerce in COLUMN_SOURCES:
        sources.setdefault(column, []).extend((key, coerce) for key in keys)
    table = {}
    for column, keyed in sources.items():
        for rank, (key, coerce) in enumerate(keyed):
            table[key] = (column, coerce, rank if len(keyed) > 1 else None,
                          _READY_TYPE.get(coerce))
    return table


#: attribute -> (column, coercion, rank, ready type), built from COLUMN_SOURCES.
COLUMN_TABLE = _column_table()

#: gen_ai.operation.name -> hop kind.
GENAI_OPERATION_HOPS = {
    "chat": "model", "text_completion": "model", "generate_content": "model",
    "embeddings": "model",
    "execute_tool": "tool",
    "invoke_agent": "agent", "create_agent": "agent", "invoke_workflow": "agent",
}

#: openinference.span.kind (upper-cased) -> hop kind.
OPENINFERENCE_HOPS = {
    "LLM": "model", "EMBEDDING": "model", "RERANKER": "model",
    "TOOL": "tool", "RETRIEVER": "tool",
    "AGENT": "agent",
    "CHAIN": "other", "GUARDRAIL": "other", "EVALUATOR": "other", "PROMPT": "other",
}

#: Attributes whose presence marks a hop kind (after the two tables above).
PRESENCE_HOPS = (("messaging.system", "queue"), ("db.system", "storage"),
                 ("db.system.name", "storage"))

VALID_HOP_KINDS = frozenset(HOP_KINDS)

#: Error class names and codes (lower-cased, without '_', '-', ' ') -> error type. A dotted
#: name ("openai.RateLimitError", "grpc.StatusCode.DEADLINE_EXCEEDED") is looked up by its
#: last part.
ERROR_ALIASES = {
    **{t.replace("_", ""): t for t in ERROR_TYPES},
    # rate limits
    "ratelimiterror": "rate_limited", "ratelimit": "rate_limited", "429": "rate_limited",
    "toomanyrequests": "rate_limited", "resourceexhausted": "rate_limited",
    "throttlingexception": "rate_limited", "quotaexceeded": "rate_limited",
    # timeouts
    "apitimeouterror": "timeout", "readtimeout": "timeout", "timeouterror": "timeout",
    "deadlineexceeded": "timeout", "504": "timeout", "408": "timeout", "timedout": "timeout",
    "connecttimeout": "timeout", "writetimeout": "timeout", "pooltimeout": "timeout",
    "readtimeouterror": "timeout", "connecttimeouterror": "timeout",
    "gatewaytimeout": "timeout",
    # connections
    "apiconnectionerror": "connection_error", "connectionerror": "connection_error",
    "connecterror": "connection_error", "connectionrefusederror": "connection_error",
    "connectionreseterror": "connection_error", "remoteprotocolerror": "connection_error",
    "unavailable": "connection_error", "newconnectionerror": "connection_error",
    # servers
    "internalservererror": "server_error", "serviceunavailableerror": "server_error",
    "apistatuserror": "server_error", "badgateway": "server_error",
    "serviceunavailable": "server_error", "internal": "server_error",
    # breakers
    "circuitbreakererror": "circuit_open", "circuitopen": "circuit_open",
    "circuitopenerror": "circuit_open", "circuitbreakeropen": "circuit_open",
    "brokencircuiterror": "circuit_open",
    # context windows
    "contextwindowexceeded": "context_overflow", "contextwindowexceedederror": "context_overflow",
    "contextlengthexceeded": "context_overflow", "contextoverflow": "context_overflow",
    # cancellation and the rest of the vocabulary
    "cancellederror": "cancelled", "canceled": "cancelled", "cancellation": "cancelled",
    "budgetexhausted": "budget_exhausted", "budgetexceeded": "budget_exhausted",
    "looplimit": "loop_limit", "maxiterationsexceeded": "loop_limit",
    "recursionlimit": "loop_limit", "graphrecursionerror": "loop_limit",
    "invalidresponse": "invalid_response", "outputparserexception": "invalid_response",
    "jsondecodeerror": "invalid_response", "validationerror": "invalid_response",
}

#: Fallback for error names not in ERROR_ALIASES: normalized-name substrings, checked in order.
ERROR_NAME_PARTS = (
    ("timeout", "timeout"), ("timedout", "timeout"), ("deadline", "timeout"),
    ("ratelimit", "rate_limited"), ("toomanyrequests", "rate_limited"),
    ("circuit", "circuit_open"),
    ("contextlength", "context_overflow"), ("contextwindow", "context_overflow"),
    ("connect", "connection_error"),
    ("cancel", "cancelled"),
)

#: Status message (lower-cased) substrings -> error type, checked in order.
STATUS_MESSAGE_PARTS = (
    ("timeout", "timeout"), ("timed out", "timeout"), ("deadline exceeded", "timeout"),
    ("rate limit", "rate_limited"), ("ratelimit", "rate_limited"),
    ("too many requests", "rate_limited"),
    ("circuit", "circuit_open"),
    ("context length", "context_overflow"), ("context window", "context_overflow"),
    ("maximum context", "context_overflow"), ("context_length_exceeded", "context_overflow"),
    ("budget", "budget_exhausted"),
    ("connection", "connection_error"), ("connect error", "connection_error"),
    ("cancel", "cancelled"),
    ("internal server error", "server_error"), ("service unavailable", "server_error"),
    ("bad gateway", "server_error"),
)

#: HTTP status codes quoted as whole words in a status message ("HTTP 429", "status=503").
_STATUS_CODE_WORD = re.compile(r"(?<!\d)(429|5\d\d)(?!\d)")


@lru_cache(maxsize=4096)
def map_error_name(raw: str) -> str | None:
    """Map an error class name or code to the contract vocabulary; None if unrecognized."""
    name = raw.strip().rsplit(".", 1)[-1]
    key = name.lower().replace("_", "").replace("-", "").replace(" ", "")
    if key in ERROR_ALIASES:
        return ERROR_ALIASES[key]
    if key.isdigit() and len(key) == 3 and key[0] == "5":
        return "server_error"
    for part, error_type in ERROR_NAME_PARTS:
        if part in key:
            return error_type
    return None


def map_status_message(message: str) -> str | None:
    """Map an ERROR status message to the contract vocabulary; None if unrecognized."""
    lowered = message[:512].lower()
    for part, error_type in STATUS_MESSAGE_PARTS:
        if part in lowered:
            return error_type
    code = _STATUS_CODE_WORD.search(lowered)  # a regex is fine here: ERROR spans only
    if code is not None:
        return map_http_status(int(code.group(1)))
    return map_error_name(message[:128]) if " " not in message.strip() else None


def map_http_status(status: int | None) -> str | None:
    """Map an HTTP status to an error type: 429, 504 and other 5xx; None otherwise."""
    if status is None or status < 429:
        return None
    if status == 429:
        return "rate_limited"
    if status == 504:
        return "timeout"
    if 500 <= status <= 599:
        return "server_error"
    return None
