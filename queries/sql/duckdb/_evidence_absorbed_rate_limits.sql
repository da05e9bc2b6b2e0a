-- snippet: evidence of findings/absorbed_rate_limits for the logical calls whose last attempt
-- ended in [$lo_ns, $hi_ns), per minute of that end and hop (attempts read from
-- [$start_ns, $end_ns), the range widened by the calls' slack; their tasks among those that
-- started from $reach_ns). The latencies of the masked and of the clean calls as the
-- exponential histograms the rollups keep (vals masked_bucket/_count, clean_bucket/_count:
-- their p99s within 1.1 %, docs/rollups.md).
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
)
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    hop_kind, hop_name,
    map {'calls': count(*), 'masked_calls': count(*) filter (where masked),
         'absorbed_429s': coalesce(sum(rate_limited) filter (where masked), 0),
         'masked_task_ok': count(*) filter (where masked and task_ok)}::MAP(VARCHAR, DOUBLE) as n,
    map {'masked_bucket': map_keys(histogram({{hist_bucket}}) filter (where masked)),
         'masked_count': map_values(histogram({{hist_bucket}}) filter (where masked)),
         'clean_bucket': map_keys(histogram({{hist_bucket}}) filter (where rate_limited = 0)),
         'clean_count': map_values(histogram({{hist_bucket}}) filter (where rate_limited = 0))
        }::MAP(VARCHAR, DOUBLE[]) as vals,
    arg_max({'task_id': task_id, 'span_id': last_span_id, 'rank': latency_ms},
            {'r': latency_ms, 't': task_id, 's': last_span_id}, 5) filter (where masked)
        as examples,
    min(end_ns) filter (where masked) as first_ns,
    max(end_ns) filter (where masked) as last_ns
from (select *, greatest(latency_ms, 0) as value from judged)
group by all
