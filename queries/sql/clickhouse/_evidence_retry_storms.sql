-- snippet: evidence of findings/retry_storms for the attempts that ended in [lo_ns, hi_ns),
-- per minute of their end and hop: a storm is judged per minute, so every minute's attempts
-- and retries are kept (attempt numbers as the snippet `attempts` reads them)
with ended as (
    select task_id, span_id, hop_kind, hop_name, end_ns,
           coalesce(attempt, retry_attempt, 0) as nth,  -- retry_attempt: not materialized yet
           (toFloat64(nth), task_id, span_id) as ex
    from {{finding_spans}}
    where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
      and parent_span_id is not null
)
select
    intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
    hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
    CAST(NULL, 'Nullable(String)') as label,
    CAST([], 'Array(String)') as task_ids,
    CAST(map(), 'Map(String, Array(Float64))') as vals,
    map('attempts', toFloat64(count()), 'retries', toFloat64(countIf(nth > 0))) as n,
    {{evidence_top5}} as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from ended
group by minute_ns, hop_kind, hop_name
