-- The clickhouseexporter's trace-id lookup, as it creates it next to its traces table (either
-- variant) when it creates its schema: per trace id the first and last span start (seconds),
-- kept by a materialized view at each insert (several rows a trace: one per insert block).
-- Written after its published templates (opentelemetry-collector-contrib, commit 2bf6b9e1f8c8,
-- the `_trace_id_ts` table and `_trace_id_ts_mv` view). agentsla creates it only in a chdb
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
