-- The clickhouseexporter's trace-id lookup, as it creates it next to its traces table (either
-- variant) when it creates its schema: per trace id the first and last span start (seconds),
-- kept by a materialized view at each insert (several rows a trace: one per insert block).
-- As its published templates create them (opentelemetry-collector-contrib: the table as
-- traces_id_ts_lookup_table.sql at commit 61540ced55e9, the view as traces_id_ts_lookup_mv.sql;
-- newer templates type Start/End as SimpleAggregateFunction(min/max, DateTime), which
-- agentsla's min/max read serves alike: docs/scale-out.md). agentsla creates it only in a chdb
-- store; the materializer bounds its read of a pass's traces by it when it exists.
create table if not exists $database.${table}_trace_id_ts (
    TraceId String CODEC(ZSTD(1)),
    Start DateTime CODEC(Delta, ZSTD(1)),
    End DateTime CODEC(Delta, ZSTD(1)),
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.01) GRANULARITY 1
) ENGINE = MergeTree
PARTITION BY toDate(Start)
ORDER BY (TraceId, Start)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1;

create materialized view if not exists $database.${table}_trace_id_ts_mv
to $database.${table}_trace_id_ts
as select
    TraceId,
    min(Timestamp) as Start,
    max(Timestamp) as End
from $database.$table
where TraceId != ''
group by TraceId;
