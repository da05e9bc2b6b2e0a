-- queries.sla.sla_by: how did the tasks fare per {{dimension}} (a whitelisted column)?
with {{window_tasks}},
grouped as (
    select {{dimension}} as grp, *
    from window_tasks
),
{{sla_grouped}}
select *
from sla
order by finished desc, in_progress desc, grp nulls last
