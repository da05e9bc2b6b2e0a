-- snippet: evidence of findings/rejections: the tasks that finished in [lo_ns, hi_ns), one
-- row each, with the hop a rejection is blamed on (first failing hop, else the root) and the
-- span of its example (DuckDB adds them up per minute for its stored evidence)
select task_id, outcome, end_ns,
       coalesce(ffh_kind, 'gateway') as hop_kind,
       coalesce(ffh_name, root_name) as hop_name,
       coalesce(ffh_span_id, root_span_id) as example_span_id
from {{finding_tasks}}
where finished and end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
