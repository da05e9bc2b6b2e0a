-- queries.spans.first_failing_span_ns: the earliest end of a failing span in a scope (null
-- when none: minOrNull, as min over no rows is 0 in ClickHouse), over the materialized
-- spans (hop_spans: a reason is known once materialized)
select minOrNull(s.end_ns) as first_ns
from hop_spans as s
where s.is_error
  and s.end_ns >= {start_ns:Int64} and s.end_ns < {end_ns:Int64}
  and ({hop_kind:Nullable(String)} is null or s.hop_kind = {hop_kind:Nullable(String)})
  and ({hop_name:Nullable(String)} is null or s.hop_name = {hop_name:Nullable(String)})
  and s.task_id in (select task_id from tasks where true
      and ({task_type:Nullable(String)} is null or task_type = {task_type:Nullable(String)})
      and ({tenant_id:Nullable(String)} is null or tenant_id = {tenant_id:Nullable(String)}))
