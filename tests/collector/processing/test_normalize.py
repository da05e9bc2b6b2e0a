"""Tests for collector/normalize.py: rows, ids, attribute values, limits, typed columns."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from agentsla.collector.processing.normalize import normalize_request
from agentsla.collector.store.schema import SPAN_COLUMN_NAMES
from agentsla.config import load_config
from otlpvalues import kvs

LIMITS = load_config().ingest
TRACE = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
SPAN = bytes.fromhex("b7ad6b7169203331")
PARENT = bytes.fromhex("00f067aa0ba902b7")
T0 = 1_700_000_000_000_000_000


def make_span(attributes: dict | None = None, **fields) -> Span:
    values = {"trace_id": TRACE, "span_id": SPAN, "parent_span_id": PARENT, "name": "op",
              "kind": Span.SPAN_KIND_INTERNAL, "start_time_unix_nano": T0,
              "end_time_unix_nano": T0 + 250_000_000}
    values.update(fields)
    return Span(attributes=kvs(attributes or {}), **values)


def normalize(*spans: Span, limits=LIMITS, resource: dict | None = None):
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.extend(kvs(resource or {"service.name": "svc"}))
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "scope.lib"
    scope_spans.spans.extend(spans)
    return normalize_request(request, limits, received_ns=99)


def row_of(attributes: dict | None = None, **fields) -> dict:
    batch = normalize(make_span(attributes, **fields))
    assert batch.rejected == 0, batch.errors
    (row,) = batch.rows
    return row


def strict_json(text: str):
    """Parse JSON as DuckDB does: NaN and Infinity literals are invalid."""
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"invalid JSON constant {c}"))


def test_row_has_exactly_the_schema_columns_and_basic_fields():
    row = row_of({"a": "b"})
    assert tuple(row) == SPAN_COLUMN_NAMES
    assert row["trace_id"] == TRACE.hex() and row["span_id"] == SPAN.hex()
    assert row["parent_span_id"] == PARENT.hex()
    assert (row["service_name"], row["scope"], row["received_ns"]) == ("svc", "scope.lib", 99)
    assert row["duration_ms"] == 250.0 and row["span_kind"] == "internal"
    assert row["status_code"] == "unset" and row["status_message"] is None
    assert row["task_id"] is None and row["is_error"] is False
    assert strict_json(row["resource"]) == {"service.name": "svc"}
    assert (row["events"], row["links"]) == ("[]", "[]")


@pytest.mark.parametrize("value, expected", [
    ("text", "text"),                                # string
    ("", ""),                                        # empty string stays a string
    (True, True),                                    # bool
    (False, False),                                  # false bool is not dropped
    (-(2**63), -(2**63)),                            # int64 extremes
    (2**63 - 1, 2**63 - 1),
    (0, 0),                                          # zero int (not confused with empty)
    (3.25, 3.25),                                    # double
    (["a", 1, True, 2.5], ["a", 1, True, 2.5]),      # array
    ({"k": {"n": [1, 2]}}, {"k": {"n": [1, 2]}}),    # kvlist, nested
    (b"\x00\x01\xfe", "AAH+"),                       # bytes -> base64
    (AnyValue(), None),                              # empty AnyValue -> null
    (math.nan, "NaN"),                               # non-finite doubles as strings
    (math.inf, "Infinity"),
    (-math.inf, "-Infinity"),
    ([math.nan, 1.0], ["NaN", 1.0]),                 # ... also inside arrays
])
def test_attribute_value_round_trip(value, expected):
    row = row_of({"v": value})
    assert strict_json(row["attributes"]) == {"v": expected}


def test_non_finite_numbers_leave_typed_columns_null():
    row = row_of({"budget.remaining_ms": math.nan, "hop.timeout_ms": math.inf,
                  "budget.total_ms": "NaN", "gen_ai.response.time_to_first_chunk": -math.inf})
    assert row["budget_remaining_ms"] is None and row["hop_timeout_ms"] is None
    assert row["budget_total_ms"] is None and row["ttft_ms"] is None
    assert strict_json(row["attributes"])["hop.timeout_ms"] == "Infinity"


def test_attribute_count_limit_keeps_the_first_and_counts_the_rest():
    limits = dataclasses.replace(LIMITS, max_attributes_per_span=3)
    span = make_span({f"k{i}": i for i in range(5)}, dropped_attributes_count=4)
    (row,) = normalize(span, limits=limits).rows
    assert strict_json(row["attributes"]) == {"k0": 0, "k1": 1, "k2": 2,
                                              "agentsla.dropped_attributes": 2 + 4}


def test_sdk_dropped_attributes_are_recorded_even_under_the_limit():
    row = row_of({"a": 1}, dropped_attributes_count=7)
    assert strict_json(row["attributes"])["agentsla.dropped_attributes"] == 7


def test_value_length_limit_cuts_strings_with_a_marker():
    limits = dataclasses.replace(LIMITS, max_attribute_value_length=5)
    span = make_span({"s": "abcdefgh", "ok": "abcde", "nested": ["abcdefgh"]}, name="long-name")
    (row,) = normalize(span, limits=limits).rows
    attributes = strict_json(row["attributes"])
    assert attributes["s"] == "abcde...[truncated]"
    assert attributes["ok"] == "abcde"  # exactly at the limit: untouched
    assert attributes["nested"] == ["abcde...[truncated]"]
    assert row["name"] == "long-...[truncated]"


def test_depth_limit_replaces_deep_containers_with_a_marker():
    limits = dataclasses.replace(LIMITS, max_value_depth=2)
    span = make_span({"deep": [[[1]]], "map": {"a": {"b": {"c": 1}}}, "flat": [1]})
    (row,) = normalize(span, limits=limits).rows
    attributes = strict_json(row["attributes"])
    assert attributes["deep"] == [["...[truncated]"]]
    assert attributes["map"] == {"a": {"b": "...[truncated]"}}
    assert attributes["flat"] == [1]


@pytest.mark.parametrize("fields, reason", [
    ({"trace_id": b""}, "invalid trace id"),                    # missing trace id
    ({"trace_id": bytes(16)}, "invalid trace id"),              # all-zero trace id
    ({"trace_id": TRACE[:8]}, "invalid trace id"),              # 8-byte trace id
    ({"span_id": b""}, "invalid span id"),                      # missing span id
    ({"span_id": bytes(8)}, "invalid span id"),                 # all-zero span id
    ({"span_id": SPAN + b"\x01"}, "invalid span id"),           # 9-byte span id
    ({"parent_span_id": b"\x00"}, "invalid parent span id"),    # 1-byte parent
    ({"start_time_unix_nano": 2**64 - 1}, "invalid span time"),  # beyond int64
])
def test_invalid_spans_are_rejected_one_by_one(fields, reason):
    batch = normalize(make_span(), make_span(**fields), make_span(**fields))
    assert (len(batch.rows), batch.rejected) == (1, 2)
    assert len(batch.errors) == 1 and batch.errors[0].startswith(reason)


def test_error_messages_are_distinct_and_capped():
    bad = [make_span(trace_id=b"")] * 10 + [make_span(span_id=b"")] * 10
    batch = normalize(*bad)
    assert batch.rejected == 20 and len(batch.errors) == 2


@pytest.mark.parametrize("fields, column, expected", [
    ({"parent_span_id": b""}, "parent_span_id", None),                 # root: no parent
    ({"kind": Span.SPAN_KIND_CLIENT}, "span_kind", "client"),
    ({"kind": Span.SPAN_KIND_UNSPECIFIED}, "span_kind", "unspecified"),
    ({"kind": 42}, "span_kind", "unspecified"),                        # unknown enum number
    ({"status": Status(code=Status.STATUS_CODE_OK)}, "status_code", "ok"),
    ({"status": Status(code=Status.STATUS_CODE_ERROR, message="boom")}, "status_message", "boom"),
    ({"start_time_unix_nano": 0, "end_time_unix_nano": 0}, "duration_ms", 0.0),  # zero times kept
])
def test_span_fields(fields, column, expected):
    assert row_of(**fields)[column] == expected


def test_clock_skew_clamps_end_and_is_noted():
    row = row_of(start_time_unix_nano=T0, end_time_unix_nano=T0 - 5)
    assert (row["end_ns"], row["duration_ms"]) == (T0, 0.0)
    assert strict_json(row["attributes"])["agentsla.clock_skew"] is True


def test_events_and_links():
    span = make_span(events=[Span.Event(name="exception", time_unix_nano=T0 + 1,
                                        attributes=kvs({"exception.type": "ValueError"}))],
                     links=[Span.Link(trace_id=TRACE, span_id=PARENT, attributes=kvs({"x": 1}))])
    (row,) = normalize(span).rows
    assert strict_json(row["events"]) == [{"name": "exception", "time_ns": T0 + 1,
                                           "attributes": {"exception.type": "ValueError"}}]
    assert strict_json(row["links"]) == [{"trace_id": TRACE.hex(), "span_id": PARENT.hex(),
                                          "attributes": {"x": 1}}]


CONTRACT_SPAN = {
    "task.id": "task-1", "task.type": "support_chat", "tenant.id": "acme",
    "task.outcome": "degraded", "hop.kind": "model", "hop.timeout_ms": 30000,
    "budget.total_ms": 60000.0, "budget.remaining_ms": "41234.5", "budget.exhausted": "true",
    "retry.attempt": 1, "retry.max": 2, "fallback.used": True, "fallback.kind": "backup_model",
    "fallback.from": "gpt-4o", "fallback.to": "claude-sonnet", "circuit.state": "Half-Open",
    "idempotency.key": "idem-9", "agent.loop.limit": "12", "gen_ai.request.model": "claude-sonnet",
    "custom.unknown": "kept",
}


def test_contract_span_typed_columns():
    row = row_of(CONTRACT_SPAN)
    assert {k: row[k] for k in (
        "task_id", "task_type", "tenant_id", "task_outcome", "hop_kind", "hop_name",
        "hop_timeout_ms", "budget_total_ms", "budget_remaining_ms", "budget_exhausted",
        "retry_attempt", "retry_max", "fallback_used", "fallback_kind", "fallback_from",
        "fallback_to", "circuit_state", "idempotency_key", "loop_limit", "model")} == {
        "task_id": "task-1", "task_type": "support_chat", "tenant_id": "acme",
        "task_outcome": "degraded", "hop_kind": "model", "hop_name": "claude-sonnet",
        "hop_timeout_ms": 30000.0, "budget_total_ms": 60000.0, "budget_remaining_ms": 41234.5,
        "budget_exhausted": True, "retry_attempt": 1, "retry_max": 2, "fallback_used": True,
        "fallback_kind": "backup_model", "fallback_from": "gpt-4o", "fallback_to": "claude-sonnet",
        "circuit_state": "half_open", "idempotency_key": "idem-9", "loop_limit": 12,
        "model": "claude-sonnet"}
    assert strict_json(row["attributes"])["custom.unknown"] == "kept"


def test_genai_only_span():
    row = row_of({"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                  "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06",
                  "gen_ai.usage.input_tokens": 1200, "gen_ai.usage.output_tokens": "300",
                  "gen_ai.response.time_to_first_chunk": 0.25, "gen_ai.conversation.id": "c1"},
                 kind=Span.SPAN_KIND_CLIENT)
    assert (row["hop_kind"], row["hop_name"], row["operation"]) == ("model", "gpt-4o", "chat")
    assert (row["model"], row["input_tokens"], row["output_tokens"]) == ("gpt-4o", 1200, 300)
    assert row["ttft_ms"] == 250.0
    assert strict_json(row["attributes"])["gen_ai.conversation.id"] == "c1"


def test_openinference_only_span():
    row = row_of({"openinference.span.kind": "LLM",
                  "llm.invocation_parameters": '{"model": "gpt-4o-mini", "temperature": 0}',
                  "llm.token_count.prompt": 50, "llm.token_count.completion": 7,
                  "session.id": "s1"})
    assert (row["hop_kind"], row["hop_name"], row["operation"]) == ("model", "gpt-4o-mini", "LLM")
    assert (row["input_tokens"], row["output_tokens"]) == (50, 7)


@pytest.mark.parametrize("attributes, fields, hop_kind, hop_name", [
    # a valid hop.kind wins over everything
    ({"hop.kind": "cache", "gen_ai.operation.name": "chat"}, {}, "cache", "op"),
    # an invalid hop.kind is ignored and inference continues
    ({"hop.kind": "llm", "gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}, {},
     "model", "m"),
    # GenAI operations
    ({"gen_ai.operation.name": "embeddings", "gen_ai.request.model": "e5"}, {}, "model", "e5"),
    ({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}, {},
     "tool", "search"),
    ({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"}, {},
     "agent", "planner"),
    ({"gen_ai.operation.name": "invoke_workflow"}, {}, "agent", "op"),  # no name: span name
    # OpenInference kinds
    ({"openinference.span.kind": "TOOL", "tool.name": "calc"}, {}, "tool", "calc"),
    ({"openinference.span.kind": "RETRIEVER"}, {}, "tool", "op"),
    ({"openinference.span.kind": "AGENT"}, {}, "agent", "op"),
    ({"openinference.span.kind": "RERANKER", "llm.model_name": "rr"}, {}, "model", "rr"),
    ({"openinference.span.kind": "CHAIN"}, {}, "other", "op"),
    # an unknown GenAI operation falls through to the OpenInference kind
    ({"gen_ai.operation.name": "frobnicate", "openinference.span.kind": "TOOL"}, {}, "tool", "op"),
    # any case of an OpenInference kind
    ({"openinference.span.kind": "Llm", "llm.model_name": "m"}, {}, "model", "m"),
    # the Vercel AI SDK's telemetry: provider calls, tool calls, the generateText loop (named
    # by its functionId); a wrapper of one provider call is no second model call
    ({"ai.operationId": "ai.generateText.doGenerate", "gen_ai.system": "openai.chat",
      "gen_ai.request.model": "gpt-4o-mini"}, {}, "model", "gpt-4o-mini"),
    ({"ai.operationId": "ai.streamText.doStream", "ai.model.id": "gpt-4o"}, {},
     "model", "gpt-4o"),
    ({"ai.operationId": "ai.toolCall", "ai.toolCall.name": "search_kb"}, {}, "tool", "search_kb"),
    ({"ai.operationId": "ai.generateText", "ai.model.id": "gpt-4o-mini",
      "ai.telemetry.functionId": "support-agent"}, {}, "agent", "support-agent"),
    ({"ai.operationId": "ai.generateObject", "ai.model.id": "gpt-4o"}, {}, "other", "op"),
    # OpenLLMetry before gen_ai.operation.name; the Traceloop SDK's decorators
    ({"llm.request.type": "chat", "gen_ai.request.model": "gpt-4"}, {}, "model", "gpt-4"),
    ({"llm.request.type": "embedding", "gen_ai.request.model": "e5"}, {}, "model", "e5"),
    ({"traceloop.span.kind": "workflow"}, {}, "agent", "op"),
    ({"traceloop.span.kind": "tool"}, {}, "tool", "op"),
    ({"traceloop.span.kind": "task"}, {}, "other", "op"),
    # GenAI attributes without an operation: a tool name, a provider, a requested model
    ({"gen_ai.tool.name": "calc"}, {}, "tool", "calc"),
    ({"gen_ai.system": "openai", "gen_ai.request.model": "m"}, {}, "model", "m"),
    ({"gen_ai.provider.name": "anthropic"}, {}, "model", "op"),
    # ... but not on a span naming another operation: Spring AI's framework spans
    ({"gen_ai.operation.name": "framework", "gen_ai.system": "spring_ai"}, {}, "other", "op"),
    ({"gen_ai.operation.name": "framework", "gen_ai.system": "spring_ai",
      "spring.ai.kind": "chat_client"}, {}, "agent", "op"),
    ({"gen_ai.operation.name": "framework", "gen_ai.system": "spring_ai",
      "spring.ai.kind": "tool_call", "spring.ai.tool.definition.name": "getItemStock"}, {},
     "tool", "getItemStock"),
    ({"gen_ai.operation.name": "framework", "gen_ai.system": "spring_ai",
      "spring.ai.kind": "advisor"}, {}, "other", "op"),
    # a span named by its HTTP method alone is named by its server's host too: stable and
    # older semconv, the URL's host (no user, no port; IPv6 in brackets); else the method
    ({"http.request.method": "GET", "server.address": "orders.internal"}, {"name": "GET"},
     "other", "GET orders.internal"),
    ({"http.method": "POST", "net.peer.name": "kb"}, {"name": "HTTP POST"}, "other",
     "HTTP POST kb"),
    ({"http.url": "http://u:p@tools.local:8080/search?q=1"}, {"name": "POST"}, "other",
     "POST tools.local"),
    ({"url.full": "https://[::1]:9000/x"}, {"name": "GET"}, "other", "GET [::1]"),
    ({"url.full": "not a url"}, {"name": "GET"}, "other", "GET"),
    ({"server.address": "orders.internal"}, {"name": "GET /orders/{id}"}, "other",
     "GET /orders/{id}"),
    ({"gen_ai.tool.name": "lookup", "server.address": "h"}, {"name": "POST"}, "tool", "lookup"),
    # messaging, databases
    ({"messaging.system": "kafka"}, {}, "queue", "op"),
    ({"db.system": "postgresql"}, {}, "storage", "op"),
    ({"db.system.name": "redis"}, {}, "storage", "op"),
    # a root SERVER span is the gateway; a non-root one is not
    ({}, {"parent_span_id": b"", "kind": Span.SPAN_KIND_SERVER}, "gateway", "op"),
    ({}, {"kind": Span.SPAN_KIND_SERVER}, "other", "op"),
    ({}, {}, "other", "op"),
])
def test_hop_inference(attributes, fields, hop_kind, hop_name):
    row = row_of(attributes, **fields)
    assert (row["hop_kind"], row["hop_name"]) == (hop_kind, hop_name)


@pytest.mark.parametrize("attributes, column, expected", [
    ({"retry.attempt": "2"}, "retry_attempt", 2),                     # number as string
    ({"retry.attempt": 2.0}, "retry_attempt", 2),                     # integral double
    ({"retry.attempt": "two"}, "retry_attempt", None),                # uncoercible
    ({"http.request.resend_count": 3}, "retry_attempt", 3),           # OTel HTTP fallback
    ({"retry.attempt": 1, "http.request.resend_count": 3}, "retry_attempt", 1),  # priority
    ({"http.request.resend_count": 3, "retry.attempt": 1}, "retry_attempt", 1),  # either order
    ({"retry.attempt": 2**40}, "retry_attempt", None),                # out of INTEGER range
    ({"fallback.used": "TRUE"}, "fallback_used", True),
    ({"fallback.used": 0}, "fallback_used", False),
    ({"fallback.used": "maybe"}, "fallback_used", None),
    ({"http.status_code": "503"}, "http_status", 503),                # legacy HTTP key
    ({"task.outcome": "bogus"}, "task_outcome", None),                # not an outcome
    ({"task.outcome": "Canceled"}, "task_outcome", "cancelled"),      # spelling variant
    ({"circuit.state": "weird"}, "circuit_state", "weird"),           # unknown: verbatim
    ({"task.id": 12345}, "task_id", "12345"),                         # number as id
    ({"task.id": ""}, "task_id", None),                               # empty: none
    ({"gen_ai.usage.prompt_tokens": 9}, "input_tokens", 9),           # older GenAI names
    ({"gen_ai.usage.completion_tokens": 4}, "output_tokens", 4),
    ({"gen_ai.system": "openai", "gen_ai.response.model": "m2"}, "model", "m2"),
    ({"llm.invocation_parameters": "{not json"}, "model", None),
    ({"tool.name": "t", "gen_ai.tool.name": "g"}, "tool", "g"),       # GenAI first
    ({"gen_ai.response.time_to_first_chunk": 0.25}, "ttft_ms", 250.0),  # seconds
    ({"ai.response.msToFirstChunk": 412.5}, "ttft_ms", 412.5),        # Vercel AI SDK: ms
    ({"ai.stream.msToFirstChunk": 80}, "ttft_ms", 80.0),
    ({"ai.toolCall.name": "search_kb"}, "tool", "search_kb"),
    ({"ai.model.id": "gpt-4o-mini"}, "model", "gpt-4o-mini"),
])
def test_lenient_coercion(attributes, column, expected):
    row = row_of(attributes)
    assert row[column] == expected
    assert strict_json(row["attributes"]).keys() == attributes.keys()  # raw values kept


ERROR = Status(code=Status.STATUS_CODE_ERROR)


def _error_status(message: str) -> Status:
    return Status(code=Status.STATUS_CODE_ERROR, message=message)


def _exception(exception_type: str) -> list[Span.Event]:
    return [Span.Event(name="exception", attributes=kvs({"exception.type": exception_type}))]


@pytest.mark.parametrize("attributes, fields, error_type", [
    # error.type attribute, mapped to the vocabulary (even without ERROR status)
    ({"error.type": "openai.RateLimitError"}, {}, "rate_limited"),
    ({"error.type": "RateLimitError"}, {}, "rate_limited"),
    ({"error.type": "429"}, {}, "rate_limited"),
    ({"error.type": "openai.APITimeoutError"}, {}, "timeout"),
    ({"error.type": "httpx.ReadTimeout"}, {}, "timeout"),
    ({"error.type": "asyncio.TimeoutError"}, {}, "timeout"),
    ({"error.type": "grpc.StatusCode.DEADLINE_EXCEEDED"}, {}, "timeout"),
    ({"error.type": "504"}, {}, "timeout"),
    ({"error.type": "APIConnectionError"}, {}, "connection_error"),
    ({"error.type": "httpx.ConnectError"}, {}, "connection_error"),
    ({"error.type": "InternalServerError"}, {}, "server_error"),
    ({"error.type": "502"}, {}, "server_error"),
    ({"error.type": "CircuitBreakerError"}, {}, "circuit_open"),
    ({"error.type": "context_length_exceeded"}, {}, "context_overflow"),
    ({"error.type": "asyncio.CancelledError"}, {}, "cancelled"),
    ({"error.type": "budget_exhausted"}, {}, "budget_exhausted"),     # already in vocabulary
    ({"error.type": "QuotaGremlin"}, {}, "QuotaGremlin"),             # unknown: verbatim
    # error.type wins over the HTTP status
    ({"error.type": "timeout", "http.response.status_code": 500}, {}, "timeout"),
    # HTTP status
    ({"http.response.status_code": 429}, {"kind": Span.SPAN_KIND_CLIENT}, "rate_limited"),
    ({"http.response.status_code": 504}, {}, "timeout"),
    ({"http.response.status_code": 503}, {}, "server_error"),
    ({"http.response.status_code": 404}, {"kind": Span.SPAN_KIND_CLIENT}, None),  # not a failure
    ({"http.response.status_code": 200}, {}, None),
    # exception events count only with ERROR status
    ({}, {"status": ERROR, "events": _exception("httpx.ReadTimeout")}, "timeout"),
    ({}, {"events": _exception("httpx.ReadTimeout")}, None),           # handled exception
    ({}, {"status": ERROR, "events": _exception("ValueError")}, "ValueError"),
    # status message
    ({}, {"status": _error_status("request timed out after 30s")}, "timeout"),
    ({}, {"status": _error_status("Rate limit reached for gpt-4o")}, "rate_limited"),
    ({}, {"status": _error_status("HTTP 429")}, "rate_limited"),
    ({}, {"status": _error_status("upstream returned 503")}, "server_error"),
    ({}, {"status": _error_status("gave up after 1500 ms")}, "error"),  # 500 inside a number
    ({}, {"status": _error_status("RateLimitError")}, "rate_limited"),  # a bare class name
    # a recognized message beats an unrecognized exception type
    ({}, {"status": _error_status("deadline exceeded"), "events": _exception("RuntimeError")},
     "timeout"),
    # ERROR status with nothing recognizable
    ({}, {"status": _error_status("something broke")}, "error"),
    ({}, {"status": ERROR}, "error"),
    # OK and unset spans without error signals
    ({}, {"status": Status(code=Status.STATUS_CODE_OK)}, None),
    ({}, {}, None),
])
def test_error_type_derivation(attributes, fields, error_type):
    row = row_of(attributes, **fields)
    assert row["error_type"] == error_type
    assert row["is_error"] == (error_type is not None)
