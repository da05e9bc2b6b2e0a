-- queries.sla.sla_series: how did the rates move, bucket by bucket of step_ns? (finished tasks
-- fall in the bucket holding their end, tasks in progress in their start's; every bucket is a
-- row, empty ones included). Whole minutes from the rollups where every bucket holds whole
-- minutes (queries/rollup.py split_series), the rest from tasks.
with {{raw_tasks}}, {{task_rows}}, {{task_hist}},
grouped as (
    select {start_ns:Int64} + intDiv(t_ns - {start_ns:Int64}, {step_ns:Int64}) * {step_ns:Int64}
        as grp, *
    from task_rows
),
grouped_hist as (
    select {start_ns:Int64} + intDiv(t_ns - {start_ns:Int64}, {step_ns:Int64}) * {step_ns:Int64}
        as grp, *
    from task_hist
),
{{sla_grouped}}
select groups.grp as grp, sla.* except (grp)
from (select arrayJoin(range({start_ns:Int64}, {end_ns:Int64}, {step_ns:Int64})) as grp)
    as groups
left join sla on sla.grp = groups.grp
order by grp
settings join_use_nulls = 1
