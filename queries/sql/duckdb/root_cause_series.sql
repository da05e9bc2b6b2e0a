-- queries.root_causes.root_cause_series: the first failing hops, bucket by bucket of $step_ns
with {{raw_blamed}}, {{cause_rows}},
per_cause as (
    select $start_ns + (t_ns - $start_ns) // $step_ns * $step_ns as bucket_ns,
        ffh_kind, ffh_name, ffh_reason, sum(tasks) as tasks, sum(lost_us) / 1e6 as seconds_lost
    from cause_rows
    group by all
    having sum(tasks) > 0
)
select *, tasks / sum(tasks) over (partition by bucket_ns) as share
from per_cause
order by bucket_ns, tasks desc, ffh_kind, ffh_name, ffh_reason
