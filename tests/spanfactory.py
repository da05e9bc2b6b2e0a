"""Build normalized span rows for tests: every key of SPAN_COLUMN_NAMES, sensible defaults.

    from spanfactory import BASE_NS, make_span, make_trace, ms

    root = make_span(span_id="gw", hop_kind="gateway", start_ms=0, end_ms=900, http_status=200)
    call = make_span(span_id="m1", parent=root, hop_kind="model", model="gpt-4o",
                     start_ms=10, end_ms=800, error_type="timeout")

`make_span(**overrides)` returns a plain dict shaped like a row of
`collector.processing.normalize.normalize_request(...).rows` (after the writer resolved `task_id`):

- Every column has a default: null for optional attributes, `status_code="unset"`,
  `span_kind="internal"`, `service_name="svc"`, JSON columns `"{}"`/`"[]"`, and the fixed
  `TRACE_ID`. Span ids come from a module counter (16 hex digits) unless `span_id` is given;
  tests that compare ids should give readable ones (`span_id="gw"`); nothing is validated.
- Times: give `start_ms`/`end_ms` (milliseconds after `BASE_NS`, floats allowed) or
  `start_ns`/`end_ns` directly; `duration_ms` alone sets the end from the start. Defaults:
  start 0 ms, end start + 10 ms. `duration_ms` and `received_ns` (= end) are derived unless given.
- `parent=` takes a span dict (its `span_id` and `trace_id` are copied) or a span id string;
  `parent_span_id=` is also accepted as is.
- Derived like the normalizer does, unless given: `hop_name` (model, tool, agent, else the span
  name), `name` (hop name, else "span"), `is_error` (status `error` or an `error_type`).
  The factory does not map HTTP statuses to error types: give `error_type` as normalized.
- Unknown keyword arguments raise TypeError, so typos do not pass silently.

`make_trace(*specs, **common)` builds a list: each spec is a dict of `make_span` keyword
arguments, and `common` (e.g. `trace_id=`, `task_id=`) applies to every span unless a spec sets
the key itself.
"""

from __future__ import annotations

import itertools
from typing import Any, Mapping

from agentsla.collector.store.schema import SPAN_COLUMN_NAMES

#: 2023-11-14T22:13:20Z: every `*_ms` time is relative to it.
BASE_NS = 1_700_000_000_000_000_000
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
DEFAULT_DURATION_MS = 10.0

_ids = itertools.count(1)
_CONVENIENCE = {"start_ms", "end_ms", "parent"}


def ms(value: float) -> int:
    """Return the unix ns of `value` milliseconds after BASE_NS."""
    return BASE_NS + round(value * 1_000_000)


def _defaults() -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(SPAN_COLUMN_NAMES)
    row.update(trace_id=TRACE_ID, span_kind="internal", service_name="svc", status_code="unset",
               attributes="{}", resource="{}", events="[]", links="[]")
    return row


def _times(row: dict[str, Any], given: Mapping[str, Any]) -> None:
    start = given.get("start_ns", ms(given.get("start_ms", 0.0)))
    if "end_ns" in given:
        end = given["end_ns"]
    elif "end_ms" in given:
        end = ms(given["end_ms"])
    else:
        end = start + round(given.get("duration_ms", DEFAULT_DURATION_MS) * 1_000_000)
    row["start_ns"], row["end_ns"] = start, end
    if "duration_ms" not in given:
        row["duration_ms"] = None if end is None else max(0, end - start) / 1e6
    if "received_ns" not in given:
        row["received_ns"] = end


def _parent(row: dict[str, Any], parent: Any) -> None:
    if isinstance(parent, Mapping):
        row["parent_span_id"], row["trace_id"] = parent["span_id"], parent["trace_id"]
    else:
        row["parent_span_id"] = parent


def make_span(**overrides: Any) -> dict[str, Any]:
    """Return a full span row: defaults, then `overrides`, then the derived columns."""
    unknown = set(overrides) - set(SPAN_COLUMN_NAMES) - _CONVENIENCE
    if unknown:
        raise TypeError(f"make_span: unknown column(s) {sorted(unknown)}")
    row = _defaults()
    row["span_id"] = f"{next(_ids):016x}"
    row.update({k: v for k, v in overrides.items() if k not in _CONVENIENCE})
    if overrides.get("parent") is not None:
        _parent(row, overrides["parent"])
    _times(row, overrides)
    if "hop_name" not in overrides:
        row["hop_name"] = row["model"] or row["tool"] or row["agent"] or overrides.get("name")
    if "name" not in overrides:
        row["name"] = row["hop_name"] or "span"
    if row["hop_name"] is None and row["hop_kind"] is not None:
        row["hop_name"] = row["name"]
    if "is_error" not in overrides:
        row["is_error"] = row["status_code"] == "error" or row["error_type"] is not None
    return row


def make_trace(*specs: Mapping[str, Any], **common: Any) -> list[dict[str, Any]]:
    """Return one span row per spec, each built from `common` updated with the spec."""
    return [make_span(**{**common, **spec}) for spec in specs]
