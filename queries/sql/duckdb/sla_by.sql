-- queries.sla.sla_by: how did the tasks fare per {{dimension}} (a whitelisted column)?
with {{sla_window_tasks}},
grouped as (
    select {{dimension}} as grp, *
    from window_tasks
),
{{sla_counted}}
select *
from counted
order by finished desc, in_progress desc, grp nulls last
