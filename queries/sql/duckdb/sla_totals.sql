-- queries.sla.sla_totals: how did the tasks of the window fare, all together? One row.
with {{sla_window_tasks}},
grouped as (
    select 1 as grp, *
    from window_tasks
),
{{sla_counted}}
select groups.grp, counted.* exclude (grp)
from (select 1 as grp) as groups
left join counted on counted.grp = groups.grp
