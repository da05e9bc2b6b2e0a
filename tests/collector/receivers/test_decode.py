"""Tests for collector/receivers/decode.py: media types, encodings, limits, protobuf and OTLP/JSON."""

from __future__ import annotations

import dataclasses
import gzip
import json
import time
import zlib
from pathlib import Path

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from agentsla.collector.receivers.decode import check_span_count, decode_body, zstd
from agentsla.collector.processing.normalize import normalize_request
from agentsla.config import load_config
from agentsla.errors import PayloadTooLarge, PermanentError, UnsupportedMediaType

FIXTURES = Path(__file__).parents[2] / "data" / "otlp"
LIMITS = load_config().ingest
JSON = "application/json"
PROTO = "application/x-protobuf"
TRACE_HEX = "5b8efff798038103d269b633813fc60c"
SPAN_HEX = "eee19b7ec3c1b174"


def _proto_request(n_spans: int = 1, name: str = "op") -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    scope_spans = request.resource_spans.add().scope_spans.add()
    for i in range(n_spans):
        span = scope_spans.spans.add(name=name, trace_id=bytes.fromhex(TRACE_HEX),
                                     span_id=(i + 1).to_bytes(8, "big"))
        span.start_time_unix_nano = 1
    return request


def _json_body(*spans: dict) -> bytes:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}).encode()


def _spans(request: ExportTraceServiceRequest) -> list[Span]:
    return [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]


@pytest.mark.parametrize("fixture", ["trace.json", "trace-numeric-nanos.json"])
def test_fixtures_decode_and_normalize_unchanged(fixture):
    body = (FIXTURES / fixture).read_bytes()
    request = decode_body(body, JSON, None, LIMITS)
    batch = normalize_request(request, LIMITS, received_ns=7)
    assert batch.rejected == 0 and len(batch.rows) == 1
    row = batch.rows[0]
    assert row["trace_id"] == TRACE_HEX and row["span_id"] == SPAN_HEX
    assert row["parent_span_id"] == "eee19b7ec3c1b173"
    assert (row["start_ns"], row["end_ns"]) == (1544712660000000000, 1544712661000000000)
    assert row["span_kind"] == "server" and row["service_name"] == "my.service"
    assert row["scope"] == "my.library" and row["name"] == "I'm a server span"
    assert json.loads(row["attributes"]) == {"my.span.attr": "some value"}


@pytest.mark.parametrize("content_type, body_kind", [
    ("application/json", "json"),                    # the OTLP/JSON type
    ("application/json; charset=utf-8", "json"),     # parameters are ignored
    ("Application/JSON", "json"),                    # media types are case-insensitive
    ("application/x-protobuf", "proto"),             # the OTLP/protobuf type
    ("application/protobuf", "proto"),               # the registered IANA spelling
])
def test_accepted_media_types(content_type, body_kind):
    body = (_json_body({"traceId": TRACE_HEX, "spanId": SPAN_HEX}) if body_kind == "json"
            else _proto_request().SerializeToString())
    assert len(_spans(decode_body(body, content_type, None, LIMITS))) == 1


@pytest.mark.parametrize("content_type", [
    "text/plain",          # not OTLP
    "",                    # missing header
    "application/grpc",    # gRPC framing belongs on the gRPC port
    "application/xml",
])
def test_unsupported_media_type_names_the_accepted_ones(content_type):
    with pytest.raises(UnsupportedMediaType) as info:
        decode_body(b"{}", content_type, None, LIMITS)
    assert "application/x-protobuf" in info.value.message
    assert "application/json" in info.value.message


def test_json_hex_ids_any_case_decode_to_the_same_bytes():
    lower = {"traceId": TRACE_HEX, "spanId": SPAN_HEX, "parentSpanId": "00000000000000aa"}
    upper = {k: v.upper() for k, v in lower.items()}
    for span in _spans(decode_body(_json_body(lower, upper), JSON, None, LIMITS)):
        assert span.trace_id == bytes.fromhex(TRACE_HEX)
        assert span.span_id == bytes.fromhex(SPAN_HEX)
        assert span.parent_span_id == bytes.fromhex("00000000000000aa")


@pytest.mark.parametrize("span_json, field, expected", [
    # int64/uint64 as a JSON string (the canonical proto3 JSON form)
    ({"startTimeUnixNano": "1544712660000000001"}, "start_time_unix_nano", 1544712660000000001),
    # ... and as a JSON number
    ({"startTimeUnixNano": 1544712660000000001}, "start_time_unix_nano", 1544712660000000001),
    # enum as an integer
    ({"kind": 3}, "kind", 3),
    # enum as its name
    ({"kind": "SPAN_KIND_PRODUCER"}, "kind", 4),
    # original snake_case field names are accepted too
    ({"end_time_unix_nano": "42"}, "end_time_unix_nano", 42),
    # unknown fields are ignored
    ({"name": "x", "someFutureField": {"a": 1}, "kind": 1}, "kind", 1),
    # an enum value from a newer proto is kept as its number
    ({"kind": 99}, "kind", 99),
    # an unknown enum name is ignored like an unknown field (left unspecified)
    ({"kind": "SPAN_KIND_NOPE"}, "kind", 0),
])
def test_json_scalars(span_json, field, expected):
    span_json = {"traceId": TRACE_HEX, "spanId": SPAN_HEX, **span_json}
    (span,) = _spans(decode_body(_json_body(span_json), JSON, None, LIMITS))
    assert getattr(span, field) == expected


def test_json_status_code_as_int_and_bytes_attribute_as_base64():
    body = _json_body({"traceId": TRACE_HEX, "spanId": SPAN_HEX, "status": {"code": 2},
                       "attributes": [{"key": "b", "value": {"bytesValue": "AAEC"}}]})
    (span,) = _spans(decode_body(body, JSON, None, LIMITS))
    assert span.status.code == 2
    assert span.attributes[0].value.bytes_value == b"\x00\x01\x02"


def test_json_bad_ids_reject_only_their_spans():
    body = _json_body(
        {"traceId": TRACE_HEX, "spanId": SPAN_HEX},                      # valid: kept
        {"traceId": TRACE_HEX[:-1], "spanId": SPAN_HEX},                 # odd-length trace id
        {"traceId": "zz" * 16, "spanId": SPAN_HEX},                      # not hex
        {"traceId": TRACE_HEX, "spanId": SPAN_HEX, "parentSpanId": "xyz"},  # bad parent
        {"traceId": TRACE_HEX, "spanId": SPAN_HEX,                       # bad link id only:
         "links": [{"traceId": "nothex", "spanId": SPAN_HEX}]},          # the span is kept
    )
    batch = normalize_request(decode_body(body, JSON, None, LIMITS), LIMITS, 0)
    assert (len(batch.rows), batch.rejected) == (2, 3)
    assert len(batch.errors) == 2  # distinct messages: trace id, parent span id


def test_json_legacy_instrumentation_library_spans_are_read():
    body = json.dumps({"resourceSpans": [{"instrumentationLibrarySpans": [{
        "instrumentationLibrary": {"name": "old.lib"},
        "spans": [{"traceId": TRACE_HEX, "spanId": SPAN_HEX}]}]}]}).encode()
    request = decode_body(body, JSON, None, LIMITS)
    assert request.resource_spans[0].scope_spans[0].scope.name == "old.lib"
    assert len(_spans(request)) == 1


@pytest.mark.parametrize("body, fragment", [
    (b"not json", "cannot decode OTLP JSON"),                              # not JSON at all
    (b"[1, 2]", "must be a JSON object"),                                  # wrong top level
    (b'{"resourceSpans": 5}', "resourceSpans"),                            # number for a list
    (b'{"resourceSpans": [{"scopeSpans": [{"spans": 5}]}]}', "spans"),     # number for a list
    (_json_body({"name": 5}), "name"),                                     # number for a string
    (_json_body({"traceId": 5}), "traceId must be a hex string"),          # number for an id
    (_json_body({"startTimeUnixNano": "soon"}), "startTimeUnixNano"),      # not an integer
    (_json_body({"startTimeUnixNano": 1.5}), "startTimeUnixNano"),         # fraction
    (b'{"resourceSpans": [\xff]}', "cannot decode OTLP JSON"),             # invalid UTF-8
])
def test_json_wrong_types_are_permanent_errors(body, fragment):
    with pytest.raises(PermanentError) as info:
        decode_body(body, JSON, None, LIMITS)
    assert fragment in info.value.message
    assert not isinstance(info.value, PayloadTooLarge)


def test_protobuf_round_trip():
    request = _proto_request(3, name="héllo")
    decoded = decode_body(request.SerializeToString(), PROTO, None, LIMITS)
    assert decoded == request


@pytest.mark.parametrize("body", [
    _proto_request().SerializeToString()[:-3],                             # truncated
    _proto_request(name="ab").SerializeToString().replace(b"ab", b"\xff\xfe"),  # bad UTF-8
    b"\xff\xff\xff\xff\xff\xff",                                           # garbage
])
def test_undecodable_protobuf_is_a_permanent_error(body):
    with pytest.raises(PermanentError, match="cannot decode OTLP protobuf"):
        decode_body(body, PROTO, None, LIMITS)


def _deflate(data: bytes, wbits: int) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize("encoding, compress", [
    ("gzip", gzip.compress),                                       # the one OTLP requires
    ("GZIP", gzip.compress),                                       # case-insensitive
    ("x-gzip", gzip.compress),                                     # legacy alias
    ("gzip", lambda b: gzip.compress(b[:10]) + gzip.compress(b[10:])),  # two gzip members
    ("deflate", lambda b: _deflate(b, zlib.MAX_WBITS)),            # zlib-wrapped (RFC 9110)
    ("deflate", lambda b: _deflate(b, -zlib.MAX_WBITS)),           # raw deflate
    ("zstd", zstd.compress),                                       # the Collector's zstd
    ("zstd", lambda b: zstd.compress(b[:10]) + zstd.compress(b[10:])),  # two zstd frames
    ("identity", lambda b: b),                                     # explicit no-op
    (None, lambda b: b),                                           # header absent
])
def test_content_encodings(encoding, compress):
    request = _proto_request(2)
    body = compress(request.SerializeToString())
    assert decode_body(body, PROTO, encoding, LIMITS) == request


@pytest.mark.parametrize("body, encoding, error", [
    (b"\x1f\x8b garbage", "gzip", PermanentError),                         # corrupt gzip
    (gzip.compress(b"x" * 1000)[:-12], "gzip", PermanentError),            # truncated gzip
    (b"\x28\xb5\x2f\xfd garbage", "zstd", PermanentError),                   # corrupt zstd
    (zstd.compress(bytes(range(256)) * 40)[:-12], "zstd", PermanentError),  # truncated zstd
    (b"abc", "br", UnsupportedMediaType),                                  # unsupported encoding
])
def test_bad_encodings(body, encoding, error):
    with pytest.raises(error) as info:
        decode_body(body, PROTO, encoding, LIMITS)
    assert type(info.value) is error


def _gzip_bomb(gib: int = 1) -> bytes:
    """gzip of `gib` GiB of zeros, built without ever holding the zeros or the stream twice.

    After a full flush the compressor's output for the same 1 MiB block is identical, so the
    block is compressed once and repeated. The trailer's CRC is not computed: a decoder that
    respects the limit stops long before reaching it.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    head = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    return head + block * (1024 * gib - 1) + compressor.flush()


def test_gzip_bomb_is_refused_fast():
    bomb = _gzip_bomb()
    assert len(bomb) < 2 * 1024**2
    started = time.perf_counter()
    with pytest.raises(PayloadTooLarge, match="over the limit"):
        decode_body(bomb, PROTO, "gzip", LIMITS)
    assert time.perf_counter() - started < 5  # stops at max_body_bytes, not at 1 GiB


def _zstd_bomb(gib: int = 1) -> bytes:
    """zstd of `gib` GiB of zeros, fed to the compressor a MiB at a time (one frame)."""
    compressor = zstd.ZstdCompressor()
    zeros = bytes(1 << 20)
    return b"".join(compressor.compress(zeros) for _ in range(1024 * gib)) + \
        compressor.flush()


def test_zstd_bomb_is_refused_at_the_limit():
    bomb = _zstd_bomb()
    assert len(bomb) < 2 * 1024**2
    with pytest.raises(PayloadTooLarge, match="zstd-decompressed body is over the limit"):
        decode_body(bomb, PROTO, "zstd", LIMITS)


def test_a_zstd_frame_asking_for_more_memory_than_the_limit_needs_is_refused():
    """A streamed frame (no content size) declaring a 16 MiB window, holding 64 KiB: with a
    1 MiB limit, no window over 1 MiB is allocated for it."""
    small = dataclasses.replace(LIMITS, max_body_bytes=1 << 20)
    wide = zstd.ZstdCompressor(options={zstd.CompressionParameter.window_log: 24})
    body = wide.compress(bytes(1 << 16)) + wide.flush()
    assert len(zstd.decompress(body)) == 1 << 16
    with pytest.raises(PayloadTooLarge, match="window over the 1048576-byte limit"):
        decode_body(body, PROTO, "zstd", small)


def test_a_zstd_frame_stating_a_size_over_the_limit_is_refused_unread():
    small = dataclasses.replace(LIMITS, max_body_bytes=1 << 20)
    body = zstd.compress(bytes(2 << 20))  # one shot: the frame states its size
    with pytest.raises(PayloadTooLarge, match="a frame states 2097152"):
        decode_body(body, PROTO, "zstd", small)


def test_compressed_body_over_limit_before_decompression():
    small = dataclasses.replace(LIMITS, max_body_bytes=100)
    with pytest.raises(PayloadTooLarge, match="request body of 101 bytes"):
        decode_body(b"x" * 101, PROTO, None, small)


def test_span_count_limit_names_the_count():
    with pytest.raises(PayloadTooLarge, match="3 spans"):
        check_span_count(_proto_request(3), 2)
    check_span_count(_proto_request(2), 2)  # at the limit is fine


def _nested(depth: int) -> AnyValue:
    """An AnyValue that is `depth` arrays deep around one string."""
    value = AnyValue(string_value="bottom")
    for _ in range(depth):
        outer = AnyValue()
        outer.array_value.values.add().CopyFrom(value)
        value = outer
    return value


def _with_deep_span(depth: int, where: str = "span") -> ExportTraceServiceRequest:
    """Three spans; the middle one (or its resource, or its scope) carries a `depth`-deep value."""
    request = _proto_request(3)
    resource_spans = request.resource_spans[0]
    target = {"span": resource_spans.scope_spans[0].spans[1],
              "resource": resource_spans.resource,
              "scope": resource_spans.scope_spans[0].scope}[where]
    target.attributes.add(key="deep").value.CopyFrom(_nested(depth))
    other = request.resource_spans.add().scope_spans.add().spans.add(
        name="elsewhere", trace_id=bytes.fromhex(TRACE_HEX), span_id=(9).to_bytes(8, "big"))
    other.start_time_unix_nano = 1
    return request


def _encode(request: ExportTraceServiceRequest, media_type: str) -> bytes:
    if media_type == PROTO:
        return request.SerializeToString()
    data = json_format.MessageToDict(request)
    for resource_spans, proto in zip(data["resourceSpans"], request.resource_spans):
        for span, span_proto in zip(resource_spans["scopeSpans"][0]["spans"],
                                    proto.scope_spans[0].spans):
            span.update(traceId=span_proto.trace_id.hex(), spanId=span_proto.span_id.hex())
    return json.dumps(data).encode()  # OTLP/JSON: hex ids


@pytest.mark.parametrize("media_type", [PROTO, JSON])
def test_a_span_nested_too_deep_is_rejected_alone(media_type):
    # 60 arrays: past the protobuf parser's 100 message levels, for the request and the span
    request = decode_body(_encode(_with_deep_span(60), media_type), media_type, None, LIMITS)
    batch = normalize_request(request, LIMITS, received_ns=7)
    assert sorted(row["span_id"] for row in batch.rows) == [
        f"{1:016x}", f"{3:016x}", f"{9:016x}"]
    assert batch.rejected == 1
    assert batch.errors == ["cannot decode span: attribute values nested deeper than the "
                            "protobuf decoder's limit of 100 message levels (about 45 levels "
                            "of arrays and maps)"]


def test_nesting_the_parser_accepts_is_kept_and_cut_at_max_value_depth():
    request = decode_body(_with_deep_span(40).SerializeToString(), PROTO, None, LIMITS)
    batch = normalize_request(request, LIMITS, received_ns=7)
    assert batch.rejected == 0 and len(batch.rows) == 4
    value = json.loads(batch.rows[1]["attributes"])["deep"]
    for _ in range(LIMITS.max_value_depth):  # 32 levels kept, the rest replaced
        (value,) = value
    assert value == "...[truncated]"


@pytest.mark.parametrize("where", ["resource", "scope"])
def test_a_resource_or_scope_nested_too_deep_rejects_its_spans_only(where):
    request = decode_body(_with_deep_span(60, where).SerializeToString(), PROTO, None, LIMITS)
    batch = normalize_request(request, LIMITS, received_ns=7)
    assert [row["name"] for row in batch.rows] == ["elsewhere"]
    assert batch.rejected == 3 and batch.errors[0].startswith(f"cannot decode span: its {where}")


def test_broken_framing_is_still_a_400_for_the_request():
    body = _with_deep_span(60).SerializeToString()
    with pytest.raises(PermanentError, match="cannot decode OTLP protobuf"):
        decode_body(body[:-5], PROTO, None, LIMITS)
