-- queries.findings.budget_inversion.timeouts_exceeding_budget_left: which hops' timeout × remaining attempts exceeded what their caller had left?
-- (the verdict over the minutes' evidence in temp.evidence_rows,
-- _evidence_timeouts_exceeding_budget_left.sql)
with headline as (
    -- each minute's call that overshot most is its first example
    select *, {'r': examples[1].rank, 't': examples[1].task_id, 's': examples[1].span_id}
              as overshoot
    from temp.evidence_rows
),
calls as (
    select
        hop_kind, hop_name,
        sum(n['calls'])::BIGINT as calls,
        sum(n['inverted_calls'])::BIGINT as inverted_calls,
        sum(n['timeout_alone_exceeds'])::BIGINT as timeout_alone_exceeds,
        len(list_distinct(flatten(list(task_ids))))::BIGINT as bad_tasks,
        arg_max(n['timeout_ms'], overshoot) filter (where len(examples) > 0) as timeout_ms,
        arg_max(n['attempts'], overshoot) filter (where len(examples) > 0)::BIGINT as attempts,
        arg_max(n['worst_case_ms'], overshoot) filter (where len(examples) > 0) as worst_case_ms,
        arg_max(n['left_ms'], overshoot) filter (where len(examples) > 0) as left_ms,
        arg_max(label, overshoot) filter (where len(examples) > 0) as bound_by,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from headline
    group by hop_kind, hop_name
),
hist as (
    -- what the inverted calls of the hops reported had left, as one histogram per hop
    select r.hop_kind, r.hop_name, 'left_ms' as metric,
           unnest(r.vals['left_bucket'])::INTEGER as bucket, unnest(r.vals['left_count']) as count
    from temp.evidence_rows r
    semi join calls c on c.hop_kind is not distinct from r.hop_kind
                     and c.hop_name is not distinct from r.hop_name
                     and c.inverted_calls > 0
                     and c.inverted_calls >= $budget_inversion_min_share * c.calls
),
probs as (
    select 'left_ms' as p_metric, 'p50' as label, 0.5 as q
),
{{hist_quantiles}},
examples as ({{evidence_examples}})
select
    c.hop_kind, c.hop_name, c.calls, c.inverted_calls, c.timeout_alone_exceeds, c.bad_tasks,
    c.timeout_ms, c.attempts, c.worst_case_ms, c.left_ms, c.bound_by, q.value as median_left_ms,
    e.examples, c.first_ns, c.last_ns
from calls c
left join quantiles q on q.hop_kind is not distinct from c.hop_kind
                     and q.hop_name is not distinct from c.hop_name
left join examples e on e.hop_kind is not distinct from c.hop_kind
                    and e.hop_name is not distinct from c.hop_name
where c.inverted_calls > 0 and c.inverted_calls >= $budget_inversion_min_share * c.calls
order by inverted_calls desc
