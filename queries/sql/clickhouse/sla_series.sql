-- queries.sla.sla_series: how did the rates move, bucket by bucket of step_ns? (finished tasks
-- fall in the bucket holding their end, tasks in progress in their start's; every bucket is a
-- row, empty ones included). Over the tasks table: roll_lo/roll_hi are not used.
with {{window_tasks}},
grouped as (
    select {start_ns:Int64} + intDiv(if(finished, end_ns, start_ns) - {start_ns:Int64},
                                     {step_ns:Int64}) * {step_ns:Int64} as grp, *
    from window_tasks
),
{{sla_grouped}}
select groups.grp as grp, sla.* except (grp)
from (select arrayJoin(range({start_ns:Int64}, {end_ns:Int64}, {step_ns:Int64})) as grp)
    as groups
left join sla on sla.grp = groups.grp
order by grp
settings join_use_nulls = 1
