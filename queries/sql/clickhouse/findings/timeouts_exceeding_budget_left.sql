-- queries.findings.budget_inversion.timeouts_exceeding_budget_left: which hops' timeout × remaining attempts exceeded what their caller had left?
-- (the verdict over the window's evidence, _evidence_timeouts_exceeding_budget_left.sql,
-- asked inline: the headline is the minute whose first example overshot most; the median left
-- from the added histogram buckets, within 1.1 %, as DuckDB's)
with evidence_rows as materialized ({{evidence_timeouts_exceeding_budget_left}}),
calls as (
    select
        hop_kind, hop_name,
        toInt64(sum(n['calls'])) as n_calls,
        toInt64(sum(n['inverted_calls'])) as n_inverted,
        toInt64(sum(n['timeout_alone_exceeds'])) as n_alone,
        toInt64(uniqExactArray(task_ids)) as n_bad,
        argMaxIf((n['timeout_ms'], n['attempts'], n['worst_case_ms'], n['left_ms'], label),
                 examples[1], notEmpty(examples)) as headline,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    group by hop_kind, hop_name
    having n_inverted > 0 and n_inverted >= {budget_inversion_min_share:Float64} * n_calls
),
hist_hops as (select hop_kind, hop_name from calls),
hist as ({{evidence_hist}}),
probs as (
    select 'left' as p_metric, 'p50' as label, 0.5 as q
),
{{hist_quantiles}}
select
    c.hop_kind as hop_kind, c.hop_name as hop_name, c.n_calls as calls,
    c.n_inverted as inverted_calls, c.n_alone as timeout_alone_exceeds, c.n_bad as bad_tasks,
    c.headline.1 as timeout_ms, toInt64(c.headline.2) as attempts,
    c.headline.3 as worst_case_ms, c.headline.4 as left_ms, c.headline.5 as bound_by,
    q.value as median_left_ms, c.top5 as examples, c.first_ns as first_ns,
    c.last_ns as last_ns
from calls as c
left join quantiles as q on q.grp = (c.hop_kind, c.hop_name)
order by inverted_calls desc
settings join_use_nulls = 1, enable_materialized_cte = 1
