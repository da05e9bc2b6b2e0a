-- queries.findings.retry_amplification.attempts_per_call: which hops average too many attempts per logical call?
-- (the verdict over the window's evidence, _evidence_attempts_per_call.sql, asked inline:
-- ClickHouse stores no evidence per minute)
with evidence_rows as materialized ({{evidence_attempts_per_call}}),
calls as (
    select
        hop_kind, hop_name,
        toInt64(sum(n['calls'])) as n_calls,
        toInt64(sum(n['attempts'])) as n_attempts,
        toInt64(max(n['max_attempts'])) as max_attempts,
        toInt64(sum(n['retried_calls'])) as retried_calls,
        minOrNull(first_ns) as first_ns,
        maxOrNull(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    group by hop_kind, hop_name
)
select
    c.hop_kind as hop_kind, c.hop_name as hop_name,
    c.n_calls as calls,
    c.n_attempts as attempts,
    c.n_attempts / c.n_calls as attempts_per_call,
    c.max_attempts as max_attempts,
    c.retried_calls as retried_calls,
    c.top5 as examples,
    c.first_ns as first_ns,
    c.last_ns as last_ns
from calls as c
where c.n_calls >= {retry_min_calls:Float64}
  and c.n_attempts / c.n_calls >= {retry_attempts_per_call:Float64}
order by attempts_per_call desc
settings join_use_nulls = 1, enable_materialized_cte = 1
