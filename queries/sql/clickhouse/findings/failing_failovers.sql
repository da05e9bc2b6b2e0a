-- queries.findings.false_failover.failing_failovers: which backups that traffic failed over to then failed themselves?
-- (the verdict over the window's evidence, _evidence_failing_failovers.sql, asked inline)
with evidence_rows as materialized ({{evidence_failing_failovers}}),
backups as (
    select
        hop_kind, hop_name,
        toInt64(sum(n['failovers'])) as n_failovers,
        toInt64(sum(n['failed'])) as n_failed,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    group by hop_kind, hop_name
),
tallies as (
    -- the minutes' counts per failure type and per primary hop, added up
    {{evidence_tallies}}
),
modes as (
    -- the most common of each (the greatest of equals)
    select
        hop_kind, hop_name,
        argMaxIf(tuple(value), (times, value), what = 'failure_type').1 as mode_failure,
        countIf(what = 'failure_type') > 0 as has_failure,
        argMaxIf(tuple(value), (times, value), what = 'primary').1 as mode_primary,
        countIf(what = 'primary') > 0 as has_primary
    from tallies
    group by hop_kind, hop_name
)
select
    b.hop_kind as hop_kind, b.hop_name as hop_name,
    b.n_failovers as failovers,
    b.n_failed as failed_failovers,
    b.n_failed / b.n_failovers as failure_share,
    if(m.has_failure, m.mode_failure, NULL) as failure_type,
    if(m.has_primary, m.mode_primary, NULL) as primary_hop,
    b.top5 as examples,
    b.first_ns as first_ns,
    b.last_ns as last_ns
from backups as b
left join modes as m on m.hop_kind <=> b.hop_kind and m.hop_name <=> b.hop_name
where b.n_failed >= {false_failover_min_failures:Float64}
  and b.n_failed >= {false_failover_min_share:Float64} * b.n_failovers
order by failed_failovers desc
settings join_use_nulls = 1, enable_materialized_cte = 1
