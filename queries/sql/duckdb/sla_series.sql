-- queries.sla.sla_series: how did the rates move, bucket by bucket of $step_ns?
-- (finished tasks fall in the bucket holding their end, tasks in progress in their start's)
with {{raw_tasks}}, {{task_rows}}, {{task_hist}},
grouped as (
    select $start_ns + (t_ns - $start_ns) // $step_ns * $step_ns as grp, *
    from task_rows
),
grouped_hist as (
    select $start_ns + (t_ns - $start_ns) // $step_ns * $step_ns as grp, *
    from task_hist
),
{{sla_counted}},
groups as (
    -- every bucket, empty ones included
    select range as grp
    from range($start_ns, $end_ns, $step_ns)
)
select groups.grp, sla.* exclude (grp)
from groups
left join sla on sla.grp = groups.grp
order by groups.grp
