"""The JSON export: the incident document itself, schema `agentsla.incident/2`."""

from __future__ import annotations

import json
from importlib import resources

from agentsla.api.responses import finite

SCHEMA_FILE = "incident.schema.json"


def to_json(doc: dict) -> str:
    """Serialize the document (NaN and infinities become null)."""
    return json.dumps(finite(doc), indent=2, sort_keys=False, allow_nan=False, default=str)


def json_schema() -> dict:
    """Return the JSON Schema of the document, shipped as package data."""
    text = resources.files("agentsla.alerts.incidents.export").joinpath(SCHEMA_FILE).read_text()
    return json.loads(text)
