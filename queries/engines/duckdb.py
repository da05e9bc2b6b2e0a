"""The DuckDB read store: named questions over one connection or cursor of the agentsla file.

A DuckDB cursor belongs to one thread, so each request (API) or evaluation round (alerts)
opens its own store over a fresh cursor (`cursor_stores`) and closes it when done. DuckDB 2.0
invalidates a pending result when the same cursor runs the next statement, so every result is
fetched whole before the call returns.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping

import duckdb
import pyarrow as pa

from agentsla.collector.store.database import cursor
from agentsla.errors import RetryableError
from agentsla.queries.store import bound, plain, question_sql


class DuckDBStore:
    """A ReadStore over one DuckDB connection or cursor (see queries.store.ReadStore)."""

    dialect = "duckdb"

    def __init__(self, con: duckdb.DuckDBPyConnection, parent: DuckDBStore | None = None
                 ) -> None:
        self._con = con
        self._parent = parent
        self._siblings: set[DuckDBStore] = set()

    def rows(self, question: str, params: Mapping[str, Any] | None = None,
             **fragments: str) -> list[dict]:
        """Run one question; return its rows as dicts (NaN and infinities as None)."""
        sql = question_sql(self.dialect, question, fragments)
        with self._memory_named(question, fragments):
            self._con.execute(sql, bound(sql, params))
            names = [d[0] for d in self._con.description]
            return [{n: plain(v) for n, v in zip(names, row)} for row in self._con.fetchall()]

    def arrow(self, question: str, params: Mapping[str, Any] | None = None,
              **fragments: str) -> pa.Table:
        """Run one question; return its result as an Arrow table."""
        sql = question_sql(self.dialect, question, fragments)
        # through a relation: Arrow from an execute() result would copy the rows once more
        with self._memory_named(question, fragments):
            return self._con.sql(sql, params=bound(sql, params)).to_arrow_table()

    @contextmanager
    def _memory_named(self, question: str, fragments: Mapping[str, str]) -> Iterator[None]:
        # Out of memory is the configured cap, not a bug: say which question and which setting
        # (503: the same question may fit once concurrent ones finish, or after a raise).
        try:
            yield
        except duckdb.OutOfMemoryException:
            snippets = [name for name in fragments.values() if name]
            if snippets:  # a generic question (findings/evidence_raw) is named by its snippets
                question += f"[{', '.join(snippets)}]"
            raise RetryableError(f"{question!r} needs more memory than memory_limit "
                                 f"({self._memory_limit()}) allows: ask a shorter window or "
                                 "raise memory_limit") from None

    def _memory_limit(self) -> str:
        # the question's transaction may be aborted by the error: then no query runs in it
        try:
            return self._con.execute("select current_setting('memory_limit')").fetchone()[0]
        except duckdb.Error:
            return "as configured"

    def interrupt(self) -> None:
        """Interrupt the running query, and its siblings', which then raise
        duckdb.InterruptException."""
        self._con.interrupt()
        for twin in list(self._siblings):
            twin.interrupt()

    def sibling(self) -> DuckDBStore:
        """A store over a cursor of its own (DuckDB runs one statement of a cursor at a time,
        and a small statement keeps few of its threads busy: two cursors answer on two cores);
        it does not see this cursor's temporary tables."""
        twin = DuckDBStore(cursor(self._con), parent=self)
        self._siblings.add(twin)
        return twin

    def close(self) -> None:
        """Close the cursor (or connection) this store runs on, and its siblings'."""
        for twin in list(self._siblings):
            twin.close()
        if self._parent is not None:
            self._parent._siblings.discard(self)
        self._con.close()


def cursor_stores(con: duckdb.DuckDBPyConnection) -> Callable[[], DuckDBStore]:
    """Return a factory of stores, each over a fresh cursor of `con` (one per thread)."""
    return lambda: DuckDBStore(cursor(con))
