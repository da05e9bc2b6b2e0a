"""Time windows of the query API: `from`/`to` (RFC 3339 or unix seconds) or `window=15m`, and `step`."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Mapping

from agentsla.config import parse_duration
from agentsla.errors import PermanentError

NS = 1_000_000_000
DEFAULT_WINDOW_S = 3600.0
#: Most buckets one time series may have; a finer step over a long window is refused.
MAX_BUCKETS = 2000
_UNIX_SECONDS = re.compile(r"-?\d+(\.\d+)?")


@dataclass(frozen=True)
class Window:
    """A half-open interval [start_ns, end_ns) of unix nanoseconds, with an optional step."""

    start_ns: int
    end_ns: int
    step_ns: int | None = None

    def as_json(self) -> dict:
        """Describe the window with both ns and RFC 3339 bounds."""
        return {"from_ns": self.start_ns, "to_ns": self.end_ns,
                "from": rfc3339(self.start_ns), "to": rfc3339(self.end_ns),
                "step_s": None if self.step_ns is None else self.step_ns / NS}


def rfc3339(ns: int | None) -> str | None:
    """Format unix nanoseconds as an RFC 3339 UTC timestamp with millisecond precision."""
    if ns is None:
        return None
    moment = datetime.fromtimestamp(ns / NS, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(name: str, value: str) -> int:
    """Parse an RFC 3339 timestamp or unix seconds into unix nanoseconds."""
    text = value.strip()
    if _UNIX_SECONDS.fullmatch(text):
        return int(round(float(text) * NS))
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise PermanentError(f"bad {name} {value!r}: expected RFC 3339 (2024-05-01T12:00:00Z) "
                             "or unix seconds") from None
    if moment.tzinfo is None:
        raise PermanentError(f"bad {name} {value!r}: RFC 3339 needs a time zone (Z or +hh:mm)")
    return int(moment.timestamp()) * NS + moment.microsecond * 1000


def parse_span(name: str, value: str) -> int:
    """Parse a positive duration such as `15m` or `30` (seconds) into nanoseconds."""
    try:
        seconds = parse_duration(value)
    except ValueError as exc:
        raise PermanentError(f"bad {name} {value!r}: {exc}") from None
    if seconds <= 0:
        raise PermanentError(f"bad {name} {value!r}: must be greater than zero")
    return int(round(seconds * NS))


def parse_window(params: Mapping[str, str], now_ns: int | None = None,
                 default_s: float = DEFAULT_WINDOW_S) -> Window:
    """Read `from`, `to`, `window` and `step` into a Window (default: the last hour ending now).

    `to` defaults to now; `from` defaults to `to - window`. Giving `from` and `window` together
    is ambiguous and refused. `step` must divide the window into at most MAX_BUCKETS buckets.
    """
    now_ns = time.time_ns() if now_ns is None else now_ns
    end_ns = parse_time("to", params["to"]) if params.get("to") else now_ns
    if params.get("from") and params.get("window"):
        raise PermanentError("give either from (with an optional to) or window, not both")
    if params.get("from"):
        start_ns = parse_time("from", params["from"])
    else:
        length = parse_span("window", params["window"]) if params.get("window") else int(default_s * NS)
        start_ns = end_ns - length
    if start_ns >= end_ns:
        raise PermanentError(f"bad window: from ({rfc3339(start_ns)}) must be before "
                             f"to ({rfc3339(end_ns)})")
    step_ns = parse_span("step", params["step"]) if params.get("step") else None
    if step_ns is not None and -(-(end_ns - start_ns) // step_ns) > MAX_BUCKETS:
        raise PermanentError(f"bad step {params['step']!r}: the window would have more than "
                             f"{MAX_BUCKETS} buckets; choose a larger step")
    return Window(start_ns, end_ns, step_ns)
