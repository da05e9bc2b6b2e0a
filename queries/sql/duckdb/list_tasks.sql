-- queries.tasks.list_tasks: which tasks match the filters in the window, newest first?
with window_tasks as (
    -- finished tasks by end, tasks in progress by start: two disjoint range reads rather than
    -- one OR, so DuckDB's zone maps on end_ns and start_ns skip the row groups out of range
    select *
    from tasks
    where finished and end_ns >= $start_ns and end_ns < $end_ns
    union all
    select *
    from tasks
    where not finished and start_ns >= $start_ns and start_ns < $end_ns
)
select *
from window_tasks
where ($outcome is null or outcome = $outcome)
{{task_filters}}
  and ($ffh_kind is null or ffh_kind = $ffh_kind)
  and ($ffh_name is null or ffh_name = $ffh_name)
order by coalesce(end_ns, start_ns) desc, task_id
limit $limit
