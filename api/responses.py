"""JSON answers of the HTTP API, shared by the query API and the alert service's routes."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

from starlette.responses import Response


def finite(value: Any) -> Any:
    """Replace NaN and infinities (not JSON; they come from empty aggregates) by null, deeply."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def json_response(data: Any, status: int = 200,
                  headers: Mapping[str, str] | None = None) -> Response:
    """Answer `data` as compact JSON, times and other objects as strings."""
    body = json.dumps(finite(data), separators=(",", ":"), allow_nan=False, default=str)
    return Response(body, status, headers=headers, media_type="application/json")
