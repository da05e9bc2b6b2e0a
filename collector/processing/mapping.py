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
    ("model", ("ai.model.id",), to_str),  # the Vercel AI SDK's own name, on every ai.* span
    ("tool", ("gen_ai.tool.name", "tool.name", "ai.toolCall.name",
              "spring.ai.tool.definition.name"), to_str),
    # the Vercel AI SDK's functionId names the generateText call: the agent loop
    ("agent", ("gen_ai.agent.name", "agent.name", "ai.telemetry.functionId"), to_str),
    ("input_tokens", ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
                      "llm.token_count.prompt"), to_int),
    ("output_tokens", ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                       "llm.token_count.completion"), to_int),
    ("ttft_ms", ("gen_ai.response.time_to_first_chunk",), _seconds_to_ms),
    # the Vercel AI SDK's doStream spans, in milliseconds (streamText; streamObject)
    ("ttft_ms", ("ai.response.msToFirstChunk", "ai.stream.msToFirstChunk"), to_float),
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
#: The attributes feeding a typed column.
COLUMN_KEYS = frozenset(COLUMN_TABLE)

#: gen_ai.operation.name -> hop kind.
GENAI_OPERATION_HOPS = {
    "chat": "model", "text_completion": "model", "generate_content": "model",
    "embeddings": "model",
    "execute_tool": "tool",
    "invoke_agent": "agent", "create_agent": "agent", "invoke_workflow": "agent",
}

#: openinference.span.kind (lower-cased) -> hop kind.
OPENINFERENCE_HOPS = {
    "llm": "model", "embedding": "model", "reranker": "model",
    "tool": "tool", "retriever": "tool",
    "agent": "agent",
    "chain": "other", "guardrail": "other", "evaluator": "other", "prompt": "other",
}

#: ai.operationId (the Vercel AI SDK's telemetry; lower-cased) -> hop kind. The provider calls
#: (`do*`, one span per attempt) are the model hops, `ai.toolCall` a tool, generateText and
#: streamText the agent loop (steps of model calls and tools); the other wrappers hold one
#: provider call each: `other`, so a call is not counted twice.
VERCEL_AI_HOPS = {
    "ai.generatetext.dogenerate": "model", "ai.streamtext.dostream": "model",
    "ai.generateobject.dogenerate": "model", "ai.streamobject.dostream": "model",
    "ai.embed.doembed": "model", "ai.embedmany.doembed": "model",
    "ai.toolcall": "tool",
    "ai.generatetext": "agent", "ai.streamtext": "agent",
    "ai.generateobject": "other", "ai.streamobject": "other", "ai.embed": "other",
    "ai.embedmany": "other",
}

#: llm.request.type (OpenLLMetry before it wrote gen_ai.operation.name) -> hop kind.
LLM_REQUEST_TYPE_HOPS = {"chat": "model", "completion": "model", "embedding": "model",
                         "rerank": "model"}

#: traceloop.span.kind (the Traceloop SDK's @workflow, @agent, @tool, @task) -> hop kind.
TRACELOOP_HOPS = {"workflow": "agent", "agent": "agent", "tool": "tool", "task": "other"}

#: spring.ai.kind (Spring AI's observations, whose framework spans carry
#: gen_ai.operation.name `framework` and gen_ai.system `spring_ai`) -> hop kind: the ChatClient
#: call runs the tool loop around its model calls (each its own `chat` span).
SPRING_AI_HOPS = {"chat_client": "agent", "tool_call": "tool", "advisor": "other",
                  "vector_store": "storage"}

#: Attributes whose value names the hop kind, in priority order: (attribute, table of values
#: trimmed and lower-cased -> hop kind); a value the table lacks falls through to the next.
HOP_KIND_LOOKUPS = (("gen_ai.operation.name", GENAI_OPERATION_HOPS),
                    ("openinference.span.kind", OPENINFERENCE_HOPS),
                    ("ai.operationId", VERCEL_AI_HOPS),
                    ("spring.ai.kind", SPRING_AI_HOPS),
                    ("llm.request.type", LLM_REQUEST_TYPE_HOPS),
                    ("traceloop.span.kind", TRACELOOP_HOPS))

#: GenAI attributes whose presence marks a hop kind when the span names no GenAI operation at
#: all (instrumentations written before gen_ai.operation.name): a tool name, a provider, a
#: requested model. A span naming another operation (Spring AI's `framework`) is not a call.
GENAI_PRESENCE_HOPS = (("gen_ai.tool.name", "tool"), ("gen_ai.provider.name", "model"),
                       ("gen_ai.system", "model"), ("gen_ai.request.model", "model"))

#: Attributes whose presence marks a hop kind (after the rules above).
PRESENCE_HOPS = (("messaging.system", "queue"), ("db.system", "storage"),
                 ("db.system.name", "storage"))

VALID_HOP_KINDS = frozenset(HOP_KINDS)

#: Span names that are an HTTP method alone: HTTP semconv names a span `{method}` when it knows
#: no route template (`HTTP {method}` in older instrumentations). A hop named so is named by
#: the method and its server's host (`GET orders.internal`), so calls to different services
#: are different hops.
HTTP_METHOD_NAMES = frozenset(
    name for verb in ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT",
                      "TRACE")
    for name in (verb, f"HTTP {verb}"))
#: Attributes naming an HTTP call's server, in priority order (stable semconv, then older).
HTTP_SERVER_KEYS = ("server.address", "net.peer.name")
#: ... else the host of its URL (stable semconv, then older).
HTTP_URL_KEYS = ("url.full", "http.url")
#: The host of a URL (its first group): no user, no port; an IPv6 host keeps its brackets.
#: Written for both Python's re and ClickHouse's re2.
URL_HOST = r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)"

#: Suffixes a class name may carry after the words that say what went wrong.
_SUFFIX = r"(error|exception|exc|failure|fault)?$"

#: Error class names -> error type: ordered (pattern, reason) rules, first match wins, over the
#: *normalized class name*: the last dotted part of the name (`<class 'openai.RateLimitError'>`
#: and `botocore.exceptions.ReadTimeoutError` are read as RateLimitError, ReadTimeoutError),
#: lower-cased, without '_', '-' and spaces. Patterns say what the name says and are anchored
#: at its end, so `TimeoutConfig` or `ratelimitchecker` name no failure. docs/span-contract.md.
ERROR_CLASS_RULES = (
    # rate limits and quotas (gRPC RESOURCE_EXHAUSTED is a quota)
    (r"(ratelimit(ed|s)?|ratelimitexceeded|ratelimitreached|toomanyrequests|"
     r"resourceexhausted|throttl(ed|ing)|quotaexceeded|quota)" + _SUFFIX, "rate_limited"),
    # the context window (before timeouts: "exceeded" alone says nothing)
    (r"(context(length|window)(exceeded)?|contextoverflow|maximumcontext(length)?exceeded|"
     r"(prompt|input)toolong)" + _SUFFIX, "context_overflow"),
    # breakers
    (r"(circuit(breaker)?(is)?open|circuitbreaker|brokencircuit)" + _SUFFIX, "circuit_open"),
    # timeouts and deadlines (ConnectTimeout is a timeout, not a connection error)
    (r"(time(d)?out(expired)?|deadline(exceeded)?)" + _SUFFIX, "timeout"),
    # servers (before connections: ServiceUnavailable is an HTTP 503 from a server)
    (r"(internalserver|internal|server|badgateway|serviceunavailable|apistatus|overloaded)"
     + _SUFFIX, "server_error"),
    # connections (gRPC UNAVAILABLE: the peer could not be reached)
    (r"(connect(ion|or)?(refused|reset|aborted|closed|lost)?|disconnected|unavailable|"
     r"remoteprotocol|brokenpipe|unreachable|nameresolution|unknownhost|dns)" + _SUFFIX,
     "connection_error"),
    # socket errno names as Node and libuv write them (err.code): whole names only, so
    # FileNotFoundError is no ENOTFOUND (ETIMEDOUT is a timeout by the rule above)
    (r"^e(connreset|connrefused|connaborted|pipe|hostunreach|netunreach|hostdown|netdown|"
     r"notfound|aiagain)$", "connection_error"),
    # cancellation
    (r"(cancel(l)?(ed|ation)?|abort(ed)?)" + _SUFFIX, "cancelled"),
    # the rest of the vocabulary
    (r"budget(exhausted|exceeded)" + _SUFFIX, "budget_exhausted"),
    (r"(looplimit|maxiterations(exceeded)?|recursionlimit|graphrecursion|maxturns(exceeded)?|"
     r"maxsteps(exceeded)?)" + _SUFFIX, "loop_limit"),
    (r"(invalidresponse|outputparser|jsondecode|validation|parse)" + _SUFFIX,
     "invalid_response"),
)

#: Failure messages (status descriptions, exception messages, message-like error.type) ->
#: error type: ordered (pattern, reason) rules over the lower-cased text, first match wins.
#: Word-bounded, so `rate_limit_checker` or `timeout_config` mention no failure.
ERROR_MESSAGE_RULES = (
    (r"\brate[ _-]?limit(ed|s|_exceeded|_error|_reached)?\b|\btoo many requests\b|"
     r"\bresource[ _]exhausted\b|\bquota exceeded\b|\bthrottl", "rate_limited"),
    (r"\bcontext[ _](length|window)|\bmaximum context\b", "context_overflow"),
    (r"\bcircuit( breaker)? (is )?open\b|\bcircuit breaker\b", "circuit_open"),
    (r"\btime[d]?[ -]?out\b|\bdeadline[ _]exceeded\b|\be(socket)?timedout\b", "timeout"),
    (r"\bbudget (exhausted|exceeded|ran out)\b", "budget_exhausted"),
    (r"\binternal server error\b|\bservice unavailable\b|\bbad gateway\b|\boverloaded\b",
     "server_error"),
    (r"\bconnection (refused|reset|error|aborted|closed|lost|failed)\b|\bconnect error\b|"
     r"\bfailed to connect\b|\bunavailable\b|\bname resolution\b|"
     # Node's socket errors ("read ECONNRESET", "getaddrinfo ENOTFOUND api"), aiohttp's and
     # Go's resolver and dialer texts, Envoy's answer when no upstream host is up
     r"\be(connreset|connrefused|connaborted|pipe|hostunreach|netunreach|notfound|ai_again)\b|"
     r"\bsocket hang up\b|\bdisconnected\b|\bcannot connect to host\b|\bbroken pipe\b|"
     r"\bno such host\b|\bname or service not known\b|\bnodename nor servname\b|"
     r"\bnetwork is unreachable\b|\bno route to host\b|\bno healthy upstream\b",
     "connection_error"),
    (r"\bcancel(l)?(ed|ation)\b|\baborted\b", "cancelled"),
)

#: gRPC status codes (rpc.grpc.status_code) -> error type; other codes say nothing more.
GRPC_STATUS_CODES = {1: "cancelled", 4: "timeout", 8: "rate_limited", 13: "server_error",
                     14: "connection_error"}

_CLASS_RULES = tuple((re.compile(p), r) for p, r in ERROR_CLASS_RULES)
_MESSAGE_RULES = tuple((re.compile(p), r) for p, r in ERROR_MESSAGE_RULES)
_VOCABULARY = {t.replace("_", ""): t for t in ERROR_TYPES}
_REPR = re.compile(r"^<(?:class|type) '([^']+)'>$")
#: A class name, also as Go prints a pointer's type (`*url.Error`).
_CLASS_NAME = re.compile(r"^\*?[\w$]+(?:(?:\.|::|/)[\w$]+)*$")
#: HTTP status codes quoted as whole words in a message ("HTTP 429", "Error code: 500").
_STATUS_CODE_WORD = re.compile(r"(?<!\d)(408|429|5\d\d)(?!\d)")


def class_key(raw: str) -> str | None:
    """Return the normalized class name of an error name, or None if it is not one."""
    name = raw.strip()
    wrapped = _REPR.match(name)
    if wrapped:
        name = wrapped.group(1)
    if not _CLASS_NAME.match(name):
        return None
    last = re.split(r"\.|::|/", name.lstrip("*"))[-1]
    return last.lower().replace("_", "").replace("$", "")


@lru_cache(maxsize=4096)
def map_error_name(raw: str) -> str | None:
    """Map an error class name, code or message-like error.type to the vocabulary, or None."""
    key = class_key(raw)
    if key is None:
        return map_status_message(raw)
    if key in _VOCABULARY:
        return _VOCABULARY[key]
    if key.isdigit():
        return _status_code_reason(int(key)) if len(key) == 3 else None
    return next((reason for rule, reason in _CLASS_RULES if rule.search(key)), None)


def map_status_message(message: str) -> str | None:
    """Map a failure message to the contract vocabulary; None if unrecognized."""
    lowered = message[:512].lower()
    for rule, reason in _MESSAGE_RULES:  # regexes are fine here: failed spans only
        if rule.search(lowered):
            return reason
    code = _STATUS_CODE_WORD.search(lowered)
    if code is not None:
        return _status_code_reason(int(code.group(1)))
    return map_error_name(message[:128]) if _CLASS_NAME.match(message.strip()) else None


def map_grpc_status(code: int | None) -> str | None:
    """Map a gRPC status code (rpc.grpc.status_code) to an error type; None if unlisted."""
    return GRPC_STATUS_CODES.get(code) if code else None


def _status_code_reason(code: int) -> str | None:
    # A 408 *named* as the error is a timeout; as a response status alone it is no failure.
    return "timeout" if code == 408 else map_http_status(code)


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
