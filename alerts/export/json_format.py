"""The JSON export: the incident document itself, schema `agentsla.incident/1`."""

from __future__ import annotations

import json
import math
from importlib import resources
from typing import Any

SCHEMA_FILE = "incident.schema.json"


def to_json(doc: dict) -> str:
    """Serialize the document (NaN and infinities become null)."""
    return json.dumps(_finite(doc), indent=2, sort_keys=False, allow_nan=False, default=str)


def json_schema() -> dict:
    """Return the JSON Schema of the document, shipped as package data."""
    text = resources.files("agentsla.alerts.export").joinpath(SCHEMA_FILE).read_text()
    return json.loads(text)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
