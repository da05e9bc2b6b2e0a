-- queries.findings.retry_amplification.attempts_per_call: which hops average too many attempts per logical call?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_attempts_per_call.sql)
with calls as (
    select
        hop_kind, hop_name,
        sum(n['calls'])::BIGINT as calls,
        sum(n['attempts'])::BIGINT as attempts,
        max(n['max_attempts'])::BIGINT as max_attempts,
        sum(n['retried_calls'])::BIGINT as retried_calls,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    group by hop_kind, hop_name
),
examples as ({{evidence_examples}})
select
    c.hop_kind, c.hop_name,
    c.calls,
    c.attempts,
    c.attempts / c.calls as attempts_per_call,
    c.max_attempts,
    c.retried_calls,
    e.examples,
    c.first_ns,
    c.last_ns
from calls c
left join examples e on e.hop_kind is not distinct from c.hop_kind
                    and e.hop_name is not distinct from c.hop_name
where c.calls >= $retry_min_calls and c.attempts / c.calls >= $retry_attempts_per_call
order by attempts_per_call desc
