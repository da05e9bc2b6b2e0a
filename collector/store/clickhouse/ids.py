"""How many ids one `in {ids:Array(String)}` list may carry.

With about 33,000 ids or more ClickHouse 26.9 (chdb 4.4) no longer analyses the list against
the primary key: a lookup of random trace ids in 100M span facts then ran for minutes, where
24,000 ids took 3 s of CPU (docs/scale-out.md, Measured, A live shard at 100M). Lists that
can grow with a pass (its traces, its tasks) are asked in chunks of ID_CHUNK.
"""

from __future__ import annotations

from typing import Iterator, Sequence

ID_CHUNK = 10_000


def id_chunks(ids: Sequence[str]) -> Iterator[list[str]]:
    """Yield `ids` in lists of at most ID_CHUNK (none for no ids)."""
    for first in range(0, len(ids), ID_CHUNK):
        yield list(ids[first:first + ID_CHUNK])
