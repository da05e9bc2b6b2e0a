-- queries.findings.context_growth.long_prompts_timing_out: which models time out on prompts much longer than those of their other calls?
-- (the verdict over the window's model calls, _evidence_long_prompts_timing_out.sql, asked
-- inline; the slope and correlation of latency on prompt length over all of a hop's calls)
with model_calls as materialized ({{evidence_long_prompts_timing_out}}),
timing_out as (
    select
        hop_kind, hop_name,
        count() as n_calls,
        countIf(timed_out) as n_timeouts,
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
),
hist as (
    -- the prompt-length and duration histograms of those hops' timed-out and other calls, for
    -- their medians and the other calls' duration quantile (within 1.1 %, as DuckDB's stored
    -- evidence keeps them; a negative duration counts as 0)
    select (hop_kind, hop_name) as grp, measure.1 as metric, {{hist_bucket}} as bucket,
           count() as count
    from (select hop_kind, hop_name, measure, measure.2 as value
          from model_calls
          array join [(if(timed_out, 'timed_out', 'other'), toFloat64(tokens)),
                      (if(timed_out, 'timed_out_ms', 'other_ms'),
                       greatest(toFloat64(duration_ms), 0))] as measure
          where (hop_kind, hop_name) in (select hop_kind, hop_name from timing_out))
    group by grp, metric, bucket
),
probs as (
    select 'timed_out' as p_metric, 'timed_out' as label, 0.5 as q
    union all select 'other', 'other', 0.5
    union all select 'timed_out_ms', 'timed_out_ms', 0.5
    union all select 'other_ms', 'other_ms', {context_timeout_duration_quantile:Float64}
),
{{hist_quantiles}}
select t.hop_kind as hop_kind, t.hop_name as hop_name, t.n_calls as calls,
       t.n_timeouts as timeouts, tm.value as timed_out_median_tokens,
       om.value as other_median_tokens, td.value as timed_out_median_ms,
       od.value as other_quantile_ms, t.slope as ms_per_1k_tokens,
       t.correlation as latency_prompt_corr, t.top as examples, t.first_ns as first_ns,
       t.last_ns as last_ns
from timing_out as t
left join quantiles as tm on tm.grp = (t.hop_kind, t.hop_name) and tm.label = 'timed_out'
left join quantiles as om on om.grp = (t.hop_kind, t.hop_name) and om.label = 'other'
left join quantiles as td on td.grp = (t.hop_kind, t.hop_name) and td.label = 'timed_out_ms'
left join quantiles as od on od.grp = (t.hop_kind, t.hop_name) and od.label = 'other_ms'
where tm.value >= {context_timeout_prompt_ratio:Float64} * om.value
  -- they ran as long as their peers: no deadline cut them short
  and td.value >= od.value
order by timeouts desc
settings join_use_nulls = 1, enable_materialized_cte = 1
