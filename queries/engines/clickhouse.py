"""The ClickHouse read store: named questions over a ClickHouse server or chdb in-process.

Both transports run the same SQL (queries/sql/clickhouse/) with ClickHouse's own query
parameters (`{name:Type}`, bound by the server, never pasted into the text): a `Runner` is the
thin layer that ships a statement and brings back Arrow. `chdb:///path` runs the ClickHouse
engine inside this process (single node, and the tests: no ClickHouse server can be installed
here); `clickhouse://user:password@host:8123/database` talks HTTP through clickhouse-connect.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Mapping, Protocol

import orjson
import pyarrow as pa

from agentsla.collector.store.clickhouse import rollups, schema
from agentsla.collector.store.clickhouse.backfills import backfill_finding_spans
from agentsla.collector.store.clickhouse.materializer import Shard
from agentsla.collector.store.clickhouse.url import StoreURL
from agentsla.errors import AgentslaError, PermanentError, RetryableError
from agentsla.queries.store import bound, plain, question_sql

class Runner(Protocol):
    """Ships ClickHouse statements over one transport and brings results back as Arrow."""

    def arrow(self, sql: str, params: Mapping[str, Any]) -> pa.Table:
        """Run a query with bound `{name:Type}` parameters; return its result."""

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        """Run a statement that returns nothing (DDL, INSERT ... SELECT), parameters bound."""

    def insert(self, table: str, rows: list[dict[str, Any]]) -> None:
        """Insert rows given as dicts keyed by column (JSONEachRow)."""

    def insert_arrow(self, table: str, data: pa.Table) -> None:
        """Insert an Arrow table, its columns by name."""

    def close(self) -> None:
        """Release the connection."""


class ChdbRunner:
    """A Runner over one chdb session (the ClickHouse engine in this process)."""

    def __init__(self, path: str) -> None:
        from chdb import session  # heavy: imported only where a chdb store is used

        self._session = session.Session(path)
        self._lock = threading.Lock()  # one statement at a time on the session

    def arrow(self, sql: str, params: Mapping[str, Any]) -> pa.Table:
        """Run a query with bound `{name:Type}` parameters; return its result."""
        with self._lock:
            return self._session.query(sql, "ArrowTable",
                                       params={k: param_text(v) for k, v in params.items()})

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        """Run a statement that returns nothing (DDL, INSERT ... SELECT), parameters bound."""
        with self._lock:
            self._session.query(sql, params={k: param_text(v) for k, v in (params or {}).items()})

    def insert(self, table: str, rows: list[dict[str, Any]]) -> None:
        """Insert rows given as dicts keyed by column (JSONEachRow)."""
        if rows:
            self.execute(f"insert into {table} format JSONEachRow\n" + _json_lines(rows))

    def insert_arrow(self, table: str, data: pa.Table) -> None:
        """Insert an Arrow table, its columns by name (chdb reads the local `data`)."""
        if data.num_rows:
            columns = ", ".join(f"`{name}`" for name in data.column_names)
            with self._lock:  # chdb's Python() table function reads `data` from this frame
                self._session.query(f"insert into {table} ({columns}) select {columns} "
                                    "from Python(data)")

    def close(self) -> None:
        """Close the session."""
        with self._lock:
            self._session.close()


def param_text(value: Any) -> str:
    """Render a query parameter as ClickHouse parses it (TSV-escaped text; arrays quoted)."""
    if value is None:
        return "\\N"  # a bare None would reach the server as the string 'NULL'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_quoted(v) for v in value) + "]"
    if isinstance(value, str):
        return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
    return repr(value) if isinstance(value, float) else str(value)


def _quoted(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return "NULL" if value is None else param_text(value)


class ServerRunner:
    """A Runner over HTTP to a ClickHouse server (clickhouse-connect). Not run in CI."""

    def __init__(self, url: StoreURL) -> None:
        import clickhouse_connect

        try:
            self._client = clickhouse_connect.get_client(
                host=url.host, port=url.port, username=url.user, password=url.password,
                database=url.database, secure=url.scheme == "clickhouses")
        except Exception as exc:  # the driver raises its own OperationalError family
            raise RetryableError(f"cannot reach ClickHouse at {url}: {exc}") from exc

    def arrow(self, sql: str, params: Mapping[str, Any]) -> pa.Table:
        """Run a query with bound `{name:Type}` parameters (server-side binding)."""
        return self._client.query_arrow(sql, parameters=dict(params))

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        """Run a statement that returns nothing (DDL, INSERT ... SELECT), parameters bound."""
        self._client.command(sql, parameters=dict(params or {}))

    def insert(self, table: str, rows: list[dict[str, Any]]) -> None:
        """Insert rows given as dicts keyed by column (JSONEachRow)."""
        if rows:
            self._client.raw_insert(table, insert_block=_json_lines(rows), fmt="JSONEachRow")

    def insert_arrow(self, table: str, data: pa.Table) -> None:
        """Insert an Arrow table, its columns by name."""
        if data.num_rows:
            self._client.insert_arrow(table, data)

    def close(self) -> None:
        """Close the HTTP pool."""
        self._client.close()


def _json_lines(rows: list[dict[str, Any]]) -> str:
    return "\n".join(orjson.dumps(r).decode() for r in rows)


class ClickHouseStore:
    """A ReadStore over a Runner (see queries.store.ReadStore)."""

    dialect = "clickhouse"

    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def rows(self, question: str, params: Mapping[str, Any] | None = None,
             **fragments: str) -> list[dict]:
        """Run one question; return its rows as dicts (NaN and infinities as None)."""
        table = self.arrow(question, params, **fragments)
        return [{k: plain(v) for k, v in row.items()} for row in table.to_pylist()]

    def arrow(self, question: str, params: Mapping[str, Any] | None = None,
              **fragments: str) -> pa.Table:
        """Run one question; return its result as an Arrow table (dictionaries decoded)."""
        sql = question_sql(self.dialect, question, fragments)
        return _decoded(self._runner.arrow(sql, bound(sql, params, "{")))

    def interrupt(self) -> None:
        """Do nothing: neither transport cancels from another thread yet (docs/scale-out.md)."""

    def sibling(self) -> None:
        """None: the runner is the process's, and ClickHouse spreads one statement over its
        cores itself."""

    def close(self) -> None:
        """Leave the shared runner open: it belongs to the process, not to one request."""


def _decoded(table: pa.Table) -> pa.Table:
    """Return the table with LowCardinality (Arrow dictionary) columns as plain values."""
    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(field.type.value_type))
    return table


def open_runner(url: StoreURL) -> Runner:
    """Connect to the store and check it: the traces table is the exporter's, ours exist."""
    try:
        runner: Runner = ChdbRunner(url.path) if url.scheme == "chdb" else ServerRunner(url)
    except AgentslaError:
        raise
    except Exception as exc:  # chdb raises its own errors for a path it cannot use
        raise PermanentError(f"cannot open the store {url}: {exc}") from exc
    try:
        prepare(runner, url)
    except Exception as exc:
        runner.close()
        if isinstance(exc, AgentslaError):
            raise
        raise RetryableError(f"cannot prepare the store {url}: {exc}") from exc
    return runner


def prepare(runner: Runner, url: StoreURL) -> None:
    """Create what the store lacks (chdb: the exporter's table too, Map variant unless one is
    there) and check the traces table; agentsla's views follow the variant found."""
    if url.scheme == "chdb":  # nobody else writes a chdb store: create the exporter's table
        runner.execute(f"create database if not exists {url.database}")
        for statement in schema.otel_traces_ddl(url.database, url.table):
            runner.execute(statement)
    variant = traces_variant(runner, url)
    existed = {r["name"] for r in runner.arrow(
        "select name from system.tables where database = {db:String}",
        {"db": url.database}).to_pylist()}
    for statement in schema.agentsla_ddl(url.database, url.table, variant):
        runner.execute(statement)
    backfill(runner, url.database, existed)


def backfill(runner: Runner, database: str, existed: set[str]) -> None:
    """Fill the tables a store materialized before they existed (agentsla_task_traces,
    agentsla_hop_spans from its span facts; the rollups from those, and a rollup added since
    the others were built, per shard they were kept for; agentsla_finding_spans day by day,
    resumed where a restart left it), once: at version 0, so any pass overrides. `existed`:
    the store's tables before start-up created the missing ones."""
    def empty(table: str) -> bool:
        return not runner.arrow(f"select 1 from {database}.{table} limit 1", {}).num_rows

    if "agentsla_task_minutes_index" in existed:
        _index_tasks_by_minute(runner, database)
    if empty("agentsla_span_facts"):
        return
    if empty("agentsla_task_traces"):
        runner.execute(f"insert into {database}.agentsla_task_traces (task_id, trace_id, "
                       f"version) select distinct task_id, trace_id, 0 from "
                       f"{database}.agentsla_span_facts final")
    if empty("agentsla_hop_spans"):
        runner.execute(schema.hop_spans_insert_sql(
            database, f"s.trace_id in (select trace_id from {database}.agentsla_span_facts)"),
            {"version": 0})
    backfill_finding_spans(runner, database, time.time_ns())
    if empty("agentsla_minute_tasks"):  # as one shard (`agentsla rollups rebuild`: N)
        rollups.rebuild(runner, database, Shard(0, 1))
        return
    added = tuple(r for r in rollups.ROLLUPS if r.table not in existed)
    for shard in rollups.shards(runner, database) if added else ():
        rollups.rebuild(runner, database, shard, added)


def _index_tasks_by_minute(runner: Runner, database: str) -> None:
    """Replace an older store's minute index (task ids by minute, a lookup of agentsla_tasks
    by id behind each) with the tasks by minute, for each shard it lists; the index is dropped
    last, so a start-up stopped midway starts over."""
    runner.execute(f"truncate table {database}.agentsla_minute_tasks")
    for shard in rollups.shards(runner, database, "agentsla_task_minutes_index"):
        rollups.index_stored_tasks(runner, database, shard)
    runner.execute(f"drop table {database}.agentsla_task_minutes_index")


def traces_variant(runner: Runner, url: StoreURL) -> str:
    """Return the variant (schema.MAP or schema.JSON) of url's traces table; raise a
    PermanentError unless it is the exporter's."""
    found = runner.arrow("select name, type from system.columns where database = "
                         "{db:String} and table = {tb:String}",
                         {"db": url.database, "tb": url.table}).to_pylist()
    return schema.check_traces_columns(((r["name"], r["type"]) for r in found),
                                       f"{url.database}.{url.table}")


def store_factory(runner: Runner) -> Callable[[], ClickHouseStore]:
    """Return a factory of stores over one shared runner (the API's and alerts' shape)."""
    return lambda: ClickHouseStore(runner)

