-- queries.sla.sla_totals: how did the tasks of the window fare, all together? One row.
with {{raw_tasks}}, {{task_rows}}, {{task_hist}},
grouped as (
    select 1 as grp, *
    from task_rows
),
grouped_hist as (
    select 1 as grp, *
    from task_hist
),
{{sla_grouped}}
select groups.grp as grp, sla.* except (grp)
from (select 1 as grp) as groups
left join sla on sla.grp = groups.grp
settings join_use_nulls = 1
