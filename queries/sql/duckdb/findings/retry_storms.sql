-- queries.findings.retry_amplification.retry_storms: which hops had minutes where most attempts were retries?
with {{attempts}},
minutes as (
    select
        hop_kind, hop_name,
        end_ns // 60000000000 as minute,
        count(*) as attempts,
        count(*) filter (where attempt > 0) as retries,
        arg_max({'task_id': task_id, 'span_id': span_id}, attempt, 5) as examples,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from attempts
    group by hop_kind, hop_name, minute
),
storms as (
    select *, retries / attempts as retry_share
    from minutes
    where retries >= $retry_storm_min_retries
      and retries >= $retry_storm_share * attempts
)
select
    hop_kind, hop_name,
    count(*) as storm_minutes,
    max(retries) as peak_retries_per_minute,
    max(retry_share) as peak_retry_share,
    sum(retries) as retries,
    arg_max(examples, retries) as examples,
    min(first_ns) as first_ns,
    max(last_ns) as last_ns
from storms
group by hop_kind, hop_name
order by peak_retries_per_minute desc
