-- snippet: evidence of findings/work_after_cutoff for the spans that ended in [lo_ns, hi_ns)
-- after their task's cutoff (plus ghost_work_grace_ms), per minute of that end and hop; their
-- tasks are read among all that started before hi_ns (DuckDB's twin)
with ended as (
    select task_id, span_id, hop_kind, hop_name, start_ns, end_ns, input_tokens, output_tokens
    from {{finding_spans}}
    where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
),
cutoffs as (
    -- the earlier of the root's end and the deadline (DuckDB's least skips nulls)
    select
        task_id, root_span_id,
        arrayMin(arrayFilter(x -> x is not null,
            [end_ns, start_ns + toInt64(round(budget_total_ms * 1e6))])) as cutoff_ns,
        end_ns is not null or budget_total_ms is not null as has_cutoff
    from {{finding_tasks}}
    where start_ns < {hi_ns:Int64}
      and task_id in (select task_id from ended)
),
ghosts as (
    select
        s.task_id as task_id, s.span_id as span_id, s.hop_kind as hop_kind,
        s.hop_name as hop_name, s.end_ns as end_ns,
        (s.end_ns - greatest(s.start_ns, c.cutoff_ns)) / 1e6 as ms_after,
        coalesce(s.input_tokens, 0) + coalesce(s.output_tokens, 0) as tokens,
        s.start_ns >= c.cutoff_ns as started_after,
        (ms_after, s.task_id, s.span_id) as ex
    from ended as s
    inner join cutoffs as c on c.task_id = s.task_id
    where c.has_cutoff and not (s.span_id <=> c.root_span_id)
      and s.end_ns > c.cutoff_ns + toInt64(round({ghost_work_grace_ms:Float64} * 1e6))
)
select
    intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
    hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
    CAST(NULL, 'Nullable(String)') as label,
    CAST(map(), 'Map(String, Array(Float64))') as vals,
    map('ms_after', sum(ms_after), 'tokens_after', toFloat64(sum(tokens)),
        'spans', toFloat64(count()), 'max_ms_after', max(ms_after),
        'started_after_cutoff', toFloat64(countIf(started_after))) as n,
    groupUniqArray(task_id) as task_ids,
    {{evidence_top5}} as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from ghosts
group by minute_ns, hop_kind, hop_name
