"""Generators of hostile OTLP trace requests: hypothesis strategies and a fast byte mutator.

`payloads()` draws (body, content_type, content_encoding) triples: structured protobuf and
OTLP/JSON requests with boundary values (zero, short and duplicate ids, parent cycles and
self-parents, missing parents, reversed and out-of-range times, NaN and infinities, int64
limits, out-of-range enums, invalid UTF-8, deep AnyValue nesting), plus gzip/deflate/zstd wrapping
and truncation. `mutate(body, rng)` is a cheap byte-level mutator (bit flips, cuts, splices,
repeats) for volume. `check_in_process` is the oracle shared by the in-process tests.
"""

from __future__ import annotations

import base64
import gzip
import math
import random
import zlib
from collections import defaultdict

import orjson
import pyarrow as pa
from google.protobuf import json_format
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from agentsla.collector.receivers.decode import (check_span_count, count_spans, decode_body,
                                                 zstd)
from agentsla.collector.processing.normalize import normalize_request
from agentsla.collector.store.schema import SPAN_ARROW_SCHEMA, SPAN_COLUMN_NAMES, TASK_COLUMN_NAMES
from agentsla.collector.tasks.materialize import materialize_task
from agentsla.config import IngestConfig, TasksConfig
from agentsla.errors import PermanentError

INT64 = (-(2**63), 2**63 - 1)
UINT64_MAX = 2**64 - 1
#: A marker the generator puts in strings; `_break_utf8` turns it into invalid UTF-8 bytes.
BAD_UTF8_MARK = "\u2603BADUTF8\u2603"  # 13 bytes in UTF-8
_BAD_BYTES = b"\xff\xfe\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x28\x8c\xbc"  # 13 invalid bytes

_TIMES = st.one_of(st.sampled_from([0, 1, 2**63 - 1, 2**63, UINT64_MAX, 1_700_000_000 * 10**9]),
                   st.integers(0, UINT64_MAX))
_INTS = st.one_of(st.sampled_from([INT64[0], INT64[1], 0, -1, 2**31, -(2**31) - 1]),
                  st.integers(*INT64))
_FLOATS = st.one_of(st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 5e-324, 1.8e308]),
                    st.floats(allow_nan=True, allow_infinity=True))
_TEXT = st.one_of(st.text(max_size=40), st.sampled_from(
    ["", "\x00", "\u202e", "\ud7ff", "\U0001F600" * 3, BAD_UTF8_MARK, "'; drop table spans; --",
     "timeout", "rate_limited", "gateway", "model", "tool", "success", "true", "NaN", "1e309"]))
_KEYS = st.one_of(st.sampled_from([
    "task.id", "task.type", "tenant.id", "task.outcome", "hop.kind", "hop.timeout_ms",
    "budget.total_ms", "budget.remaining_ms", "budget.exhausted", "retry.attempt", "retry.max",
    "fallback.used", "fallback.kind", "error.type", "gen_ai.operation.name",
    "gen_ai.request.model", "gen_ai.usage.input_tokens", "http.response.status_code",
    "http.request.resend_count", "openinference.span.kind", "llm.invocation_parameters",
    "gen_ai.response.time_to_first_chunk", "service.name", "agentsla.dropped_attributes", ""]),
    _TEXT)


def _any_values() -> st.SearchStrategy:
    scalars = st.one_of(
        st.builds(lambda s: AnyValue(string_value=s), _TEXT),
        st.builds(lambda b: AnyValue(bool_value=b), st.booleans()),
        st.builds(lambda i: AnyValue(int_value=i), _INTS),
        st.builds(lambda f: AnyValue(double_value=f), _FLOATS),
        st.builds(lambda b: AnyValue(bytes_value=b), st.binary(max_size=20)),
        st.just(AnyValue()))

    def containers(children):
        def array(values):
            out = AnyValue()
            out.array_value.values.extend(values)
            return out

        def kvlist(pairs):
            out = AnyValue()
            out.kvlist_value.values.extend(KeyValue(key=k, value=v) for k, v in pairs)
            return out
        return st.one_of(st.builds(array, st.lists(children, max_size=4)),
                         st.builds(kvlist, st.lists(st.tuples(_KEYS, children), max_size=4)))
    return st.recursive(scalars, containers, max_leaves=6)


def deep_value(depth: int) -> AnyValue:
    """An AnyValue nested `depth` arrays deep (kvlists every third level)."""
    value = AnyValue(string_value="bottom")
    for level in range(depth):
        outer = AnyValue()
        if level % 3 == 2:
            outer.kvlist_value.values.add(key=f"l{level}").value.CopyFrom(value)
        else:
            outer.array_value.values.add().CopyFrom(value)
        value = outer
    return value


_ATTRIBUTES = st.lists(st.builds(lambda k, v: KeyValue(key=k, value=v), _KEYS, _any_values()),
                       max_size=5)


@st.composite
def requests(draw) -> ExportTraceServiceRequest:
    """An ExportTraceServiceRequest full of boundary cases (ids drawn from small pools)."""
    traces = draw(st.lists(st.one_of(st.binary(min_size=16, max_size=16),
                                     st.sampled_from([bytes(16), b"", b"\x01", bytes(17)])),
                           min_size=1, max_size=3))
    span_ids = draw(st.lists(st.one_of(st.binary(min_size=8, max_size=8),
                                       st.sampled_from([bytes(8), b"\x01" * 7, b"\x02" * 9])),
                             min_size=1, max_size=6))
    request = ExportTraceServiceRequest()
    for _ in range(draw(st.integers(1, 2))):
        resource_spans = request.resource_spans.add()
        resource_spans.resource.attributes.extend(draw(_ATTRIBUTES))
        resource_spans.resource.dropped_attributes_count = draw(st.integers(0, 2**32 - 1))
        scope = resource_spans.scope_spans.add()
        scope.scope.name = draw(_TEXT)
        for _ in range(draw(st.integers(0, 5))):
            span = scope.spans.add()
            span.trace_id = draw(st.sampled_from(traces))
            span.span_id = draw(st.sampled_from(span_ids))  # duplicates on purpose
            # a parent from the same pool makes cycles, self-parents and missing parents
            span.parent_span_id = draw(st.one_of(st.just(b""), st.sampled_from(span_ids),
                                                 st.binary(max_size=9)))
            span.name = draw(_TEXT)
            span.kind = draw(st.sampled_from([0, 1, 2, 3, 4, 5, 6, -1, 2**31 - 1]))
            span.start_time_unix_nano = draw(_TIMES)
            span.end_time_unix_nano = draw(st.one_of(_TIMES, st.just(span.start_time_unix_nano)))
            span.attributes.extend(draw(_ATTRIBUTES))
            if draw(st.booleans()):
                span.attributes.add(key="deep").value.CopyFrom(deep_value(draw(st.integers(0, 60))))
            span.dropped_attributes_count = draw(st.integers(0, 2**32 - 1))
            span.status.code = draw(st.sampled_from([0, 1, 2, 3, -7]))
            span.status.message = draw(_TEXT)
            for _ in range(draw(st.integers(0, 2))):
                event = span.events.add(name=draw(_TEXT), time_unix_nano=draw(_TIMES))
                event.attributes.extend(draw(_ATTRIBUTES))
            for _ in range(draw(st.integers(0, 1))):
                link = span.links.add(trace_id=draw(st.sampled_from(traces)),
                                      span_id=draw(st.sampled_from(span_ids)))
                link.attributes.extend(draw(_ATTRIBUTES))
    return request


def _break_utf8(body: bytes) -> bytes:
    # same length, so every protobuf length prefix stays right
    return body.replace(BAD_UTF8_MARK.encode(), _BAD_BYTES)


def to_json(request: ExportTraceServiceRequest) -> bytes:
    """Encode as OTLP/JSON (hex ids, as the spec says)."""
    data = json_format.MessageToDict(request)
    for resource_spans in data.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for obj in [span, *span.get("links", [])]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in obj:
                            obj[key] = base64.b64decode(obj[key]).hex()
    return orjson.dumps(data)


_JSON_JUNK = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(*INT64), st.floats(allow_nan=False),
              st.text(max_size=10)),
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=8), c, max_size=3)),
    max_leaves=8)


@st.composite
def json_bodies(draw) -> bytes:
    """OTLP/JSON: a valid encoding of a hostile request, then perhaps a junk value spliced in."""
    data = orjson.loads(to_json(draw(requests())))
    if draw(st.booleans()):
        spans = [s for r in data.get("resourceSpans", []) for sc in r.get("scopeSpans", [])
                 for s in sc.get("spans", [])]
        target = draw(st.sampled_from(spans)) if spans else data
        key = draw(st.sampled_from(["traceId", "spanId", "parentSpanId", "startTimeUnixNano",
                                    "endTimeUnixNano", "attributes", "kind", "status", "name",
                                    "events", "links", "resourceSpans"]))
        target[key] = draw(_JSON_JUNK)
    body = orjson.dumps(data)
    if draw(st.booleans()):  # numbers beyond what JSON parsers agree on
        body = body.replace(b'"startTimeUnixNano":"', b'"startTimeUnixNano":"-', 1)
    return body


@st.composite
def payloads(draw) -> tuple[bytes, str, str | None]:
    """A request body with its Content-Type and Content-Encoding."""
    if draw(st.integers(0, 3)) == 0:
        body, ctype = draw(json_bodies()), "application/json"
    else:
        body = _break_utf8(draw(requests()).SerializeToString())
        ctype = "application/x-protobuf"
    if draw(st.integers(0, 4)) == 0:  # a truncated body
        body = body[:draw(st.integers(0, max(0, len(body) - 1)))]
    encoding = draw(st.sampled_from([None, None, "gzip", "deflate", "zstd", "identity"]))
    if encoding == "gzip":
        body = gzip.compress(body)
    elif encoding == "deflate":
        body = zlib.compress(body)
    elif encoding == "zstd":
        body = zstd.compress(body)
    if encoding and draw(st.integers(0, 5)) == 0:
        body = body[:len(body) // 2]  # a truncated compressed stream
    return body, ctype, encoding


def mutate(body: bytes, rng: random.Random) -> bytes:
    """Return a byte-level mutation of body: flips, cuts, splices, duplicated runs."""
    data = bytearray(body)
    for _ in range(rng.randint(1, 4)):
        choice = rng.randrange(5)
        if not data:
            data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif choice == 0:
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        elif choice == 1:
            data = data[:rng.randrange(len(data))]
        elif choice == 2:
            i = rng.randrange(len(data))
            data[i:i] = data[rng.randrange(len(data)):][:rng.randint(1, 64)]
        elif choice == 3:
            i = rng.randrange(len(data))
            data[i] = rng.choice([0x00, 0x7F, 0x80, 0xFF, 0x0A, 0x12])
        else:
            i = rng.randrange(len(data))
            data[i:i] = bytes([0xFF] * rng.randint(1, 10))  # oversized varints
    return bytes(data)


def check_in_process(body: bytes, ctype: str, encoding: str | None, limits: IngestConfig,
                     tasks: TasksConfig) -> str:
    """Run decode → normalize → Arrow → materialize; return "ok", "partial" or "refused".

    Refusals must be PermanentError (400/413/415); everything decoded must normalize without
    raising into rows the writer can store, and every task must materialize.
    """
    try:
        request = decode_body(body, ctype, encoding, limits)
        check_span_count(request, limits.max_spans_per_request)
    except PermanentError:
        return "refused"
    batch = normalize_request(request, limits, 1_700_000_000 * 10**9)
    assert batch.rejected + len(batch.rows) == count_spans(request)
    for row in batch.rows:
        assert set(row) == set(SPAN_COLUMN_NAMES)
        assert 0 <= row["start_ns"] <= row["end_ns"] <= INT64[1]
        for column in ("attributes", "resource", "events", "links"):
            orjson.loads(row[column])  # valid JSON (no NaN): the API can serve it
    pa.Table.from_pylist(batch.rows, schema=SPAN_ARROW_SCHEMA)  # what the writer appends
    by_trace = defaultdict(list)
    for row in batch.rows:
        by_trace[row["trace_id"]].append(row)
    for trace_id, rows in by_trace.items():
        task = materialize_task(trace_id, rows, tasks, 1_700_000_000 * 10**9, 0)
        assert set(task) == set(TASK_COLUMN_NAMES)
        assert task["span_count"] == len({(r["trace_id"], r["span_id"]) for r in rows})
    return "partial" if batch.rejected else "ok"
