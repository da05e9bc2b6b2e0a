-- snippet: evidence of findings/rejections for the tasks that finished in [lo_ns, hi_ns), per
-- minute of their end: all finished tasks (the row without a hop), and the rejected ones per
-- hop (first failing hop, else the root); DuckDB's twin
with finished as (
    select task_id, outcome, end_ns, intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
           coalesce(ffh_kind, 'gateway') as blamed_kind,
           coalesce(ffh_name, root_name) as blamed_name,
           (toFloat64(end_ns), task_id, assumeNotNull(coalesce(ffh_span_id, root_span_id))) as ex
    from {{finding_tasks}}
    where finished and end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
)
select
    minute_ns, CAST(NULL, 'Nullable(String)') as hop_kind,
    CAST(NULL, 'Nullable(String)') as hop_name, CAST(NULL, 'Nullable(String)') as task_type,
    CAST(NULL, 'Nullable(String)') as label, CAST([], 'Array(String)') as task_ids,
    map('finished', toFloat64(count())) as n,
    CAST(map(), 'Map(String, Array(Float64))') as vals,
    CAST([], 'Array(Tuple(Float64, String, String))') as examples,
    CAST(NULL, 'Nullable(Int64)') as first_ns,
    CAST(NULL, 'Nullable(Int64)') as last_ns
from finished
group by minute_ns
union all
select
    minute_ns, blamed_kind, blamed_name, NULL, NULL, [],
    map('rejected', toFloat64(count())),
    map(),
    {{evidence_top5}},
    min(end_ns),
    max(end_ns)
from finished
where outcome = 'rejected'
group by minute_ns, blamed_kind, blamed_name
