-- snippet: evidence of findings/loop_limit_errors for the spans with error_type loop_limit that
-- ended in [lo_ns, hi_ns), per minute of that end and hop
select
    intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
    hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
    CAST(NULL, 'Nullable(String)') as label,
    CAST(map(), 'Map(String, Array(Float64))') as vals,
    map('loop_limit_errors', toFloat64(count()), 'loop_limit', toFloat64(max(loop_limit))) as n,
    groupUniqArray(task_id) as task_ids,
    arraySlice(arrayReverseSort(groupArray((toFloat64(end_ns), task_id, span_id))), 1, 5)
        as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from {{finding_spans}}
where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
  and error_type = 'loop_limit'
group by minute_ns, hop_kind, hop_name
