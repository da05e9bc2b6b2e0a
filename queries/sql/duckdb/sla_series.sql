-- queries.sla.sla_series: how did the rates move, bucket by bucket of $step_ns?
with {{sla_window_tasks}},
grouped as (
    -- finished tasks fall in the bucket holding their end, tasks in progress in their start's
    select $start_ns + ((case when finished then end_ns else start_ns end) - $start_ns)
               // $step_ns * $step_ns as grp,
        *
    from window_tasks
),
{{sla_counted}},
groups as (
    -- every bucket, empty ones included
    select range as grp
    from range($start_ns, $end_ns, $step_ns)
)
select groups.grp, counted.* exclude (grp)
from groups
left join counted on counted.grp = groups.grp
order by groups.grp
