"""OTLP attribute values for hand-built protobuf spans: one AnyValue builder for every test."""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList


def av(value: Any) -> AnyValue:
    """Build an AnyValue from a Python value (bytes, bool, int, float, str, list, tuple, dict)."""
    if isinstance(value, AnyValue):
        return value
    if isinstance(value, bytes):
        return AnyValue(bytes_value=value)
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, (list, tuple)):
        return AnyValue(array_value=ArrayValue(values=[av(v) for v in value]))
    if isinstance(value, dict):
        return AnyValue(kvlist_value=KeyValueList(values=kvs(value)))
    return AnyValue(string_value=str(value))


def kvs(attributes: dict) -> list[KeyValue]:
    """Build OTLP KeyValues from a dict of attributes."""
    return [KeyValue(key=k, value=av(v)) for k, v in attributes.items()]
