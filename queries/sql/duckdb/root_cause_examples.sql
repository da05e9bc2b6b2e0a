-- queries.root_causes: the newest blamed tasks (up to 5) of each first failing hop among the
-- tasks that ended in [$start_ns, $end_ns)
select ffh_kind, ffh_name, ffh_reason,
    list(task_id order by end_ns desc, task_id)[1:5] as example_task_ids
from tasks
where finished and outcome in ('failed', 'degraded', 'budget_exhausted', 'rejected')
  and end_ns >= $start_ns and end_ns < $end_ns
{{task_filters}}
group by ffh_kind, ffh_name, ffh_reason
