"""ClickHouse schema: the exporter's traces table, agentsla's own tables, the `spans` view.

The Collector's clickhouseexporter owns `otel_traces` (otel_traces.sql is its DDL, for tests and
stand-alone chdb stores). agentsla adds tables of its own (agentsla.sql) and the views the read
side names: `tasks` over agentsla_tasks, and `spans` over the traces table joined with what
materialization adds per span. The typed columns of `spans` are SQL generated from the same
mapping tables the Python normalizer runs (collector/processing/mapping.py), so a rule is
written once.
"""

from __future__ import annotations

from importlib import resources
from string import Template
from typing import Any, Callable, Iterable

from agentsla.collector.processing import mapping as m
from agentsla.collector.processing.attributes import to_bool, to_float, to_int, to_int32, to_str
from agentsla.collector.store.schema import ADDED_TASK_COLUMNS, SPAN_COLUMN_NAMES, TASK_COLUMNS
from agentsla.collector.tasks.self_time import SELF_TIMES_SQL_TYPE
from agentsla.collector.store.clickhouse import rollups
from agentsla.collector.store.clickhouse.url import identifier
from agentsla.errors import PermanentError

#: The two layouts of the exporter's traces table (its `json` option picks one).
MAP, JSON = "map", "json"

#: The columns (name, type) of the exporter's Map variant that the `spans` view reads.
REQUIRED_COLUMNS = {
    "Timestamp": "DateTime64(9)", "TraceId": "String", "SpanId": "String",
    "ParentSpanId": "String", "SpanName": "LowCardinality(String)",
    "SpanKind": "LowCardinality(String)", "ServiceName": "LowCardinality(String)",
    "ResourceAttributes": "Map(LowCardinality(String), String)", "ScopeName": "String",
    "SpanAttributes": "Map(LowCardinality(String), String)", "Duration": "UInt64",
    "StatusCode": "LowCardinality(String)", "StatusMessage": "String",
    "Events.Timestamp": "Array(DateTime64(9))", "Events.Name": "Array(LowCardinality(String))",
    "Events.Attributes": "Array(Map(LowCardinality(String), String))",
    "Links.TraceId": "Array(String)", "Links.SpanId": "Array(String)",
    "Links.Attributes": "Array(Map(LowCardinality(String), String))",
}

#: The same columns in the JSON variant: attributes are JSON objects of typed values.
_JSON_ATTRIBUTES = ("ResourceAttributes", "SpanAttributes", "Events.Attributes",
                    "Links.Attributes")
REQUIRED_JSON_COLUMNS = {
    **REQUIRED_COLUMNS, "ResourceAttributes": "JSON", "SpanAttributes": "JSON",
    "Events.Attributes": "Array(JSON)", "Links.Attributes": "Array(JSON)",
}

_CH_TYPES = {"VARCHAR": "Nullable(String)", "BIGINT": "Nullable(Int64)",
             "DOUBLE": "Nullable(Float64)", "INTEGER": "Nullable(Int32)",
             "BOOLEAN": "Nullable(Bool)", "VARCHAR PRIMARY KEY": "String",
             # an array is never null in ClickHouse: a null inserts as []
             SELF_TIMES_SQL_TYPE: "Array(Tuple(hop_kind String, self_us Int64))"}
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")

#: The model provider as OTel GenAI names it (gen_ai.system: its deprecated spelling), else the
#: model; null unless a model hop. SQL over the `spans` view aliased s.
PROVIDER_SQL = ("if(s.hop_kind = 'model', coalesce("
                "nullIf(JSONExtractString(s.attributes, 'gen_ai.provider.name'), ''), "
                "nullIf(JSONExtractString(s.attributes, 'gen_ai.system'), ''), s.hop_name), null)")

#: agentsla_hop_spans: the columns of `spans` (their types there) the window questions read,
#: and `provider` (PROVIDER_SQL).
HOP_SPAN_COLUMNS: dict[str, str] = {
    "end_ns": "Int64", "trace_id": "String", "span_id": "String", "task_id": "String",
    "service_name": "LowCardinality(Nullable(String))", "hop_kind": "LowCardinality(String)",
    "hop_name": "LowCardinality(String)", "duration_ms": "Float64",
    "ttft_ms": "Nullable(Float64)", "is_error": "Bool",
    "error_type": "LowCardinality(Nullable(String))", "call_id": "Nullable(String)",
    "attempt": "Nullable(Int32)", "retry_attempt": "Nullable(Int32)",
    "input_tokens": "Nullable(Int64)", "output_tokens": "Nullable(Int64)",
    "provider": "LowCardinality(Nullable(String))",
}

#: agentsla_finding_spans: the columns of `spans` (their types there, so every finding reads
#: what it read over the view) that the finding questions read through {{finding_spans}}
#: (queries/sql/clickhouse: findings/, the _evidence_* snippets and the snippets they pull in).
FINDING_SPAN_COLUMNS: dict[str, str] = {
    "end_ns": "Int64", "trace_id": "String", "span_id": "String",
    "parent_span_id": "Nullable(String)", "task_id": "String", "name": "LowCardinality(String)",
    "hop_kind": "String", "hop_name": "String", "start_ns": "Int64", "duration_ms": "Float64",
    "is_error": "Bool", "error_type": "Nullable(String)", "hop_timeout_ms": "Nullable(Float64)",
    "budget_remaining_ms": "Nullable(Float64)", "retry_attempt": "Nullable(Int32)",
    "retry_max": "Nullable(Int32)", "call_id": "Nullable(String)", "attempt": "Nullable(Int32)",
    "fallback_used": "Nullable(Bool)", "fallback_kind": "Nullable(String)",
    "fallback_from": "Nullable(String)", "fallback_to": "Nullable(String)",
    "idempotency_key": "Nullable(String)", "loop_limit": "Nullable(Int32)",
    "input_tokens": "Nullable(Int64)", "output_tokens": "Nullable(Int64)",
    "ttft_ms": "Nullable(Float64)",
}


def statements(text: str) -> list[str]:
    """Split a SQL file into statements (no statement here holds a ';' inside)."""
    kept = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in kept.split(";") if s.strip()]


def _file(name: str) -> str:
    return resources.files("agentsla.collector.store.clickhouse").joinpath(name).read_text()


def otel_traces_ddl(database: str, table: str, variant: str = MAP) -> list[str]:
    """Return the exporter's CREATE TABLE of its traces table (Map or JSON variant) and of its
    trace-id lookup (`<table>_trace_id_ts` and the materialized view keeping it)."""
    name = "otel_traces.sql" if variant == MAP else "otel_traces_json.sql"
    return [statement for file in (name, "otel_traces_trace_id_ts.sql")
            for statement in statements(Template(_file(file)).substitute(
                database=identifier(database), table=identifier(table)))]


def agentsla_ddl(database: str, table: str, variant: str = MAP) -> list[str]:
    """Return the statements creating agentsla's tables and its views over the traces table:
    `agentsla_traces` (attributes as string maps, whichever the variant), `spans`, `tasks`."""
    task_columns = ",\n    ".join(f"{name} {_CH_TYPES[sql_type]}"
                                   for name, sql_type, _, _ in TASK_COLUMNS)
    own = statements(Template(_file("agentsla.sql")).substitute(
        database=identifier(database), task_columns=task_columns,
        hop_spans_table=judged_spans_ddl(database, "hop_spans", HOP_SPAN_COLUMNS),
        finding_spans_table=judged_spans_ddl(database, "finding_spans", FINDING_SPAN_COLUMNS,
                                             _FINDING_SPAN_INDEXES)))
    added = [f"alter table {identifier(database)}.{tasks} add column if not exists "
             f"{name} {_CH_TYPES[sql_type]}" for name, sql_type, _, _ in ADDED_TASK_COLUMNS
             for tasks in ("agentsla_tasks", "agentsla_minute_tasks")]
    return [*own, *added, *rollups.ddl(identifier(database)),
            traces_view_sql(database, table, variant), typed_spans_view_sql(database),
            spans_view_sql(database)]


#: agentsla_finding_spans' skip indexes: one task's spans by trace id (and task id) within its
#: time range, and the questions' ranges on span start (granules sorted by end).
_FINDING_SPAN_INDEXES = (
    "INDEX finding_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1",
    "INDEX finding_task_id task_id TYPE bloom_filter(0.001) GRANULARITY 1",
    "INDEX finding_start start_ns TYPE minmax GRANULARITY 1")


def judged_spans_ddl(database: str, name: str, columns: dict[str, str],
                     indexes: Iterable[str] = ()) -> str:
    """Return the DDL of `agentsla_<name>`, columns of the spans a pass judged, one row per span
    (the newest version), sorted and partitioned by end so a window reads its own granules,
    with the exporter's codecs (Delta on the sort key); and of the view `<name>` reading it
    FINAL."""
    db = identifier(database)
    body = ",\n    ".join([
        *(f"{column} {sql_type} CODEC({'Delta(8), ' if column == 'end_ns' else ''}ZSTD(1))"
          for column, sql_type in columns.items()), "version UInt64", *indexes])
    return (f"create table if not exists {db}.agentsla_{name} (\n    {body}\n"
            f") ENGINE = ReplacingMergeTree(version)\n"
            f"PARTITION BY toDate(fromUnixTimestamp64Nano(end_ns))\n"
            f"ORDER BY (end_ns, trace_id, span_id);\n"
            f"create view if not exists {db}.{name} as\n"
            f"select * except (version) from {db}.agentsla_{name} final")


def check_traces_columns(columns: Iterable[tuple[str, str]], where: str) -> str:
    """Return the variant (MAP or JSON) of the exporter's traces table the columns are;
    raise a PermanentError saying what differs when they are neither."""
    found = dict(columns)
    if not found:
        raise PermanentError(f"no table {where}: point the store URL at the table the "
                             f"OpenTelemetry Collector's clickhouseexporter writes")
    variant = JSON if found.get("SpanAttributes", "").startswith("JSON") else MAP
    required = REQUIRED_JSON_COLUMNS if variant == JSON else REQUIRED_COLUMNS
    wrong = [f"{n} {t} (found {found.get(n, 'none')})" for n, t in required.items()
             if found.get(n) != t]
    if wrong:
        raise PermanentError(f"{where} is not the clickhouseexporter's traces table "
                             f"({variant} variant): expected {'; '.join(wrong[:3])}")
    return variant


def traces_view_sql(database: str, table: str, variant: str) -> str:
    """Return the CREATE VIEW of `agentsla_traces`: the traces table with every attribute
    column a Map(String, String), as the Map variant stores them.

    A JSON-variant object becomes its flattened paths (dotted keys, as the exporter's
    SpanAttributesKeys) with each value's text: numbers and booleans as AsString writes them;
    arrays in ClickHouse's literal form, not JSON (docs/scale-out.md).
    """
    db, tb = identifier(database), identifier(table)
    if variant == MAP:
        select = f"select * from {db}.{tb}"
    else:
        def flat(value: str) -> str:
            return f"mapFromArrays(JSONAllPaths({value}), JSONAllValues({value}))"
        replaced = [f"{flat(f'`{c}`')} as `{c}`" for c in _JSON_ATTRIBUTES[:2]] + \
            [f"arrayMap(a -> {flat('a')}, `{c}`) as `{c}`" for c in _JSON_ATTRIBUTES[2:]]
        select = f"select * replace ({', '.join(replaced)}) from {db}.{tb}"
    return f"create or replace view {db}.agentsla_traces as {select}"


def _string(value: str) -> str:
    """A ClickHouse string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _attr(key: str) -> str:
    return f"t.SpanAttributes[{_string(key)}]"


def _literals(values: Iterable[str]) -> str:
    return "[" + ", ".join(_string(v) for v in values) + "]"


def _lookup(value: str, table: dict[str, str]) -> str:
    """SQL mapping `value` through a dict, '' where it has no entry."""
    return f"transform({value}, {_literals(table)}, {_literals(table.values())}, '')"


def _finite(number: str) -> str:
    return f"if(isFinite({number}), {number}, null)"


def _integer(value: str, cast: str, low: int, high: int) -> str:
    # int("3") and whole floats ("3.0") both count, within the column's bounds
    real = _finite(f"toFloat64OrNull({value})")
    return (f"if({real} = round({real}) and {real} between {low} and {high}, "
            f"{cast}(coalesce(toInt64OrNull({value}), toInt64({real}))), null)")


#: Coercion of mapping.COLUMN_SOURCES -> SQL over one attribute's string value (Map variant).
_SQL_COERCIONS: dict[Callable[[Any], Any], Callable[[str], str]] = {
    to_str: lambda v: f"nullIf({v}, '')",
    to_float: lambda v: _finite(f"toFloat64OrNull({v})"),
    to_int: lambda v: _integer(v, "toInt64", -(2**53), 2**53),
    to_int32: lambda v: _integer(v, "toInt32", -(2**31), 2**31 - 1),
    to_bool: lambda v: (f"multiIf(lower(trimBoth({v})) in {_literals(_TRUE)}, true, "
                        f"lower(trimBoth({v})) in {_literals(_FALSE)}, false, null)"),
    m._outcome: lambda v: f"nullIf({_lookup(f'lower(trimBoth({v}))', m.OUTCOMES)}, '')",
    m._circuit_state: lambda v: (
        f"nullIf(if({_lookup(_circuit_key(v), m.CIRCUIT_STATES)} = '', {v}, "
        f"{_lookup(_circuit_key(v), m.CIRCUIT_STATES)}), '')"),
    m._invocation_model: lambda v: f"nullIf(JSONExtractString({v}, 'model'), '')",
    m._seconds_to_ms: lambda v: f"{_finite(f'toFloat64OrNull({v})')} * 1000.0",
}


def _circuit_key(value: str) -> str:
    return f"replaceRegexpAll(lower(trimBoth({value})), '[- ]', '_')"


def typed_column_sql() -> dict[str, str]:
    """Return column -> SQL expression for every typed column of mapping.COLUMN_SOURCES."""
    sources: dict[str, list[str]] = {}
    for column, keys, coerce in m.COLUMN_SOURCES:
        sql = _SQL_COERCIONS.get(coerce)
        if sql is None:
            raise RuntimeError(f"no ClickHouse SQL for the coercion of {column}: add it here")
        sources.setdefault(column, []).extend(sql(_attr(key)) for key in keys)
    return {c: e[0] if len(e) == 1 else f"coalesce({', '.join(e)})" for c, e in sources.items()}


def hop_kind_sql() -> str:
    """Return the SQL inferring hop.kind, the rules of normalize._hop_kind in their order."""
    given = f"lower(trimBoth({_attr('hop.kind')}))"
    arms = [f"{given} in {_literals(sorted(m.VALID_HOP_KINDS))}", given]
    for key, table in m.HOP_KIND_LOOKUPS:
        value = f"lower(trimBoth({_attr(key)}))"
        arms += [f"{value} in {_literals(table)}", _lookup(value, table)]
    for key, hop in m.GENAI_PRESENCE_HOPS:
        arms += [f"not mapContains(t.SpanAttributes, 'gen_ai.operation.name') "
                 f"and mapContains(t.SpanAttributes, {_string(key)})", _string(hop)]
    for key, hop in m.PRESENCE_HOPS:
        arms += [f"mapContains(t.SpanAttributes, {_string(key)})", _string(hop)]
    arms += ["t.ParentSpanId = '' and span_kind = 'server'", "'gateway'", "'other'"]
    return f"multiIf({', '.join(arms)})"


def _http_hop_name_sql(name: str) -> str:
    """Return the SQL of normalize._http_hop_name over the hop name `name`: a name that is an
    HTTP method alone gets its server's host (mapping.HTTP_METHOD_NAMES and the keys there)."""
    hosts = [f"nullIf({_attr(key)}, '')" for key in m.HTTP_SERVER_KEYS]
    hosts += [f"nullIf(extract({_attr(key)}, {_string(m.URL_HOST)}), '')"
              for key in m.HTTP_URL_KEYS]
    return (f"if({name} in {_literals(sorted(m.HTTP_METHOD_NAMES))}, "
            f"ifNull(concat({name}, ' ', coalesce({', '.join(hosts)})), {name}), {name})")


def _span_columns() -> dict[str, str]:
    status = "lower(replaceRegexpOne(t.StatusCode, '^STATUS_CODE_', ''))"
    columns = {
        "trace_id": "t.TraceId", "span_id": "t.SpanId",
        "parent_span_id": "nullIf(t.ParentSpanId, '')",
        "task_id": "t.TraceId", "name": "t.SpanName",
        # both spellings the exporter has written: SPAN_KIND_SERVER and Server
        "span_kind": "lower(replaceRegexpOne(t.SpanKind, '^SPAN_KIND_', ''))",
        "service_name": "nullIf(t.ServiceName, '')",
        "start_ns": "toUnixTimestamp64Nano(t.Timestamp)",
        "end_ns": "toUnixTimestamp64Nano(t.Timestamp) + toInt64(t.Duration)",
        "duration_ms": "t.Duration / 1e6", "status_code": f"if({status} = '', 'unset', {status})",
        "status_message": "nullIf(t.StatusMessage, '')",
        "hop_kind": hop_kind_sql(),
        "hop_name": _http_hop_name_sql(
            "coalesce(multiIf(hop_kind = 'model', model, hop_kind = 'tool', tool, "
            "hop_kind = 'agent', agent, null), t.SpanName)"),
        "error_type": "CAST(null, 'Nullable(String)')",
        "is_error": "CAST(status_code = 'error', 'Bool')",
        "attributes": "toJSONString(t.SpanAttributes)",
        "resource": "toJSONString(t.ResourceAttributes)", "scope": "nullIf(t.ScopeName, '')",
        "events": ("toJSONString(arrayMap((n, ts, a) -> CAST(tuple(n, toUnixTimestamp64Nano(ts), "
                   "a), 'Tuple(name String, time_ns Int64, attributes Map(String, String))'), "
                   "t.`Events.Name`, t.`Events.Timestamp`, t.`Events.Attributes`))"),
        "links": ("toJSONString(arrayMap((i, s, a) -> CAST(tuple(i, s, a), 'Tuple(trace_id "
                  "String, span_id String, attributes Map(String, String))'), "
                  "t.`Links.TraceId`, t.`Links.SpanId`, t.`Links.Attributes`))"),
        # the exporter keeps no receive time: the span's end stands in for it
        "received_ns": "end_ns",
        "parent_remote": "CAST(null, 'Nullable(Bool)')",  # the exporter drops span flags
        "call_id": "CAST(null, 'Nullable(String)')", "attempt": "CAST(null, 'Nullable(Int32)')",
    }
    return {**typed_column_sql(), **columns}  # task_id is the trace's until materialized


def span_column_sql(name: str) -> str:
    """Return the SQL of one column of `agentsla_typed_spans` over `agentsla_traces` aliased
    t (the materializer reads a few of them in its own scan of the window)."""
    return _span_columns()[name]


#: What materialization decides per span (agentsla_span_facts), over the typed spans' defaults.
_FACT_SQL = {"task_id": "coalesce(f.task_id, s.task_id)", "error_type": "f.error_type",
             "is_error": "coalesce(f.is_error, s.is_error)", "call_id": "f.call_id",
             "attempt": "f.attempt"}


def typed_spans_view_sql(database: str) -> str:
    """Return the CREATE VIEW of `agentsla_typed_spans`: the columns of `spans` from the traces
    table alone, as before materialization (task = trace, no reason, call or attempt). The
    materializer reads it: it decides those columns itself, so it joins no facts. It also
    passes on the exporter's `Timestamp` (the span start, in its sort key) as `timestamp`: a
    range on it prunes the table's parts and granules, one on `start_ns` (a function of it)
    does not."""
    columns = _span_columns()
    body = ",\n    ".join([*(f"{columns[name]} as {name}" for name in SPAN_COLUMN_NAMES),
                            "t.Timestamp as timestamp"])
    db = identifier(database)
    return (f"create or replace view {db}.agentsla_typed_spans as\nselect\n    {body}\n"
            f"from {db}.agentsla_traces as t")


def spans_view_sql(database: str) -> str:
    """Return the CREATE VIEW of `spans`: the columns of collector/store/schema.py, the typed
    spans with what materialization decided (a filter on trace_id reaches both sides)."""
    db = identifier(database)
    return (f"create or replace view {db}.spans as\nselect\n    "
            f"{_with_facts(SPAN_COLUMN_NAMES)}\nfrom {db}.agentsla_typed_spans as s\n"
            f"left any join (select * from {db}.agentsla_span_facts final) as f "
            f"{_FACTS_ON}\nsettings join_use_nulls = 1")


_FACTS_ON = "on f.trace_id = s.trace_id and f.span_id = s.span_id"


def _with_facts(names: Iterable[str]) -> str:
    """The select list of those columns of `spans`: typed spans s with their facts f."""
    return ",\n    ".join(f"{_FACT_SQL.get(name, f's.{name}')} as {name}" for name in names)


def finding_spans_backfill_sql(database: str) -> str:
    """Return the INSERT copying into agentsla_finding_spans, at version 0 (any pass's rows
    win), the judged spans (those with span facts) that started in [{lo:Int64}, {hi:Int64})
    unix ns: a range on the exporter's Timestamp, its partition and sort key, and only those
    spans' traces' facts in the join."""
    db = identifier(database)
    started = ("{time} >= fromUnixTimestamp64Nano({{lo:Int64}}) and "
               "{time} < fromUnixTimestamp64Nano({{hi:Int64}})")
    return (f"insert into {db}.agentsla_finding_spans ({', '.join(FINDING_SPAN_COLUMNS)}, "
            f"version)\nselect\n    {_with_facts(FINDING_SPAN_COLUMNS)}, 0\n"
            f"from {db}.agentsla_typed_spans as s\ninner join (select * from "
            f"{db}.agentsla_span_facts final where trace_id in (select TraceId from "
            f"{db}.agentsla_traces where {started.format(time='Timestamp')})) as f {_FACTS_ON}\n"
            f"where {started.format(time='s.timestamp')}")


def hop_spans_insert_sql(database: str, where: str) -> str:
    """Return the INSERT copying the rows of `spans` (aliased s) that match `where` into
    agentsla_hop_spans, at the version bound as {version:UInt64} (a pass writes the same rows
    from what it read and decided: materializer._judged)."""
    db = identifier(database)
    values = ", ".join(PROVIDER_SQL if c == "provider" else f"s.{c}" for c in HOP_SPAN_COLUMNS)
    return (f"insert into {db}.agentsla_hop_spans ({', '.join(HOP_SPAN_COLUMNS)}, version) "
            f"select {values}, {{version:UInt64}} from {db}.spans as s where {where}")
