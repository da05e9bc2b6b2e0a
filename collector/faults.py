"""FaultPlan: test-only writer faults, off unless the `fault_injection` setting names some.

The tests of writer supervision run against the real server, and no real input makes the
writer fail (it owns every key and converted every type), so they name the fault to inject:
`crash@2` raises an unexpected error with the 2nd batch in hand, `write_error@1` makes the 1st
batch's write fail as a DuckDB constraint error would, `stall@3` blocks the writer on the 3rd
batch until the process stops (as a DuckDB call that never returns would). `@N+` repeats the
fault from the Nth batch on; several faults are separated by commas.
"""

from __future__ import annotations

import re
import threading

KINDS = ("crash", "write_error", "stall")
_FAULT = re.compile(r"(?P<kind>[a-z_]+)@(?P<n>\d+)(?P<on>\+?)")


class InjectedFault(RuntimeError):
    """The unexpected error `crash` raises."""


def parse_faults(text: str) -> str:
    """Check a fault_injection value such as `crash@2,stall@5+` ('' = none); return it."""
    for part in filter(None, (p.strip() for p in str(text or "").split(","))):
        match = _FAULT.fullmatch(part)
        if not match or match["kind"] not in KINDS or int(match["n"]) < 1:
            raise ValueError(f"expected KIND@N or KIND@N+ with KIND one of {', '.join(KINDS)}, "
                             f"N from 1 (got {part!r})")
    return str(text or "")


class FaultPlan:
    """Which fault, if any, hits the Nth batch the writer takes."""

    def __init__(self, text: str) -> None:
        self._faults = [(m["kind"], int(m["n"]), bool(m["on"])) for m in
                        (_FAULT.fullmatch(p.strip()) for p in parse_faults(text).split(",")
                         if p.strip())]
        self.released = threading.Event()  # set at shutdown: a stalled writer carries on

    def at(self, batch: int) -> str | None:
        """Return the fault planned for batch number `batch` (1-based), or None."""
        for kind, n, onwards in self._faults:
            if batch == n or (onwards and batch > n):
                return kind
        return None
