"""Spans in the clickhouseexporter's row format: what the Collector writes to otel_traces.

The exporter stores every attribute value as a string (pcommon.Value.AsString: integers in
decimal, doubles without exponent, booleans as true/false, arrays and maps as JSON), span kind
and status as their proto names, and the scope name both in ScopeName and in the attributes.
agentsla's own receivers can write the same rows, so both feeds mix in one table.
"""

from __future__ import annotations

import base64
import math
from decimal import Decimal
from typing import Any

import orjson
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

_KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
_CODES = ("UNSET", "OK", "ERROR")


def exporter_rows(request: ExportTraceServiceRequest) -> list[dict[str, Any]]:
    """Return one otel_traces row (JSONEachRow keys) per span of an OTLP request."""
    rows = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope
            for span in scope_spans.spans:
                rows.append(_row(span, resource, scope))
    return rows


def _row(span: Any, resource: dict[str, str], scope: Any) -> dict[str, Any]:
    attrs = _attributes(span.attributes)
    if scope.name:
        attrs["otel.scope.name"] = scope.name
    if scope.version:
        attrs["otel.scope.version"] = scope.version
    kind = span.kind if 0 <= span.kind < len(_KINDS) else 0
    code = span.status.code if 0 <= span.status.code < len(_CODES) else 0
    return {
        "Timestamp": _time(span.start_time_unix_nano), "TraceId": span.trace_id.hex(),
        "SpanId": span.span_id.hex(), "ParentSpanId": span.parent_span_id.hex(),
        "TraceState": span.trace_state, "SpanName": span.name,
        "SpanKind": "SPAN_KIND_" + _KINDS[kind], "ServiceName": resource.get("service.name", ""),
        "ResourceAttributes": resource, "ScopeName": scope.name,
        "ScopeVersion": scope.version, "SpanAttributes": attrs,
        "Duration": max(0, span.end_time_unix_nano - span.start_time_unix_nano),
        "StatusCode": "STATUS_CODE_" + _CODES[code], "StatusMessage": span.status.message,
        "Events.Timestamp": [_time(e.time_unix_nano) for e in span.events],
        "Events.Name": [e.name for e in span.events],
        "Events.Attributes": [_attributes(e.attributes) for e in span.events],
        "Links.TraceId": [link.trace_id.hex() for link in span.links],
        "Links.SpanId": [link.span_id.hex() for link in span.links],
        "Links.TraceState": [link.trace_state for link in span.links],
        "Links.Attributes": [_attributes(link.attributes) for link in span.links],
    }


def from_span_row(row: dict[str, Any]) -> dict[str, Any]:
    """Return the otel_traces row of one normalized span row (agentsla's own receivers)."""
    attrs = {k: render(v) for k, v in orjson.loads(row["attributes"] or "{}").items()}
    if row["scope"]:
        attrs["otel.scope.name"] = row["scope"]
    events = orjson.loads(row["events"] or "[]")
    links = orjson.loads(row["links"] or "[]")
    return {
        "Timestamp": _time(row["start_ns"]), "TraceId": row["trace_id"],
        "SpanId": row["span_id"], "ParentSpanId": row["parent_span_id"] or "",
        "SpanName": row["name"], "SpanKind": "SPAN_KIND_" + row["span_kind"].upper(),
        "ServiceName": row["service_name"] or "",
        "ResourceAttributes": {k: render(v) for k, v in
                               orjson.loads(row["resource"] or "{}").items()},
        "ScopeName": row["scope"] or "", "SpanAttributes": attrs,
        "Duration": row["end_ns"] - row["start_ns"],
        "StatusCode": "STATUS_CODE_" + row["status_code"].upper(),
        "StatusMessage": row["status_message"] or "",
        "Events.Timestamp": [_time(e["time_ns"]) for e in events],
        "Events.Name": [e["name"] for e in events],
        "Events.Attributes": [{k: render(v) for k, v in e["attributes"].items()} for e in events],
        "Links.TraceId": [link["trace_id"] for link in links],
        "Links.SpanId": [link["span_id"] for link in links],
        "Links.TraceState": ["" for _ in links],
        "Links.Attributes": [{k: render(v) for k, v in link["attributes"].items()}
                             for link in links],
    }


def _time(unix_ns: int) -> str:
    """Render unix nanoseconds as DateTime64(9) text (seconds.nanoseconds), exactly."""
    return f"{unix_ns // 10**9}.{unix_ns % 10**9:09d}"


def _attributes(kvs: Any) -> dict[str, str]:
    return {kv.key: as_string(kv.value) for kv in kvs}


def as_string(value: Any) -> str:
    """Render an OTLP AnyValue as the exporter does (pcommon.Value.AsString)."""
    return render(_plain(value))


def render(plain: Any) -> str:
    """Render a plain attribute value (str, bool, int, float, list, dict) as AsString does."""
    if isinstance(plain, str):
        return plain
    if plain is None:
        return ""
    if isinstance(plain, bool):
        return "true" if plain else "false"
    if isinstance(plain, float):
        if math.isnan(plain) or math.isinf(plain):
            return "NaN" if math.isnan(plain) else ("+Inf" if plain > 0 else "-Inf")
        # Go's strconv.FormatFloat(v, 'f', -1, 64): shortest digits, never an exponent
        text = format(Decimal(repr(plain)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(plain, (list, dict)):
        return orjson.dumps(plain).decode()
    return str(plain)


def _plain(value: Any) -> Any:
    which = value.WhichOneof("value")
    if which == "array_value":
        return [_plain(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _plain(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, which) if which else None
