-- queries.findings.context_growth.long_prompts_timing_out: which models time out on prompts much longer than those of their other calls?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_long_prompts_timing_out.sql)
with timing_out as (
    -- hops with a timed-out call, their overall means of the least-squares terms
    select
        hop_kind, hop_name,
        sum(n['calls'])::BIGINT as calls,
        sum(n['timeouts'])::BIGINT as timeouts,
        sum(n['pairs']) as pairs,
        sum(n['pairs'] * n['mean_tokens']) / sum(n['pairs']) as mean_tokens,
        sum(n['pairs'] * n['mean_ms']) / sum(n['pairs']) as mean_ms,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    group by hop_kind, hop_name
    having sum(n['timeouts']) > 0
),
hist as (
    -- the prompt-length and duration histograms of those hops' timed-out and other calls
    select r.hop_kind, r.hop_name, m.metric,
           unnest(r.vals[m.metric || '_bucket'])::INTEGER as bucket,
           unnest(r.vals[m.metric || '_count']) as count
    from temp.evidence_rows r
    semi join timing_out t on t.hop_kind is not distinct from r.hop_kind
                          and t.hop_name is not distinct from r.hop_name
    cross join (values ('timed_out'), ('other'), ('timed_out_ms'), ('other_ms')) m(metric)
),
probs as (
    select * from (values ('timed_out', 'timed_out', 0.5), ('other', 'other', 0.5),
                          ('timed_out_ms', 'timed_out_ms', 0.5),
                          ('other_ms', 'other_ms', $context_timeout_duration_quantile))
        p(p_metric, label, q)
),
{{hist_quantiles}},
medians as (
    -- the medians of both, and the durations compared (within 1.1 %)
    select hop_kind, hop_name,
           max(value) filter (where label = 'timed_out') as timed_out_median_tokens,
           max(value) filter (where label = 'other') as other_median_tokens,
           max(value) filter (where label = 'timed_out_ms') as timed_out_median_ms,
           max(value) filter (where label = 'other_ms') as other_quantile_ms
    from quantiles
    group by hop_kind, hop_name
),
merged as (
    -- the window's centred sums, for those hops only
    select
        t.hop_kind, t.hop_name,
        sum(r.n['sxx'] + r.n['pairs'] * (r.n['mean_tokens'] - t.mean_tokens) ** 2) as sxx,
        sum(r.n['syy'] + r.n['pairs'] * (r.n['mean_ms'] - t.mean_ms) ** 2) as syy,
        sum(r.n['sxy'] + r.n['pairs'] * (r.n['mean_tokens'] - t.mean_tokens)
                                       * (r.n['mean_ms'] - t.mean_ms)) as sxy
    from temp.evidence_rows r
    join timing_out t on t.hop_kind is not distinct from r.hop_kind
                     and t.hop_name is not distinct from r.hop_name
    group by t.hop_kind, t.hop_name
),
examples as ({{evidence_examples}})
select
    t.hop_kind, t.hop_name,
    t.calls,
    t.timeouts,
    d.timed_out_median_tokens,
    d.other_median_tokens,
    d.timed_out_median_ms,
    d.other_quantile_ms,
    m.sxy / m.sxx * 1000 as ms_per_1k_tokens,
    m.sxy / sqrt(m.sxx * m.syy) as latency_prompt_corr,
    e.examples,
    t.first_ns,
    t.last_ns
from timing_out t
join merged m on m.hop_kind is not distinct from t.hop_kind
             and m.hop_name is not distinct from t.hop_name
left join medians d on d.hop_kind is not distinct from t.hop_kind
                   and d.hop_name is not distinct from t.hop_name
left join examples e on e.hop_kind is not distinct from t.hop_kind
                    and e.hop_name is not distinct from t.hop_name
where d.timed_out_median_tokens >= $context_timeout_prompt_ratio * d.other_median_tokens
  -- they ran as long as their peers: no deadline cut them short
  and d.timed_out_median_ms >= d.other_quantile_ms
order by timeouts desc
