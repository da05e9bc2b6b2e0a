-- queries.tasks.list_tasks: which tasks match the filters in the window, newest first?
with {{window_tasks}}
select *
from window_tasks
where ({outcome:Nullable(String)} is null or outcome = {outcome:Nullable(String)})
  and ({ffh_kind:Nullable(String)} is null or ffh_kind = {ffh_kind:Nullable(String)})
  and ({ffh_name:Nullable(String)} is null or ffh_name = {ffh_name:Nullable(String)})
order by coalesce(end_ns, start_ns) desc, task_id
limit {limit:UInt64}
