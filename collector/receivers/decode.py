"""Decode OTLP/HTTP trace request bodies (protobuf or JSON, optionally compressed) into protos.

Shared by the HTTP receiver (which passes the body, Content-Type and Content-Encoding) and by
anything else that holds raw OTLP bytes. Every failure is classified here: a body over the
limits raises PayloadTooLarge, an unknown media type or encoding UnsupportedMediaType, anything
undecodable PermanentError; all carry a message meant for the client.

OTLP/JSON follows https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding: trace and
span ids are hex strings (not base64, unlike the generic protobuf JSON mapping), 64-bit integers
may be strings or numbers, enums may be integers or names, unknown fields are ignored, and both
lowerCamelCase and original snake_case field names are accepted.
"""

from __future__ import annotations

import base64
import sys
import zlib
from typing import Any

import orjson
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentsla.collector.processing.normalize import mark_undecodable
from agentsla.config import IngestConfig
from agentsla.errors import PayloadTooLarge, PermanentError, UnsupportedMediaType

if sys.version_info >= (3, 14):
    from compression import zstd
else:  # the same module, backported (PEP 784)
    from backports import zstd

PROTOBUF_TYPES = ("application/x-protobuf", "application/protobuf")
JSON_TYPES = ("application/json",)
ENCODINGS = ("gzip", "deflate", "zstd", "identity")

# zlib wbits: gzip container, zlib container, raw deflate stream.
_GZIP_WBITS = 16 + zlib.MAX_WBITS
_ZLIB_WBITS = zlib.MAX_WBITS
_RAW_WBITS = -zlib.MAX_WBITS

# JSON keys holding ids, both spellings OTLP/JSON receivers must accept.
_ID_KEYS = ("traceId", "trace_id", "spanId", "span_id", "parentSpanId", "parent_span_id")
# An id that is not valid hex becomes this one-byte value: the request still decodes and
# normalization rejects just that span (partial success), and a bad parent id is never
# mistaken for "no parent" (an empty id would make the span a root).
_BAD_ID = base64.b64encode(b"\x00").decode()


def decode_body(body: bytes, content_type: str, content_encoding: str | None,
                limits: IngestConfig) -> ExportTraceServiceRequest:
    """Decode one OTLP/HTTP trace request body, enforcing the size limit (span count: receiver)."""
    media_type = _media_type(content_type)
    if len(body) > limits.max_body_bytes:
        raise PayloadTooLarge(f"request body of {len(body)} bytes is over the limit of "
                              f"{limits.max_body_bytes} bytes")
    raw = decompress(body, content_encoding, limits.max_body_bytes)
    if media_type in JSON_TYPES:
        request = parse_json(raw)
    else:
        request = parse_protobuf(raw)
    return request


def _media_type(content_type: str | None) -> str:
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    if media_type not in PROTOBUF_TYPES and media_type not in JSON_TYPES:
        raise UnsupportedMediaType(
            f"unsupported Content-Type {content_type!r}: OTLP/HTTP accepts "
            f"{', '.join(PROTOBUF_TYPES + JSON_TYPES)}")
    return media_type


def decompress(body: bytes, content_encoding: str | None, max_bytes: int) -> bytes:
    """Undo a Content-Encoding, never producing (or allocating much) more than max_bytes."""
    encoding = (content_encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding in ("gzip", "x-gzip"):
        return _inflate(body, _GZIP_WBITS, max_bytes, "gzip")
    if encoding == "deflate":
        # RFC 9110 says zlib-wrapped; some clients send a raw deflate stream: accept both.
        wbits = _ZLIB_WBITS if _has_zlib_header(body) else _RAW_WBITS
        return _inflate(body, wbits, max_bytes, "deflate")
    if encoding == "zstd":  # the Collector's `compression: zstd`, Java's zstd compressor
        return _unzstd(body, max_bytes)
    raise UnsupportedMediaType(f"unsupported Content-Encoding {content_encoding!r}: "
                               f"accepted are {', '.join(ENCODINGS)}")


def _unzstd(body: bytes, max_bytes: int) -> bytes:
    """Decompress every zstd frame of body in bounded steps, as _inflate does gzip members.

    A frame may ask for a window (memory) up to the next power of two of max_bytes: no body
    within the limit needs more, and a declared window is allocated whatever the content."""
    window_log = min(max(max_bytes - 1, 1).bit_length(), 31)
    options = {zstd.DecompressionParameter.window_log_max: max(window_log, 10)}
    chunks: list[bytes] = []
    total = 0
    data = body
    while data:
        stream = zstd.ZstdDecompressor(options=options)
        try:
            _check_frame_size(data, max_bytes - total)
            chunk = stream.decompress(data, max_bytes - total + 1)
            while True:
                total += len(chunk)
                if total > max_bytes:
                    raise PayloadTooLarge(f"zstd-decompressed body is over the limit of "
                                          f"{max_bytes} bytes")
                chunks.append(chunk)
                if stream.eof or stream.needs_input:
                    break
                chunk = stream.decompress(b"", max_bytes - total + 1)
        except zstd.ZstdError as exc:
            if "too much memory" in str(exc):  # its window: libzstd's words for it
                raise PayloadTooLarge(f"a zstd frame of the body asks for a window over the "
                                      f"{max_bytes}-byte limit (max_body_bytes)") from None
            raise PermanentError(f"cannot decompress zstd body: {exc}") from None
        if not stream.eof:
            raise PermanentError("cannot decompress zstd body: data is truncated")
        data = stream.unused_data
    return b"".join(chunks)


def _check_frame_size(frame: bytes, room: int) -> None:
    """Refuse a frame whose header states a content size over the room left, before any
    decompression (a frame streamed without one is bounded while decompressing)."""
    try:
        size = zstd.get_frame_info(frame).decompressed_size
    except zstd.ZstdError:
        return  # not a frame header: decompress() says what is wrong with it
    if size is not None and size > room:
        raise PayloadTooLarge(f"zstd-decompressed body is over the limit of {room} bytes "
                              f"(a frame states {size})")


def _has_zlib_header(body: bytes) -> bool:
    return len(body) >= 2 and body[0] & 0x0F == 8 and (body[0] << 8 | body[1]) % 31 == 0


def _inflate(body: bytes, wbits: int, max_bytes: int, name: str) -> bytes:
    """Stream-decompress body in bounded steps; concatenated gzip members are all read."""
    chunks: list[bytes] = []
    total = 0
    data = body
    while data:
        stream = zlib.decompressobj(wbits)
        try:
            while not stream.eof:
                # Ask for at most one byte over the limit: enough to know it is exceeded.
                chunk = stream.decompress(data, max_bytes - total + 1)
                total += len(chunk)
                if total > max_bytes:
                    raise PayloadTooLarge(f"{name}-decompressed body is over the limit of "
                                          f"{max_bytes} bytes")
                chunks.append(chunk)
                data = stream.unconsumed_tail
                if not chunk and not data:
                    raise PermanentError(f"cannot decompress {name} body: data is truncated")
        except zlib.error as exc:
            raise PermanentError(f"cannot decompress {name} body: {exc}") from None
        data = stream.unused_data
        if wbits != _GZIP_WBITS or not data.strip(b"\x00"):
            break  # trailing zero padding after the last gzip member is tolerated, as gzip does
    return b"".join(chunks)


def parse_protobuf(raw: bytes) -> ExportTraceServiceRequest:
    """Parse a binary protobuf ExportTraceServiceRequest.

    When the request is nested deeper than the parser allows (upb's limit of 100 message
    levels: attribute values about 45 arrays or maps deep), it is parsed again span by span: a
    span too deep on its own becomes a placeholder that normalization rejects alone (partial
    success), and the others are kept. Any other undecodable part stays a 400 for the request.
    """
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(raw)
    except (DecodeError, RecursionError, ValueError) as exc:
        error = PermanentError(f"cannot decode OTLP protobuf: {_short(exc)}")
        if not _too_deep(exc):
            raise error from None
        return _parse_span_by_span(raw, error)
    return request


def _parse_span_by_span(raw: bytes, error: PermanentError) -> ExportTraceServiceRequest:
    """Rebuild the request from separately parsed spans; raise `error` when that changes nothing."""
    try:
        shallow = _SHALLOW_REQUEST.FromString(raw)
    except (DecodeError, RecursionError, ValueError):
        raise error from None
    request = ExportTraceServiceRequest()
    undecodable = 0
    for shallow_resource in shallow.resource_spans:
        resource_spans = request.resource_spans.add(schema_url=shallow_resource.schema_url)
        resource_problem = _parse_into(resource_spans.resource, shallow_resource.resource)
        for shallow_scope in shallow_resource.scope_spans:
            scope_spans = resource_spans.scope_spans.add(schema_url=shallow_scope.schema_url)
            scope_problem = _parse_into(scope_spans.scope, shallow_scope.scope)
            for raw_span in shallow_scope.spans:
                span = scope_spans.spans.add()
                problem = (resource_problem and f"its resource: {resource_problem}" or
                           scope_problem and f"its scope: {scope_problem}" or
                           _parse_into(span, raw_span))
                if problem is _NOT_DEPTH:
                    raise error
                if problem:
                    mark_undecodable(span, f"cannot decode span: {problem}")
                    undecodable += 1
    if not undecodable:
        raise error  # every part parses alone: what failed was the whole, keep the 400
    return request


def _parse_into(message: Any, raw: bytes) -> str | None:
    """Parse raw into message; None when it parses, _DEPTH_HINT when it is too deep, else
    _NOT_DEPTH (the request is refused as a whole, as before)."""
    try:
        message.ParseFromString(raw)
    except (DecodeError, RecursionError, ValueError) as exc:
        message.Clear()
        return _DEPTH_HINT if _too_deep(exc) else _NOT_DEPTH
    return None


def _too_deep(exc: Exception) -> bool:
    """Whether a parse failed on nesting depth (upb: "MaxDepth"; json_format: "too deep")."""
    text = str(exc).lower()
    return isinstance(exc, RecursionError) or "depth" in text or "too deep" in text


def _shallow_request_class() -> type:
    """ExportTraceServiceRequest with every Resource, InstrumentationScope and Span left as
    bytes (the same wire format): parsing it checks the framing and splits the spans."""
    file = descriptor_pb2.FileDescriptorProto(name="agentsla/shallow_trace.proto",
                                              package="agentsla.shallow", syntax="proto3")
    repeated, optional = (descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
                          descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    kinds = descriptor_pb2.FieldDescriptorProto
    layout = {"Request": [("resource_spans", 1, repeated, ".agentsla.shallow.ResourceSpans")],
              "ResourceSpans": [("resource", 1, optional, kinds.TYPE_BYTES),
                                ("scope_spans", 2, repeated, ".agentsla.shallow.ScopeSpans"),
                                ("schema_url", 3, optional, kinds.TYPE_STRING)],
              "ScopeSpans": [("scope", 1, optional, kinds.TYPE_BYTES),
                             ("spans", 2, repeated, kinds.TYPE_BYTES),
                             ("schema_url", 3, optional, kinds.TYPE_STRING)]}
    for name, fields in layout.items():
        message = file.message_type.add(name=name)
        for field_name, number, label, kind in fields:
            field = message.field.add(name=field_name, number=number, label=label)
            if isinstance(kind, str):
                field.type, field.type_name = kinds.TYPE_MESSAGE, kind
            else:
                field.type = kind
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("agentsla.shallow.Request"))


_SHALLOW_REQUEST = _shallow_request_class()
_NOT_DEPTH = "not a depth error"
_JSON_ERRORS = (json_format.ParseError, RecursionError, ValueError, TypeError)
_DEPTH_HINT = ("attribute values nested deeper than the protobuf decoder's limit of 100 "
               "message levels (about 45 levels of arrays and maps)")


def parse_json(raw: bytes) -> ExportTraceServiceRequest:
    """Parse an OTLP/JSON ExportTraceServiceRequest (hex ids, lenient integers and enums)."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise PermanentError(f"cannot decode OTLP JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PermanentError(f"cannot decode OTLP JSON: the body must be a JSON object, "
                             f"not {_json_type(data)}")
    _convert_ids(data)
    request = ExportTraceServiceRequest()
    try:
        json_format.ParseDict(data, request, ignore_unknown_fields=True)
    except _JSON_ERRORS as exc:
        error = PermanentError(f"cannot decode OTLP JSON: {_short(exc)}")
        if not _too_deep(exc):
            raise error from None
        return _parse_json_span_by_span(data, error)  # as for protobuf: too deep, rejected alone
    return request


def _parse_json_span_by_span(data: dict[str, Any],
                             error: PermanentError) -> ExportTraceServiceRequest:
    """Parse the request without its spans, then each span alone (see parse_protobuf)."""
    span_lists = [[scope_spans.pop(key) for key in ("spans",) if key in scope_spans]
                  for resource_spans in _items(data, "resourceSpans", "resource_spans")
                  for scope_spans in _items(resource_spans, "scopeSpans", "scope_spans")]
    request = ExportTraceServiceRequest()
    try:
        json_format.ParseDict(data, request, ignore_unknown_fields=True)
    except _JSON_ERRORS:
        raise error from None
    scopes = [scope for resource in request.resource_spans for scope in resource.scope_spans]
    undecodable = 0
    for scope, spans in zip(scopes, span_lists):
        for span_data in spans[0] if spans and isinstance(spans[0], list) else ():
            span = scope.spans.add()
            try:
                json_format.ParseDict(span_data, span, ignore_unknown_fields=True)
            except _JSON_ERRORS as exc:
                if not _too_deep(exc):
                    raise error from None
                mark_undecodable(span, f"cannot decode span: {_DEPTH_HINT}")
                undecodable += 1
    if not undecodable:
        raise error
    return request


def _convert_ids(data: dict[str, Any]) -> None:
    """Rewrite hex ids in place into the base64 form the protobuf JSON mapping expects.

    Only well-typed containers are walked; anything else is left for ParseDict to report.
    """
    for resource_spans in _items(data, "resourceSpans", "resource_spans"):
        _rename_legacy(resource_spans)
        for scope_spans in _items(resource_spans, "scopeSpans", "scope_spans"):
            for span in _items(scope_spans, "spans", "spans"):
                _convert_span_ids(span)
                for link in _items(span, "links", "links"):
                    _convert_span_ids(link)


def _rename_legacy(resource_spans: dict[str, Any]) -> None:
    # OTLP < 0.19 exporters send instrumentationLibrarySpans; without this their spans would be
    # silently dropped as unknown fields.
    legacy = resource_spans.get("instrumentationLibrarySpans")
    if legacy is None or "scopeSpans" in resource_spans or "scope_spans" in resource_spans:
        return
    resource_spans["scopeSpans"] = legacy
    for scope_spans in legacy if isinstance(legacy, list) else ():
        if isinstance(scope_spans, dict) and "instrumentationLibrary" in scope_spans:
            scope_spans["scope"] = scope_spans.pop("instrumentationLibrary")


def _items(obj: Any, camel: str, snake: str) -> list[dict[str, Any]]:
    if not isinstance(obj, dict):
        return []
    value = obj.get(camel, obj.get(snake))
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def _convert_span_ids(obj: dict[str, Any]) -> None:
    for key in _ID_KEYS:
        value = obj.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise PermanentError(f"cannot decode OTLP JSON: {key} must be a hex string, "
                                 f"not {_json_type(value)}")
        obj[key] = _hex_to_base64(value)


def _hex_to_base64(value: str) -> str:
    try:
        return base64.b64encode(bytes.fromhex(value)).decode()
    except ValueError:
        return _BAD_ID


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


def _short(exc: Exception, limit: int = 300) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "..."


def count_spans(request: ExportTraceServiceRequest) -> int:
    """Count the spans in a request."""
    return sum(len(scope_spans.spans) for resource_spans in request.resource_spans
               for scope_spans in resource_spans.scope_spans)


def check_span_count(request: ExportTraceServiceRequest, max_spans: int) -> None:
    """Raise PayloadTooLarge if the request carries more than max_spans spans."""
    count = count_spans(request)
    if count > max_spans:
        raise PayloadTooLarge(f"request carries {count} spans, over the limit of {max_spans} "
                              f"per request")
