"""Spans in the clickhouseexporter's row format: what the Collector writes to otel_traces.

The exporter stores every attribute value as a string (pcommon.Value.AsString: integers in
decimal, doubles without exponent, booleans as true/false, arrays and maps as JSON), span kind
and status as their proto names, and the scope name both in ScopeName and in the attributes.
agentsla's own receivers write the same rows (from their normalized span rows), so both feeds
mix in one table. In the exporter's JSON variant attributes keep their own types (AsRaw).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import orjson

from agentsla.collector.store.clickhouse.schema import JSON, MAP


def from_span_row(row: dict[str, Any], variant: str = MAP) -> dict[str, Any]:
    """Return the otel_traces row of one normalized span row (agentsla's own receivers), in
    the table's variant: Map (values as AsString text) or JSON (values as they are, AsRaw)."""
    value = render if variant == MAP else _raw
    span_attrs = orjson.loads(row["attributes"] or "{}")
    resource = orjson.loads(row["resource"] or "{}")
    attrs = {k: value(v) for k, v in span_attrs.items()}
    if row["scope"] and variant == MAP:  # the Map variant copies the scope name in
        attrs["otel.scope.name"] = row["scope"]
    events = orjson.loads(row["events"] or "[]")
    links = orjson.loads(row["links"] or "[]")
    out = {
        "Timestamp": _time(row["start_ns"]), "TraceId": row["trace_id"],
        "SpanId": row["span_id"], "ParentSpanId": row["parent_span_id"] or "",
        "SpanName": row["name"], "SpanKind": "SPAN_KIND_" + row["span_kind"].upper(),
        "ServiceName": row["service_name"] or "",
        "ResourceAttributes": {k: value(v) for k, v in resource.items()},
        "ScopeName": row["scope"] or "", "SpanAttributes": attrs,
        "Duration": row["end_ns"] - row["start_ns"],
        "StatusCode": "STATUS_CODE_" + row["status_code"].upper(),
        "StatusMessage": row["status_message"] or "",
        "Events.Timestamp": [_time(e["time_ns"]) for e in events],
        "Events.Name": [e["name"] for e in events],
        "Events.Attributes": [{k: value(v) for k, v in e["attributes"].items()} for e in events],
        "Links.TraceId": [link["trace_id"] for link in links],
        "Links.SpanId": [link["span_id"] for link in links],
        "Links.TraceState": ["" for _ in links],
        "Links.Attributes": [{k: value(v) for k, v in link["attributes"].items()}
                             for link in links],
    }
    if variant == JSON:  # the key columns of the JSON layout: sorted flattened paths
        out["ResourceAttributesKeys"] = _paths(resource)
        out["SpanAttributesKeys"] = _paths(span_attrs)
    return out


def _raw(plain: Any) -> Any:
    return plain


def _paths(attrs: dict[str, Any], prefix: str = "") -> list[str]:
    """Return an attribute map's leaf paths, nested maps joined by dots, sorted, unique."""
    found: set[str] = set()
    for key, val in attrs.items():
        path = f"{prefix}.{key}" if prefix else key
        found.update(_paths(val, path) if isinstance(val, dict) else (path,))
    return sorted(found)


def _time(unix_ns: int) -> str:
    """Render unix nanoseconds as DateTime64(9) text (seconds.nanoseconds), exactly."""
    return f"{unix_ns // 10**9}.{unix_ns % 10**9:09d}"


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
