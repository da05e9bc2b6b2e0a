"""Error reasons as real SDKs write them: the one rule set (docs/span-contract.md, Error type)."""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from agentsla.collector.processing.mapping import map_error_name, map_status_message
from agentsla.collector.processing.normalize import normalize_request
from agentsla.config import load_config

LIMITS = load_config().ingest
ERROR = Status(code=Status.STATUS_CODE_ERROR)


@pytest.mark.parametrize(("name", "reason"), [
    # openai-v2 instrumentation writes the repr of the class
    ("<class 'openai.InternalServerError'>", "server_error"),
    ("<class 'openai.RateLimitError'>", "rate_limited"),
    ("<class 'openai.APITimeoutError'>", "timeout"),
    ("<class 'openai.APIConnectionError'>", "connection_error"),
    ("<class 'openai.BadRequestError'>", None),                  # nothing about time or load
    # module-qualified names from client libraries, including ones named nowhere in the rules
    ("botocore.exceptions.ReadTimeoutError", "timeout"),
    ("botocore.exceptions.ConnectTimeoutError", "timeout"),     # a timeout before a connection
    ("botocore.exceptions.EndpointConnectionError", "connection_error"),
    ("ThrottlingException", "rate_limited"),                    # AWS Bedrock
    ("anthropic.RateLimitError", "rate_limited"),
    ("anthropic.OverloadedError", "server_error"),              # HTTP 529
    ("google.api_core.exceptions.DeadlineExceeded", "timeout"),
    ("google.api_core.exceptions.ResourceExhausted", "rate_limited"),
    ("google.api_core.exceptions.ServiceUnavailable", "server_error"),
    ("google.api_core.exceptions.TooManyRequests", "rate_limited"),
    ("httpx.ConnectTimeout", "timeout"),
    ("httpx.PoolTimeout", "timeout"),
    ("httpx.RemoteProtocolError", "connection_error"),
    ("requests.exceptions.ConnectionError", "connection_error"),
    ("urllib3.exceptions.NewConnectionError", "connection_error"),
    ("aiohttp.ServerTimeoutError", "timeout"),
    ("aiohttp.ClientConnectorError", "connection_error"),
    ("aiohttp.ServerDisconnectedError", "connection_error"),
    ("litellm.exceptions.ServiceUnavailableError", "server_error"),
    ("litellm.exceptions.ContextWindowExceededError", "context_overflow"),
    ("litellm.Timeout", "timeout"),
    ("java.net.SocketTimeoutException", "timeout"),             # another language's SDK
    ("System.TimeoutException", "timeout"),
    ("context.DeadlineExceeded", "timeout"),                    # Go
    ("subprocess.TimeoutExpired", "timeout"),
    ("pybreaker.CircuitBreakerError", "circuit_open"),
    ("asyncio.CancelledError", "cancelled"),
    ("langgraph.errors.GraphRecursionError", "loop_limit"),
    ("openai.InsufficientQuotaError", "rate_limited"),
    # gRPC status names, bare and qualified
    ("DEADLINE_EXCEEDED", "timeout"),
    ("RESOURCE_EXHAUSTED", "rate_limited"),
    ("UNAVAILABLE", "connection_error"),
    ("grpc.StatusCode.UNAVAILABLE", "connection_error"),
    ("INTERNAL", "server_error"),
    ("CANCELLED", "cancelled"),
    ("NOT_FOUND", None),
    # HTTP codes and messages written as error.type
    ("429", "rate_limited"),
    ("408", "timeout"),
    ("503", "server_error"),
    ("429 Too Many Requests", "rate_limited"),
    ("Error code: 500", "server_error"),
    ("Error code: 400 - {'error': {'code': 'context_length_exceeded'}}", "context_overflow"),
    # socket errno names as Node writes them (err.code), Java's and Go's resolver errors
    ("ECONNRESET", "connection_error"),
    ("ECONNREFUSED", "connection_error"),
    ("EPIPE", "connection_error"),
    ("ENOTFOUND", "connection_error"),
    ("EAI_AGAIN", "connection_error"),
    ("ETIMEDOUT", "timeout"),
    ("ESOCKETTIMEDOUT", "timeout"),
    ("UND_ERR_HEADERS_TIMEOUT", "timeout"),                     # undici (Node's fetch)
    ("java.net.UnknownHostException", "connection_error"),
    ("*net.DNSError", "connection_error"),                      # Go prints pointer types
    ("*url.Error", None),                                       # a wrapper: says nothing
    ("FileNotFoundError", None),                                # no ENOTFOUND inside a name
    # names that mention a reason without naming a failure stay unrecognized
    ("TimeoutConfig", None),
    ("rate_limit_checker", None),
    ("QuotaGremlin", None),
    ("ValueError", None),
])
def test_error_names(name: str, reason: str | None) -> None:
    assert map_error_name(name) == reason


@pytest.mark.parametrize(("message", "reason"), [
    ("Error code: 500 - {'error': {'message': 'The server had an error'}}", "server_error"),
    ("Error code: 429 - {'error': {'code': 'rate_limit_exceeded'}}", "rate_limited"),
    ("429 Too Many Requests", "rate_limited"),
    ("Request timed out.", "timeout"),                          # openai's APITimeoutError text
    ("failed to connect to all addresses", "connection_error"),  # grpc-core
    ("Deadline Exceeded", "timeout"),
    ("Connection refused", "connection_error"),
    ("Circuit breaker is open", "circuit_open"),
    # Node's socket and abort texts, Go's dialer and resolver, aiohttp, glibc, Envoy
    ("read ECONNRESET", "connection_error"),
    ("connect ECONNREFUSED 127.0.0.1:8080", "connection_error"),
    ("connect ETIMEDOUT 10.0.0.1:443", "timeout"),
    ("getaddrinfo ENOTFOUND api.example.com", "connection_error"),
    ("getaddrinfo EAI_AGAIN api.example.com", "connection_error"),
    ("socket hang up", "connection_error"),
    ("This operation was aborted", "cancelled"),                # AbortController.abort()
    ("The operation was aborted due to timeout", "timeout"),    # AbortSignal.timeout()
    ('Post "https://api.example.com/v1": context deadline exceeded (Client.Timeout exceeded '
     'while awaiting headers)', "timeout"),
    ("dial tcp: lookup api.example.com: no such host", "connection_error"),
    ("Server disconnected", "connection_error"),
    ("[Errno -2] Name or service not known", "connection_error"),
    ("no healthy upstream", "connection_error"),
    ("rate_limit_checker returned false", None),                # a tool's name, not a reason
    ("invalid TimeoutConfig", None),                            # a class name inside a message
    ("gave up after 1500 ms", None),                            # 500 inside a number
])
def test_failure_messages(message: str, reason: str | None) -> None:
    assert map_status_message(message) == reason


def attributes(values: dict) -> list[KeyValue]:
    out = []
    for key, value in values.items():
        any_value = (AnyValue(int_value=value) if isinstance(value, int)
                     else AnyValue(string_value=value))
        out.append(KeyValue(key=key, value=any_value))
    return out


def span_row(attrs: dict, status: Status | None = None, exception: dict | None = None) -> dict:
    events = [Span.Event(name="exception", attributes=attributes(exception))] if exception else []
    span = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="call", start_time_unix_nano=1,
                end_time_unix_nano=2, attributes=attributes(attrs), status=status, events=events)
    request = ExportTraceServiceRequest()
    request.resource_spans.add().scope_spans.add().spans.append(span)
    (row,) = normalize_request(request, LIMITS, received_ns=1).rows
    return row


@pytest.mark.parametrize(("attrs", "status", "exception", "reason"), [
    # the repr form on error.type, as openai-v2 writes it
    ({"error.type": "<class 'openai.InternalServerError'>"}, ERROR, None, "server_error"),
    # the older HTTP attribute, beside the current one
    ({"http.status_code": 429}, None, None, "rate_limited"),
    ({"http.response.status_code": 503}, None, None, "server_error"),
    # gRPC status codes as numbers
    ({"rpc.grpc.status_code": 4}, ERROR, None, "timeout"),
    ({"rpc.grpc.status_code": 8}, ERROR, None, "rate_limited"),
    ({"rpc.grpc.status_code": 14}, ERROR, None, "connection_error"),
    ({"rpc.grpc.status_code": 5}, ERROR, None, "error"),        # NOT_FOUND: failed, no reason
    # a newer semconv name for the gRPC status
    ({"rpc.response.status_code": "DEADLINE_EXCEEDED"}, ERROR, None, "timeout"),
    # an exception the client library raised, qualified by its module
    ({}, ERROR, {"exception.type": "httpx.ConnectTimeout"}, "timeout"),
    # an unrecognized type whose message says what happened
    ({}, ERROR, {"exception.type": "openai.APIStatusErrorX", "exception.message":
                 "Error code: 503 Service Unavailable"}, "server_error"),
    # semconv's _OTHER says only "failed": the message tells the reason
    ({"error.type": "_OTHER"}, Status(code=Status.STATUS_CODE_ERROR, message="Error code: 429"),
     None, "rate_limited"),
    ({"error.type": "_OTHER"}, None, None, "_OTHER"),
    # psycopg's statement timeout: the class says cancelled, the message says why
    ({}, Status(code=Status.STATUS_CODE_ERROR,
                message="canceling statement due to statement timeout"),
     {"exception.type": "psycopg.errors.QueryCanceled"}, "timeout"),
    # ... also when error.type names the class
    ({"error.type": "psycopg.errors.QueryCanceled"},
     Status(code=Status.STATUS_CODE_ERROR, message="canceling statement due to statement timeout"),
     None, "timeout"),
    ({"error.type": "asyncio.CancelledError"}, ERROR, None, "cancelled"),
    # a declared reason other than a cancellation is not second-guessed by the message
    ({"error.type": "openai.RateLimitError"}, Status(code=Status.STATUS_CODE_ERROR,
                                                     message="Request timed out."),
     None, "rate_limited"),
    # an unrecognized error.type (a wrapper class) gives way to what the other signals say:
    # Java's gRPC instrumentation, Go's net/http, .NET's HttpClient, a retry library
    ({"error.type": "io.grpc.StatusRuntimeException", "rpc.grpc.status_code": 4}, ERROR, None,
     "timeout"),
    ({"error.type": "*url.Error"}, Status(code=Status.STATUS_CODE_ERROR, message=(
        'Post "https://api.example.com/v1/chat": context deadline exceeded')), None, "timeout"),
    ({"error.type": "System.Net.Http.HttpRequestException"}, ERROR,
     {"exception.type": "System.Net.Http.HttpRequestException",
      "exception.message": "Connection refused (api.example.com:443)"}, "connection_error"),
    ({"error.type": "tenacity.RetryError", "http.response.status_code": 429}, ERROR, None,
     "rate_limited"),
    ({"error.type": "ECONNRESET"}, ERROR, None, "connection_error"),
    # a plain cancellation stays one
    ({}, ERROR, {"exception.type": "asyncio.CancelledError"}, "cancelled"),
    # unrecognizable reasons are kept verbatim
    ({"error.type": "QuotaGremlin"}, ERROR, None, "QuotaGremlin"),
    ({"error.type": "io.grpc.StatusRuntimeException", "rpc.grpc.status_code": 5}, ERROR, None,
     "io.grpc.StatusRuntimeException"),                         # NOT_FOUND: nothing better
    ({}, ERROR, {"exception.type": "mylib.WeirdError"}, "mylib.WeirdError"),
    # spans that did not fail get no reason, whatever their names say
    ({"gen_ai.tool.name": "rate_limit_checker"}, None, None, None),
    ({}, None, {"exception.type": "TimeoutConfig"}, None),      # a handled exception
    ({}, Status(code=Status.STATUS_CODE_OK, message="rate limit checked"), None, None),
    ({"rpc.grpc.status_code": 0}, None, None, None),            # OK
])
def test_span_reasons(attrs: dict, status: Status | None, exception: dict | None,
                      reason: str | None) -> None:
    row = span_row(attrs, status, exception)
    assert row["error_type"] == reason
    assert row["is_error"] == (reason is not None)
