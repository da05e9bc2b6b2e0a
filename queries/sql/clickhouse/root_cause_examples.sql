-- queries.root_causes: the newest blamed tasks (up to 5) of each first failing hop among the
-- tasks that ended in [start_ns, end_ns)
select ffh_kind, ffh_name, ffh_reason,
    arraySlice(arrayMap(p -> p.2, arraySort(p -> (-p.1, p.2), groupArray((end_ns, task_id)))),
        1, 5)
        as example_task_ids
from tasks
where finished and outcome in ('failed', 'degraded', 'budget_exhausted', 'rejected')
  and end_ns >= {start_ns:Int64} and end_ns < {end_ns:Int64}
{{task_filters}}
group by ffh_kind, ffh_name, ffh_reason
