-- queries.findings.budget_inversion.timeouts_exceeding_budget_left: which hops' timeout × remaining attempts exceeded what their caller had left?
-- (the verdict over the window's calls, _evidence_timeouts_exceeding_budget_left.sql, asked
-- inline)
with flagged as materialized ({{evidence_timeouts_exceeding_budget_left}}),
calls as (
    select
        hop_kind, hop_name,
        count() as n_calls,
        countIf(inverted) as n_inverted,
        countIf(inverted and hop_timeout_ms > left_ms) as n_alone,
        uniqExactIf(task_id, inverted and task_bad) as n_bad,
        -- the call that overshot most: the headline arithmetic, and the first example
        argMaxIf((hop_timeout_ms, attempts_left, worst_ms, left_ms, bound_by), overshoot,
                 inverted) as headline,
        arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                 arraySlice(arrayReverseSort(groupArrayIf(assumeNotNull(overshoot), inverted)),
                            1, 5)) as top,
        minIfOrNull(end_ns, inverted) as first_ns,
        maxIfOrNull(end_ns, inverted) as last_ns
    from flagged
    group by hop_kind, hop_name
    having n_inverted > 0 and n_inverted >= {budget_inversion_min_share:Float64} * n_calls
),
hist as (
    -- what the inverted calls of those hops had left, for its median (within 1.1 %, as
    -- DuckDB's stored evidence keeps it)
    select (hop_kind, hop_name) as grp, 'left_ms' as metric, {{hist_bucket}} as bucket,
           count() as count
    from (select hop_kind, hop_name, assumeNotNull(left_ms) as value from flagged
          where inverted and (hop_kind, hop_name) in (select hop_kind, hop_name from calls))
    group by grp, metric, bucket
),
probs as (
    select 'left_ms' as p_metric, 'p50' as label, 0.5 as q
),
{{hist_quantiles}}
select
    c.hop_kind as hop_kind, c.hop_name as hop_name, c.n_calls as calls,
    c.n_inverted as inverted_calls, c.n_alone as timeout_alone_exceeds, c.n_bad as bad_tasks,
    c.headline.1 as timeout_ms, toInt64(c.headline.2) as attempts,
    c.headline.3 as worst_case_ms, c.headline.4 as left_ms, c.headline.5 as bound_by,
    q.value as median_left_ms, c.top as examples, c.first_ns as first_ns, c.last_ns as last_ns
from calls as c
left join quantiles as q on q.grp = (c.hop_kind, c.hop_name)
order by inverted_calls desc
settings join_use_nulls = 1, enable_materialized_cte = 1
