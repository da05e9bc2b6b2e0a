"""Classic Prometheus `le` buckets as exact sums of the rollups' scale-5 exponential buckets.

An exponential bucket `i` holds `(2^(i/32), 2^((i+1)/32)]` (collector/store/rollups.py), so a
bound `2^(k/32)` holds exactly the buckets `i < k` (and the zero bucket): each classic bucket is
an exact sum, never an estimate. The bounds are the scale-5 boundaries nearest to conventional
values (1 s becomes 2^(319/32) ms = 1.00217 s); docs/api.md lists them.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Iterable

from agentsla.collector.store.rollups import SCALE, ZERO_BUCKET

_PER_OCTAVE = 2 ** SCALE


@dataclass(frozen=True)
class Layout:
    """The classic buckets of one histogram family: bounds as bucket indexes, and their unit."""

    #: k of each bound 2^(k/32) (in the rollup's unit), increasing.
    bounds: tuple[int, ...]
    #: multiply a rollup value by this to get the exported unit (ms → seconds: 0.001).
    to_unit: float

    def le(self) -> list[str]:
        """Return the `le` label values, +Inf last (floats written as Go writes them)."""
        return [_go_float(2 ** (k / _PER_OCTAVE) * self.to_unit) for k in self.bounds] + ["+Inf"]

    def slot(self, bucket: int) -> int:
        """Return the classic bucket (index into le()) holding exponential bucket `bucket`."""
        # the first bound 2^(k/32) with bucket < k (exact zeros: the first); past the last: +Inf
        return 0 if bucket == ZERO_BUCKET else bisect.bisect_right(self.bounds, bucket)


def bucket_of(value: float) -> int:
    """Return a value's exponential bucket, as collector/store/rollups.py bucket_sql does."""
    return ZERO_BUCKET if value == 0 else math.ceil(math.log2(value) * _PER_OCTAVE) - 1


def nearest_bounds(values: Iterable[float]) -> tuple[int, ...]:
    """Return the scale-5 boundary indexes nearest (in log scale) to conventional values."""
    return tuple(round(math.log2(v) * _PER_OCTAVE) for v in values)


def _go_float(value: float) -> str:
    # the shortest repr that round-trips, as Prometheus clients write `le`
    return repr(float(value))


#: Durations (task, hop, time to first token), bounds near 5 ms ... 10 min, stored in ms.
DURATION = Layout(nearest_bounds(ms * 1000 for ms in (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)), 0.001)
#: Budget used (a task's duration over its budget), bounds near 0.1 ... 2.
BUDGET_USED = Layout(nearest_bounds((0.1, 0.25, 0.5, 0.75, 0.9, 1, 1.25, 1.5, 2)), 1.0)
