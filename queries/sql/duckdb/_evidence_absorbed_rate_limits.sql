-- snippet: evidence of findings/absorbed_rate_limits for the logical calls whose last attempt
-- ended in [$lo_ns, $hi_ns), per minute of that end and hop (attempts read from
-- [$start_ns, $end_ns), the range widened by the calls' slack; their tasks among those that
-- started from $reach_ns). Every masked call's latency is kept (vals masked_ms: its p99 is
-- exact); the clean calls, nearly all calls, as the exponential histogram the rollups keep
-- (vals clean_bucket, clean_count: their p99 is within 1.1 %, docs/rollups.md).
with {{attempts}},
calls as (
    select
        task_id, hop_kind, hop_name,
        count(*) filter (where error_type = 'rate_limited') as rate_limited,
        not arg_max(coalesce(is_error, false), attempt) as succeeded,
        (max(end_ns) - min(start_ns)) / 1e6 as latency_ms,
        arg_max(span_id, attempt) as last_span_id,
        max(end_ns) as end_ns
    from attempts
    group by trace_id, parent_span_id, hop_kind, hop_name, call_id, task_id
),
judged as (
    select c.*, c.rate_limited > 0 and c.succeeded as masked,
           coalesce(k.outcome in ('success', 'degraded'), false) as task_ok
    from calls c
    left join (select task_id, outcome from tasks
               where start_ns >= $reach_ns and start_ns < $hi_ns) k
           on k.task_id = c.task_id and c.rate_limited > 0 and c.succeeded
    where c.end_ns >= $lo_ns and c.end_ns < $hi_ns
),
clean as (
    select minute_ns, hop_kind, hop_name, list(bucket order by bucket) as buckets,
           list(calls order by bucket) as counts
    from (select end_ns // 60000000000 * 60000000000 as minute_ns, hop_kind, hop_name,
                 {{hist_bucket}} as bucket, count(*) as calls
          from (select *, latency_ms as value from judged where rate_limited = 0)
          group by all)
    group by all
),
minutes as (
select
    end_ns // 60000000000 * 60000000000 as minute_ns,
    hop_kind, hop_name,
    map {'calls': count(*), 'masked_calls': count(*) filter (where masked),
         'absorbed_429s': coalesce(sum(rate_limited) filter (where masked), 0),
         'masked_task_ok': count(*) filter (where masked and task_ok)}::MAP(VARCHAR, DOUBLE) as n,
    coalesce(list(latency_ms) filter (where masked), []) as masked_ms,
    arg_max({'task_id': task_id, 'span_id': last_span_id, 'rank': latency_ms},
            {'r': latency_ms, 't': task_id, 's': last_span_id}, 5) filter (where masked)
        as examples,
    min(end_ns) filter (where masked) as first_ns,
    max(end_ns) filter (where masked) as last_ns
from judged
group by all
)
select
    m.* exclude (masked_ms),
    map {'masked_ms': m.masked_ms, 'clean_bucket': coalesce(c.buckets, []),
         'clean_count': coalesce(c.counts, [])}::MAP(VARCHAR, DOUBLE[]) as vals
from minutes m
left join clean c on c.minute_ns = m.minute_ns and c.hop_kind is not distinct from m.hop_kind
                 and c.hop_name is not distinct from m.hop_name
