-- queries.findings.rate_limit_masking.absorbed_rate_limits: which hops had 429s that retries absorbed, and what did it cost in latency?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_absorbed_rate_limits.sql)
with masking as (
    select
        hop_kind, hop_name,
        sum(n['calls'])::BIGINT as calls,
        sum(n['masked_calls'])::BIGINT as masked_calls,
        sum(n['absorbed_429s'])::BIGINT as absorbed_429s,
        sum(n['masked_task_ok']) as masked_task_ok,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    group by hop_kind, hop_name
    having sum(n['absorbed_429s']) >= $rate_limit_min_absorbed
       and sum(n['masked_calls']) >= $rate_limit_min_share * sum(n['calls'])
),
hist as (
    -- the latency histograms of those hops' masked and clean calls, for their p99s
    select r.hop_kind, r.hop_name, 'masked' as metric,
           unnest(r.vals['masked_bucket'])::INTEGER as bucket, unnest(r.vals['masked_count']) as count
    from temp.evidence_rows r
    semi join masking m on m.hop_kind is not distinct from r.hop_kind
                       and m.hop_name is not distinct from r.hop_name
    union all
    select r.hop_kind, r.hop_name, 'clean' as metric,
           unnest(r.vals['clean_bucket'])::INTEGER as bucket, unnest(r.vals['clean_count']) as count
    from temp.evidence_rows r
    semi join masking m on m.hop_kind is not distinct from r.hop_kind
                       and m.hop_name is not distinct from r.hop_name
),
probs as (
    select * from (values ('masked', 'masked', 0.99), ('clean', 'clean', 0.99)) p(p_metric, label, q)
),
{{hist_quantiles}},
examples as ({{evidence_examples}})
select
    m.hop_kind, m.hop_name,
    m.calls,
    m.masked_calls,
    m.absorbed_429s,
    q.value as masked_p99_ms,
    c.value as clean_p99_ms,
    m.masked_task_ok / m.masked_calls as masked_task_success,
    e.examples,
    m.first_ns,
    m.last_ns
from masking m
left join quantiles q on q.hop_kind is not distinct from m.hop_kind
                     and q.hop_name is not distinct from m.hop_name and q.label = 'masked'
left join quantiles c on c.hop_kind is not distinct from m.hop_kind
                     and c.hop_name is not distinct from m.hop_name and c.label = 'clean'
left join examples e on e.hop_kind is not distinct from m.hop_kind
                    and e.hop_name is not distinct from m.hop_name
order by m.absorbed_429s desc
