"""IdFilter: a fixed-size Bloom filter of ids, so the writer can skip lookups for certainly new ids.

The writer asks DuckDB "is this trace (task) stored?" only for ids that may be stored without
being in its memory: ids found in the database at startup and ids its memory has let go of. Every
other id is certainly new. A full scan per lookup grows with the tables, so skipping it matters.
A false positive only costs the lookup the filter exists to avoid; there are no false negatives.
"""

from __future__ import annotations

from typing import Iterable

_DEFAULT_BITS_LOG2 = 25  # 4 MiB: about 2% false positives at 2M ids, 20% at 10M


class IdFilter:
    """Remembers ids approximately: `in` may say yes for an id never added, never no for one added."""

    def __init__(self, bits_log2: int = _DEFAULT_BITS_LOG2) -> None:
        self._shift = bits_log2
        self._mask = (1 << bits_log2) - 1
        self._bits = bytearray(1 << max(0, bits_log2 - 3))

    def add(self, key: str) -> None:
        """Remember one id."""
        h = hash(key)  # salted per process: fine, the filter lives in memory only
        for bit in (h & self._mask, (h >> self._shift) & self._mask):
            self._bits[bit >> 3] |= 1 << (bit & 7)

    def update(self, keys: Iterable[str]) -> None:
        """Remember every id of an iterable."""
        for key in keys:
            self.add(key)

    def __contains__(self, key: str) -> bool:
        h = hash(key)
        bits = self._bits
        first, second = h & self._mask, (h >> self._shift) & self._mask
        return bool(bits[first >> 3] & (1 << (first & 7)) and bits[second >> 3] & (1 << (second & 7)))
