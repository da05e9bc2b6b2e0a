-- queries.root_causes.root_cause_series: the first failing hops, bucket by bucket of step_ns
-- (a blamed task falls in the bucket holding its end). Whole minutes from the rollups where
-- every bucket holds whole minutes (queries/rollup.py split_series), the rest from tasks.
with {{raw_tasks}}, {{cause_rows}},
per_cause as (
    select
        {start_ns:Int64} + intDiv(c.t_ns - {start_ns:Int64}, {step_ns:Int64}) * {step_ns:Int64}
            as bucket_ns,
        c.ffh_kind as ffh_kind, c.ffh_name as ffh_name, c.ffh_reason as ffh_reason,
        sum(c.tasks) as tasks,
        sum(c.lost_us) / 1e6 as seconds_lost
    from cause_rows as c
    group by bucket_ns, c.ffh_kind, c.ffh_name, c.ffh_reason
    having sum(c.tasks) > 0
)
select *, tasks / sum(tasks) over (partition by bucket_ns) as share
from per_cause
order by bucket_ns, tasks desc, ffh_kind, ffh_name, ffh_reason
