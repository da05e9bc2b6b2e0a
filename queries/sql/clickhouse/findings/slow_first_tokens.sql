-- queries.findings.stream_stall.slow_first_tokens: which streamed models were slow to send their first token?
-- (the verdict over the window's evidence, _evidence_slow_first_tokens.sql, asked inline)
with evidence_rows as materialized ({{evidence_slow_first_tokens}}),
streamed as (
    select
        hop_kind, hop_name,
        toInt64(sum(n['streamed_calls'])) as n_streamed,
        toInt64(sum(n['stalled_calls'])) as n_stalled,
        max(n['ttft_max_ms']) as ttft_max,
        toInt64(sum(n['stalled_then_timed_out'])) as n_timed_out,
        minOrNull(first_ns) as first_ns,
        maxOrNull(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    group by hop_kind, hop_name
    having n_stalled >= {stream_stall_min_calls:Float64}
       and n_stalled >= {stream_stall_min_share:Float64} * n_streamed
),
hist as (
    -- the streamed calls' ttft histogram of those hops, for their p50 and p95 (within 1.1 %,
    -- as DuckDB's stored evidence keeps it)
    select (hop_kind, hop_name) as grp, 'ttft_ms' as metric, {{hist_bucket}} as bucket,
           count() as count
    from (select hop_kind, hop_name, greatest(arrayJoin(vals['ttft_ms']), 0) as value
          from evidence_rows
          where (hop_kind, hop_name) in (select hop_kind, hop_name from streamed))
    group by grp, metric, bucket
),
probs as (
    select 'ttft_ms' as p_metric, 'p50' as label, 0.5 as q
    union all select 'ttft_ms', 'p95', 0.95
),
{{hist_quantiles}},
valued as (
    -- a hop's quantiles side by side: `quantiles` read once (ClickHouse analyses a CTE again
    -- at each reference, materialized or not)
    select grp,
           maxIfOrNull(value, label = 'p50') as p50,
           maxIfOrNull(value, label = 'p95') as p95
    from quantiles
    group by grp
)
select
    s.hop_kind as hop_kind, s.hop_name as hop_name,
    s.n_streamed as streamed_calls,
    s.n_stalled as stalled_calls,
    s.n_stalled / s.n_streamed as stalled_share,
    q.p50 as ttft_p50_ms,
    q.p95 as ttft_p95_ms,
    s.ttft_max as ttft_max_ms,
    s.n_timed_out as stalled_then_timed_out,
    s.top5 as examples,
    s.first_ns as first_ns,
    s.last_ns as last_ns
from streamed as s
left join valued as q on q.grp = (s.hop_kind, s.hop_name)
order by stalled_calls desc
settings join_use_nulls = 1, enable_materialized_cte = 1
