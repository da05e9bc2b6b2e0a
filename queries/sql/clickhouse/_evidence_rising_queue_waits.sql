-- snippet: evidence of findings/rising_queue_waits: the queue waits that ended in
-- [lo_ns, hi_ns), one row each, with their task's budget (tasks read among those that started
-- from reach_ns). DuckDB keeps them per minute as histograms for its stored evidence;
-- nothing is stored here, so they stay rows.
select s.task_id as task_id, s.span_id as span_id, s.hop_kind as hop_kind,
       s.hop_name as hop_name, s.duration_ms as duration_ms, s.end_ns as end_ns,
       t.budget_total_ms as budget_total_ms
from {{finding_spans}} as s
left join (select task_id, budget_total_ms from {{finding_tasks}}
           where start_ns >= {reach_ns:Int64} and start_ns < {hi_ns:Int64}) as t
       on t.task_id = s.task_id
where s.end_ns >= {lo_ns:Int64} and s.end_ns < {hi_ns:Int64}
  and s.hop_kind = 'queue'
settings join_use_nulls = 1
