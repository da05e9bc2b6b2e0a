-- queries.findings.rate_limit_masking.absorbed_rate_limits: which hops had 429s that retries absorbed, and what did it cost in latency?
with {{attempts}},
calls as (
    select
        task_id, hop_kind, hop_name,
        count(*) filter (where error_type = 'rate_limited') as rate_limited,
        not arg_max(coalesce(is_error, false), attempt) as succeeded,
        (max(end_ns) - min(start_ns)) / 1e6 as latency_ms,
        arg_max(span_id, attempt) as last_span_id,
        max(end_ns) as end_ns
    from attempts
    group by trace_id, parent_span_id, hop_kind, hop_name, call_id, task_id
),
judged as (
    select *, rate_limited > 0 and succeeded as masked
    from calls
)
select
    j.hop_kind, j.hop_name,
    count(*) as calls,
    count(*) filter (where j.masked) as masked_calls,
    sum(j.rate_limited) filter (where j.masked) as absorbed_429s,
    quantile_cont(j.latency_ms, 0.99) filter (where j.masked) as masked_p99_ms,
    quantile_cont(j.latency_ms, 0.99) filter (where j.rate_limited = 0) as clean_p99_ms,
    avg(case when k.outcome in ('success', 'degraded') then 1.0 else 0.0 end)
        filter (where j.masked) as masked_task_success,
    arg_max({'task_id': j.task_id, 'span_id': j.last_span_id}, j.latency_ms, 5)
        filter (where j.masked) as examples,
    min(j.end_ns) filter (where j.masked) as first_ns,
    max(j.end_ns) filter (where j.masked) as last_ns
from judged j
left join tasks k on k.task_id = j.task_id
group by j.hop_kind, j.hop_name
having sum(j.rate_limited) filter (where j.masked) >= $rate_limit_min_absorbed
   and count(*) filter (where j.masked) >= $rate_limit_min_share * count(*)
order by absorbed_429s desc
