"""Convert OTLP AnyValue attributes into JSON-able Python values, within the ingest limits.

Value mapping: string, bool, int and double stay themselves; an array becomes a list, a kvlist a
dict, bytes a base64 string, an empty AnyValue None. Non-finite doubles (NaN, ±Infinity) are not
valid JSON, so they become the strings "NaN", "Infinity", "-Infinity". Strings longer than
`max_attribute_value_length` are cut to that many characters followed by TRUNCATED; arrays and
kvlists nested deeper than `max_value_depth` are replaced by TRUNCATED.

Also here: the lenient coercions the typed columns use (numbers sent as strings, "true" as a
bool), and `dumps`, the one JSON encoder for the JSON columns.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import orjson

TRUNCATED = "...[truncated]"
DROPPED_KEY = "agentsla.dropped_attributes"
INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)

_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}
_TRUE = frozenset(("true", "1", "yes", "y", "on", "t"))
_FALSE = frozenset(("false", "0", "no", "n", "off", "f"))


class Limits:
    """The per-value limits, unpacked once per request from IngestConfig (hot path)."""

    __slots__ = ("max_attributes", "max_length", "max_depth")

    def __init__(self, max_attributes: int, max_length: int, max_depth: int) -> None:
        self.max_attributes = max_attributes
        self.max_length = max_length
        self.max_depth = max_depth


def dumps(value: Any) -> str:
    """Encode a converted value (only str, int, finite float, bool, None, list, dict) as JSON."""
    return orjson.dumps(value).decode()


def cut(text: str, max_length: int) -> str:
    """Return text, or its first max_length characters followed by TRUNCATED."""
    return text if len(text) <= max_length else text[:max_length] + TRUNCATED


def attributes_to_dict(kvs: Any, limits: Limits, extra_dropped: int = 0) -> dict[str, Any]:
    """Convert repeated KeyValue into a dict, keeping the first max_attributes keys.

    When attributes were dropped here or by the SDK (extra_dropped, the OTLP
    dropped_attributes_count), their number is recorded under DROPPED_KEY.
    """
    dropped = len(kvs) - limits.max_attributes
    if dropped > 0:
        kvs = kvs[:limits.max_attributes]
    else:
        dropped = 0
    max_length = limits.max_length
    out: dict[str, Any] = {}
    for kv in kvs:
        value = kv.value
        # Non-empty strings are by far the most common values: reading string_value first
        # skips a WhichOneof call for them (15% of this loop, which dominates normalization);
        # integers, the next most common, skip the call to _convert.
        text = value.string_value
        if text:
            out[kv.key] = text if len(text) <= max_length else text[:max_length] + TRUNCATED
            continue
        which = value.WhichOneof("value")
        if which == "int_value":
            out[kv.key] = value.int_value
        else:
            out[kv.key] = _convert(value, which, 1, limits)
    if dropped or extra_dropped:
        out[DROPPED_KEY] = dropped + extra_dropped
    return out


def _convert(value: Any, which: str | None, depth: int, limits: Limits) -> Any:
    if which == "string_value":
        return cut(value.string_value, limits.max_length)
    if which == "int_value" or which == "bool_value":
        return getattr(value, which)
    if which == "double_value":
        number = value.double_value
        if number - number == 0.0:  # finite (inf - inf and nan - nan are nan)
            return number
        return _NON_FINITE.get(number, "NaN")
    if which == "array_value":
        if depth > limits.max_depth:
            return TRUNCATED
        return [_convert(v, v.WhichOneof("value"), depth + 1, limits)
                for v in value.array_value.values]
    if which == "kvlist_value":
        if depth > limits.max_depth:
            return TRUNCATED
        return {kv.key: _convert(kv.value, kv.value.WhichOneof("value"), depth + 1, limits)
                for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return cut(base64.b64encode(value.bytes_value).decode(), limits.max_length)
    return None


def to_str(value: Any) -> str | None:
    """Coerce an attribute value to a non-empty string column value, else None."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return None


def to_float(value: Any) -> float | None:
    """Coerce to a finite float ("12.5" and 12 included); bools and NaN give None."""
    if type(value) is int:  # the usual case (hop.timeout_ms, budgets): not a bool
        return float(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
    else:
        return None
    return number if number - number == 0.0 else None


def to_int(value: Any, bounds: tuple[int, int] = INT64) -> int | None:
    """Coerce to an integer within bounds ("3", 3.0 and "3.0" included), else None."""
    if type(value) is int:
        number = value
    elif isinstance(value, str):
        try:
            number = int(value)
        except ValueError:
            real = to_float(value)
            if real is None or not real.is_integer():
                return None
            number = int(real)
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    else:
        return None
    return number if bounds[0] <= number <= bounds[1] else None


def to_int32(value: Any) -> int | None:
    """Coerce to an integer that fits an INTEGER column, else None."""
    if type(value) is int and INT32[0] <= value <= INT32[1]:
        return value
    return to_int(value, INT32)


def to_bool(value: Any) -> bool | None:
    """Coerce true/false, "true"/"false", "1"/"0", 1/0 (and yes/no, on/off) to a bool."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        return None
    if type(value) is int and value in (0, 1):
        return bool(value)
    return None
