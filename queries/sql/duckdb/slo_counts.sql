-- queries.slo: per window ending at $end_ns and task type, the finished tasks (cancelled
-- excluded) and how many succeeded or were degraded; windows are lengths in ns. Each window
-- reads whole hours [hour_cut_ns, $hr_hi) from the hour tier, whole minutes from cut_ns on
-- outside those hours from task_minutes (only the minutes in minutes_ns: no window reads the
-- others), and the rest from `tasks` (queries/slo.py).
with windows as (
    select unnest($windows_ns::bigint[]) as window_ns, unnest($cuts_ns::bigint[]) as cut_ns,
        unnest($hour_cuts_ns::bigint[]) as hour_cut_ns
),
rolled as (
    select 'hour' as tier, minute_ns, task_type, sum(finished) as total,
        sum(success) as success, sum(degraded) as degraded
    from task_minutes_hourly
    where minute_ns >= $hr_lo and minute_ns < $hr_hi
      and ($task_type is null or task_type = $task_type)
    group by all
    union all
    select 'minute', minute_ns, task_type, sum(finished), sum(success), sum(degraded)
    from task_minutes
    where minute_ns >= $roll_lo and minute_ns < $roll_hi
      and list_contains($minutes_ns::bigint[], minute_ns)
      and ($task_type is null or task_type = $task_type)
    group by all
),
raw as (
    select task_type, end_ns, 1 as total, (outcome = 'success')::integer as success,
        (outcome = 'degraded')::integer as degraded
    from tasks
    where finished and outcome <> 'cancelled'
      and end_ns >= $end_ns - $longest_ns and end_ns < $end_ns
      and (end_ns < $roll_lo_max or end_ns >= $roll_hi)
      and ($task_type is null or task_type = $task_type)
),
parts as (
    select w.window_ns, r.task_type, r.total, r.success, r.degraded
    from windows w
    join rolled r on case when r.tier = 'hour' then r.minute_ns >= w.hour_cut_ns
                          else r.minute_ns >= w.cut_ns
                               and (r.minute_ns < w.hour_cut_ns or r.minute_ns >= $hr_hi) end
    union all
    select w.window_ns, r.task_type, r.total, r.success, r.degraded
    from windows w
    join raw r on r.end_ns >= $end_ns - w.window_ns
              and (r.end_ns < w.cut_ns or r.end_ns >= $roll_hi)
)
select window_ns, task_type, sum(success) as success, sum(degraded) as degraded,
    sum(total) as total
from parts
group by window_ns, task_type
having sum(total) > 0
