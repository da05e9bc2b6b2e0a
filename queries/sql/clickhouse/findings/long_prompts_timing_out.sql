-- queries.findings.context_growth.long_prompts_timing_out: which models time out on prompts much longer than those of their other calls?
-- (the verdict over the window's model calls, _evidence_long_prompts_timing_out.sql, asked
-- inline; the slope and correlation of latency on prompt length over all of a hop's calls)
with model_calls as ({{evidence_long_prompts_timing_out}}),
timing_out as (
    select
        hop_kind, hop_name,
        count() as n_calls,
        countIf(timed_out) as n_timeouts,
        quantileExactInclusiveIf(0.5)(tokens, timed_out) as timed_out_median,
        quantileExactInclusiveIf(0.5)(tokens, not timed_out) as other_median,
        covarPop(tokens, duration_ms) / varPop(tokens) * 1000 as slope,
        corr(tokens, duration_ms) as correlation,
        arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                 arraySlice(arrayReverseSort(groupArrayIf(
                     (toFloat64(tokens), task_id, span_id), timed_out)), 1, 5)) as top,
        minIfOrNull(end_ns, timed_out) as first_ns,
        maxIfOrNull(end_ns, timed_out) as last_ns
    from model_calls
    group by hop_kind, hop_name
    having n_timeouts > 0
)
select hop_kind, hop_name, n_calls as calls, n_timeouts as timeouts,
       timed_out_median as timed_out_median_tokens, other_median as other_median_tokens,
       slope as ms_per_1k_tokens, correlation as latency_prompt_corr, top as examples,
       first_ns, last_ns
from timing_out
where timed_out_median >= {context_timeout_prompt_ratio:Float64} * other_median
order by timeouts desc
