-- queries.findings.retry_amplification.retried_timeouts: which hops retried attempts that had timed out?
-- (the verdict over the window's evidence, _evidence_retried_timeouts.sql, asked inline)
with evidence_rows as materialized ({{evidence_retried_timeouts}}),
retried as (
    select
        hop_kind, hop_name,
        toInt64(sum(n['retried_timeouts'])) as n_retried,
        toInt64(uniqExactArray(task_ids)) as n_tasks,
        max(n['timeout_ms']) as max_timeout_ms,
        sum(n['time_ms']) as time_ms,
        minOrNull(first_ns) as first_ns,
        maxOrNull(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    group by hop_kind, hop_name
)
select
    r.hop_kind as hop_kind, r.hop_name as hop_name,
    r.n_retried as retried_timeouts,
    r.n_tasks as tasks,
    r.max_timeout_ms as timeout_ms,
    r.time_ms as time_in_retried_timeouts_ms,
    r.top5 as examples,
    r.first_ns as first_ns,
    r.last_ns as last_ns
from retried as r
where r.n_retried >= {retried_timeouts_min:Float64}
order by retried_timeouts desc
settings join_use_nulls = 1, enable_materialized_cte = 1
