-- queries.findings.retry_amplification.retried_timeouts: which hops retried attempts that had timed out?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_retried_timeouts.sql)
with retried as (
    select
        hop_kind, hop_name,
        sum(n['retried_timeouts'])::BIGINT as retried_timeouts,
        len(list_distinct(flatten(list(task_ids))))::BIGINT as tasks,
        max(n['timeout_ms']) as timeout_ms,
        sum(n['time_ms']) as time_in_retried_timeouts_ms,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    group by hop_kind, hop_name
),
examples as ({{evidence_examples}})
select
    r.hop_kind, r.hop_name,
    r.retried_timeouts,
    r.tasks,
    r.timeout_ms,
    r.time_in_retried_timeouts_ms,
    e.examples,
    r.first_ns,
    r.last_ns
from retried r
left join examples e on e.hop_kind is not distinct from r.hop_kind
                    and e.hop_name is not distinct from r.hop_name
where r.retried_timeouts >= $retried_timeouts_min
order by retried_timeouts desc
