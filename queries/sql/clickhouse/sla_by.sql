-- queries.sla.sla_by: how did the tasks fare per {{dimension}} (a whitelisted column)?
with {{raw_tasks}}, {{task_rows}}, {{task_hist}},
grouped as (
    select {{dimension}} as grp, *
    from task_rows
),
grouped_hist as (
    select {{dimension}} as grp, *
    from task_hist
),
{{sla_grouped}}
select *
from sla
order by finished desc, in_progress desc, grp nulls last
