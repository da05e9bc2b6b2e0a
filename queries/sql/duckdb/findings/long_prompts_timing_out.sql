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
merged as (
    -- the window's exact medians and centred sums, for those hops only
    select
        t.hop_kind, t.hop_name,
        list_aggregate(flatten(list(r.vals['timed_out_tokens'])), 'median')
            as timed_out_median_tokens,
        list_aggregate(flatten(list(r.vals['other_tokens'])), 'median') as other_median_tokens,
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
    m.timed_out_median_tokens,
    m.other_median_tokens,
    m.sxy / m.sxx * 1000 as ms_per_1k_tokens,
    m.sxy / sqrt(m.sxx * m.syy) as latency_prompt_corr,
    e.examples,
    t.first_ns,
    t.last_ns
from timing_out t
join merged m on m.hop_kind is not distinct from t.hop_kind
             and m.hop_name is not distinct from t.hop_name
left join examples e on e.hop_kind is not distinct from t.hop_kind
                    and e.hop_name is not distinct from t.hop_name
where m.timed_out_median_tokens >= $context_timeout_prompt_ratio * m.other_median_tokens
order by timeouts desc
