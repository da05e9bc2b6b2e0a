-- queries.slo: per window ending at end_ns and task type, the finished tasks (cancelled
-- excluded) and how many succeeded or were degraded; windows are lengths in ns. Each window
-- reads whole hours [hour_cut_ns, hr_hi) from the hour tier, whole minutes from cut_ns on
-- outside those hours from task_minutes (only the minutes in minutes_ns: no window reads the
-- others; both summed over shards), and the rest from `tasks` (queries/slo.py; DuckDB's
-- slo_counts.sql).
with windows as (
    select w.1 as window_ns, w.2 as cut_ns, w.3 as hour_cut_ns
    from system.one
    array join arrayZip({windows_ns:Array(Int64)}, {cuts_ns:Array(Int64)},
                        {hour_cuts_ns:Array(Int64)}) as w
),
rolled as (
    -- columns read as m.* (unqualified names would be the aliases)
    select 'hour' as tier, m.minute_ns as minute_ns, m.task_type as task_type,
        sum(m.finished) as total, sum(m.success) as success, sum(m.degraded) as degraded
    from task_minutes_hourly as m
    where m.minute_ns >= {hr_lo:Int64} and m.minute_ns < {hr_hi:Int64}
      and ({task_type:Nullable(String)} is null or m.task_type = {task_type:Nullable(String)})
    group by m.minute_ns, m.task_type
    union all
    select 'minute', m.minute_ns, m.task_type, sum(m.finished), sum(m.success),
        sum(m.degraded)
    from task_minutes as m
    where m.minute_ns >= {roll_lo:Int64} and m.minute_ns < {roll_hi:Int64}
      and has({minutes_ns:Array(Int64)}, m.minute_ns)
      and ({task_type:Nullable(String)} is null or m.task_type = {task_type:Nullable(String)})
    group by m.minute_ns, m.task_type
),
raw as (
    -- the windows' edges outside their rollup minutes: [end - window, cut) and [roll_hi, end),
    -- each within one minute when the rollups are read, so they are minutes of the tasks by
    -- minute (as _raw_tasks.sql); over raw rows only, a plain scan. One of the two branches
    -- has a constant false condition, which ClickHouse skips.
    select task_type, end_ns, 1 as total, toInt64(outcome = 'success') as success,
        toInt64(outcome = 'degraded') as degraded
    from minute_tasks
    where {roll_lo:Int64} < {roll_hi:Int64}
      and minute_ns in arrayConcat(
        arrayMap(w -> intDiv({end_ns:Int64} - w, 60000000000) * 60000000000,
                 {windows_ns:Array(Int64)}),
        [intDiv({end_ns:Int64}, 60000000000) * 60000000000])
      and {{slo_raw_edges}}
    union all
    select task_type, end_ns, 1, toInt64(outcome = 'success'), toInt64(outcome = 'degraded')
    from tasks
    where {roll_lo:Int64} >= {roll_hi:Int64}
      and {{slo_raw_edges}}
),
parts as (
    select w.window_ns as window_ns, r.task_type as task_type, r.total as total,
        r.success as success, r.degraded as degraded
    from windows as w
    cross join rolled as r
    where if(r.tier = 'hour', r.minute_ns >= w.hour_cut_ns,
             r.minute_ns >= w.cut_ns
             and (r.minute_ns < w.hour_cut_ns or r.minute_ns >= {hr_hi:Int64}))
    union all
    select w.window_ns, r.task_type, r.total, r.success, r.degraded
    from windows as w
    cross join raw as r
    where r.end_ns >= {end_ns:Int64} - w.window_ns
      and (r.end_ns < w.cut_ns or r.end_ns >= {roll_hi:Int64})
)
select p.window_ns as window_ns, p.task_type as task_type, sum(p.success) as success,
    sum(p.degraded) as degraded, sum(p.total) as total
from parts as p
group by p.window_ns, p.task_type
having sum(p.total) > 0
