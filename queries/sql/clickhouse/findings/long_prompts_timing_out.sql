-- queries.findings.context_growth.long_prompts_timing_out: which models time out on prompts much longer than those of their other calls?
-- (the verdict over the window's evidence, _evidence_long_prompts_timing_out.sql, asked
-- inline; the slope and correlation of latency on prompt length over all of a hop's calls,
-- merged from each minute's least-squares terms)
with evidence_rows as materialized ({{evidence_long_prompts_timing_out}}),
timing_out as (
    -- hops with a timed-out call, their overall means of the least-squares terms
    select
        hop_kind, hop_name,
        toInt64(sum(n['calls'])) as n_calls,
        toInt64(sum(n['timeouts'])) as n_timeouts,
        sum(n['pairs'] * n['mean_tokens']) / sum(n['pairs']) as mean_tokens,
        sum(n['pairs'] * n['mean_ms']) / sum(n['pairs']) as mean_ms,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    group by hop_kind, hop_name
    having n_timeouts > 0
),
merged as (
    -- the window's centred sums, for those hops only
    select
        t.hop_kind as hop_kind, t.hop_name as hop_name,
        sum(r.n['sxx'] + r.n['pairs'] * pow(r.n['mean_tokens'] - t.mean_tokens, 2)) as sxx,
        sum(r.n['syy'] + r.n['pairs'] * pow(r.n['mean_ms'] - t.mean_ms, 2)) as syy,
        sum(r.n['sxy'] + r.n['pairs'] * (r.n['mean_tokens'] - t.mean_tokens)
                                      * (r.n['mean_ms'] - t.mean_ms)) as sxy
    from evidence_rows as r
    inner join timing_out as t on t.hop_kind = r.hop_kind and t.hop_name = r.hop_name
    group by t.hop_kind, t.hop_name
),
hist_hops as (select hop_kind, hop_name from timing_out),
hist as ({{evidence_hist}}),
probs as (
    select 'timed_out' as p_metric, 'timed_out' as label, 0.5 as q
    union all select 'other', 'other', 0.5
    union all select 'timed_out_ms', 'timed_out_ms', 0.5
    union all select 'other_ms', 'other_ms', {context_timeout_duration_quantile:Float64}
),
{{hist_quantiles}},
valued as (
    -- a hop's quantiles side by side: `quantiles` read once (ClickHouse analyses a CTE again
    -- at each reference, materialized or not)
    select grp,
           maxIfOrNull(value, label = 'timed_out') as timed_out,
           maxIfOrNull(value, label = 'other') as other,
           maxIfOrNull(value, label = 'timed_out_ms') as timed_out_ms,
           maxIfOrNull(value, label = 'other_ms') as other_ms
    from quantiles
    group by grp
)
select t.hop_kind as hop_kind, t.hop_name as hop_name, t.n_calls as calls,
       t.n_timeouts as timeouts, q.timed_out as timed_out_median_tokens,
       q.other as other_median_tokens, q.timed_out_ms as timed_out_median_ms,
       q.other_ms as other_quantile_ms, m.sxy / m.sxx * 1000 as ms_per_1k_tokens,
       m.sxy / sqrt(m.sxx * m.syy) as latency_prompt_corr, t.top5 as examples,
       t.first_ns as first_ns, t.last_ns as last_ns
from timing_out as t
inner join merged as m on m.hop_kind = t.hop_kind and m.hop_name = t.hop_name
left join valued as q on q.grp = (t.hop_kind, t.hop_name)
where q.timed_out >= {context_timeout_prompt_ratio:Float64} * q.other
  -- they ran as long as their peers: no deadline cut them short
  and q.timed_out_ms >= q.other_ms
order by timeouts desc
settings join_use_nulls = 1, enable_materialized_cte = 1
