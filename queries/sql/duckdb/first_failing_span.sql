-- queries.spans.first_failing_span_ns: the earliest end of a failing span in a scope
select min(s.end_ns) as first_ns
from spans s
join tasks t on t.task_id = s.task_id
where s.is_error
  and s.end_ns >= $start_ns and s.end_ns < $end_ns
  and ($task_type is null or t.task_type = $task_type)
  and ($tenant_id is null or t.tenant_id = $tenant_id)
  and ($hop_kind is null or s.hop_kind = $hop_kind)
  and ($hop_name is null or s.hop_name = $hop_name)
