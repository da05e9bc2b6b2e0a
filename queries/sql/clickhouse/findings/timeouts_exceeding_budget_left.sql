-- queries.findings.budget_inversion.timeouts_exceeding_budget_left: which hops' timeout × remaining attempts exceeded what their caller had left?
-- (the verdict over the window's calls, _evidence_timeouts_exceeding_budget_left.sql, asked
-- inline)
with flagged as ({{evidence_timeouts_exceeding_budget_left}}),
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
        quantileExactInclusiveIf(0.5)(left_ms, inverted) as median_left,
        arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                 arraySlice(arrayReverseSort(groupArrayIf(assumeNotNull(overshoot), inverted)),
                            1, 5)) as top,
        minIfOrNull(end_ns, inverted) as first_ns,
        maxIfOrNull(end_ns, inverted) as last_ns
    from flagged
    group by hop_kind, hop_name
)
select
    hop_kind, hop_name, n_calls as calls, n_inverted as inverted_calls,
    n_alone as timeout_alone_exceeds, n_bad as bad_tasks, headline.1 as timeout_ms,
    toInt64(headline.2) as attempts, headline.3 as worst_case_ms, headline.4 as left_ms,
    headline.5 as bound_by, median_left as median_left_ms, top as examples, first_ns, last_ns
from calls
where n_inverted > 0 and n_inverted >= {budget_inversion_min_share:Float64} * n_calls
order by inverted_calls desc
