-- snippet: evidence of findings/long_prompts_timing_out for the model calls with a prompt that
-- ended in [lo_ns, hi_ns), per minute of that end and hop (DuckDB's twin): counts, the prompt
-- lengths and durations of the timed-out and of the other calls as exponential histograms
-- (vals timed_out, other, timed_out_ms, other_ms: <metric>_bucket/_count; a negative duration
-- counts as 0) and the minute's least-squares terms of latency on prompt length (count,
-- means, centred sums: they merge exactly)
with model_calls as (
    select task_id, span_id, hop_kind, hop_name, toFloat64(assumeNotNull(input_tokens)) as tokens,
           duration_ms, end_ns,
           coalesce(error_type in ('timeout', 'context_overflow'), false) as timed_out
    from {{finding_spans}}
    where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
      and hop_kind = 'model' and input_tokens > 0
),
bucketed as (
    select *, toFloat64({{hist_bucket}}) as ms_bucket, (tokens, task_id, span_id) as ex
    from (select *, greatest(duration_ms, 0) as value from model_calls)
)
select * except (tokens_timed_out, tokens_other, ms_timed_out, ms_other)
from (
    select
        intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
        hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
        CAST(NULL, 'Nullable(String)') as label,
        CAST([], 'Array(String)') as task_ids,
        map('calls', toFloat64(count()), 'timeouts', toFloat64(countIf(timed_out)),
            'pairs', toFloat64(count()), 'mean_tokens', avg(tokens), 'mean_ms', avg(duration_ms),
            'sxx', varPop(tokens) * count(), 'syy', varPop(duration_ms) * count(),
            'sxy', covarPop(tokens, duration_ms) * count()) as n,
        sumMapIf([toFloat64({{hist_bucket}})], [1.0], timed_out) as tokens_timed_out,
        sumMapIf([toFloat64({{hist_bucket}})], [1.0], not timed_out) as tokens_other,
        sumMapIf([ms_bucket], [1.0], timed_out) as ms_timed_out,
        sumMapIf([ms_bucket], [1.0], not timed_out) as ms_other,
        map('timed_out_bucket', tokens_timed_out.1, 'timed_out_count', tokens_timed_out.2,
            'other_bucket', tokens_other.1, 'other_count', tokens_other.2,
            'timed_out_ms_bucket', ms_timed_out.1, 'timed_out_ms_count', ms_timed_out.2,
            'other_ms_bucket', ms_other.1, 'other_ms_count', ms_other.2) as vals,
        arraySlice(arrayReverseSort(groupArrayIf(ex, timed_out)), 1, 5) as examples,
        minIfOrNull(end_ns, timed_out) as first_ns,
        maxIfOrNull(end_ns, timed_out) as last_ns
    from (select * except value, tokens as value from bucketed)
    group by minute_ns, hop_kind, hop_name
)
