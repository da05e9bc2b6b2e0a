-- queries.findings.false_failover.failing_failovers: which backups that traffic failed over to then failed themselves?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_failing_failovers.sql)
with backups as (
    select
        hop_kind, hop_name,
        sum(n['failovers'])::BIGINT as failovers,
        sum(n['failed'])::BIGINT as failed_failovers,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
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
        arg_max(value, {'n': times, 'v': value}) filter (where what = 'failure_type')
            as failure_type,
        arg_max(value, {'n': times, 'v': value}) filter (where what = 'primary') as primary_hop
    from tallies
    group by hop_kind, hop_name
),
examples as ({{evidence_examples}})
select
    b.hop_kind, b.hop_name,
    b.failovers,
    b.failed_failovers,
    b.failed_failovers / b.failovers as failure_share,
    m.failure_type,
    m.primary_hop,
    e.examples,
    b.first_ns,
    b.last_ns
from backups b
left join modes m on m.hop_kind is not distinct from b.hop_kind
                 and m.hop_name is not distinct from b.hop_name
left join examples e on e.hop_kind is not distinct from b.hop_kind
                    and e.hop_name is not distinct from b.hop_name
where b.failed_failovers >= $false_failover_min_failures
  and b.failed_failovers >= $false_failover_min_share * b.failovers
order by failed_failovers desc
