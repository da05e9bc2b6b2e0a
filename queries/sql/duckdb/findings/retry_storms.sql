-- queries.findings.retry_amplification.retry_storms: which hops had minutes where most attempts were retries?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_retry_storms.sql)
with minutes as (
    select
        minute_ns, hop_kind, hop_name,
        sum(n['attempts']) as attempts,
        sum(n['retries'])::BIGINT as retries,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    group by minute_ns, hop_kind, hop_name
),
storms as (
    select *, retries / attempts as retry_share
    from minutes
    where retries >= $retry_storm_min_retries
      and retries >= $retry_storm_share * attempts
),
examples as (
    -- each storm minute's best five (highest attempt number first)
    select
        minute_ns, hop_kind, hop_name,
        arg_max({'task_id': e.task_id, 'span_id': e.span_id},
                {'r': e.rank, 't': e.task_id, 's': e.span_id}, 5) as examples
    from (select minute_ns, hop_kind, hop_name, unnest(examples) as e from temp.evidence_rows)
    group by all
)
select
    s.hop_kind, s.hop_name,
    count(*) as storm_minutes,
    max(s.retries) as peak_retries_per_minute,
    max(s.retry_share) as peak_retry_share,
    sum(s.retries) as retries,
    -- the examples of the minute with the most retries (the latest of equals)
    arg_max(e.examples, {'r': s.retries, 'm': s.minute_ns}) as examples,
    min(s.first_ns) as first_ns,
    max(s.last_ns) as last_ns
from storms s
left join examples e on e.minute_ns = s.minute_ns
                    and e.hop_kind is not distinct from s.hop_kind
                    and e.hop_name is not distinct from s.hop_name
group by s.hop_kind, s.hop_name
order by peak_retries_per_minute desc
