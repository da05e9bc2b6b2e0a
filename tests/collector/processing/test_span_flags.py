"""OTLP span flags → parent_remote, from protobuf and from OTLP/JSON (trace.proto SpanFlags)."""

from __future__ import annotations

import json

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from agentsla.collector.processing.normalize import normalize_request
from agentsla.collector.receivers.decode import parse_json
from agentsla.config import load_config

LIMITS = load_config().ingest


def normalized(span: Span) -> dict:
    request = ExportTraceServiceRequest()
    request.resource_spans.add().scope_spans.add().spans.append(span)
    (row,) = normalize_request(request, LIMITS, received_ns=1).rows
    return row


@pytest.mark.parametrize(("flags", "parent_remote"), [
    (0, None),              # an SDK older than the is_remote bits: unknown
    (0x01, None),           # W3C sampled bit only: still unknown
    (0x100, False),         # HAS_IS_REMOTE alone: the parent is in the same process
    (0x300, True),          # HAS_IS_REMOTE | IS_REMOTE: the parent is upstream
    (0x301, True),          # ... with the sampled trace flag in the low byte
    (0x200, None),          # IS_REMOTE without HAS_IS_REMOTE is not a statement (spec)
])
def test_flags_say_whether_the_parent_is_remote(flags: int, parent_remote: bool | None) -> None:
    span = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, parent_span_id=b"\x03" * 8,
                name="POST /chat", kind=Span.SPAN_KIND_SERVER, start_time_unix_nano=1,
                end_time_unix_nano=2, flags=flags)
    assert normalized(span)["parent_remote"] is parent_remote


def test_json_flags_are_read_as_a_number() -> None:
    body = {"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
        "parentSpanId": "00f067aa0ba902b7", "name": "POST /chat", "kind": 2,
        "startTimeUnixNano": "1", "endTimeUnixNano": "2", "flags": 769}]}]}]}
    request = parse_json(json.dumps(body).encode())
    (row,) = normalize_request(request, LIMITS, received_ns=1).rows
    assert row["parent_remote"] is True
