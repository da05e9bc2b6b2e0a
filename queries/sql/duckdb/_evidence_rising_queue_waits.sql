-- snippet: evidence of findings/rising_queue_waits for the queue waits that ended in
-- [$lo_ns, $hi_ns), per minute of their end and hop. The verdict cuts the first and the last
-- quarter of the window's own evidence and takes exact p90s, so every wait is kept, in one
-- order: its task and span (`examples`, ranked by its duration), its end (ns after the minute)
-- and its task's budget (`vals`); tasks are read among those that started from $reach_ns.
with waits as (
    select s.task_id, s.span_id, s.hop_kind, s.hop_name, s.duration_ms, s.end_ns,
           t.budget_total_ms
    from spans s
    left join (select * from tasks where start_ns >= $reach_ns and start_ns < $hi_ns) t
           on t.task_id = s.task_id
    where s.end_ns >= $lo_ns and s.end_ns < $hi_ns
      and s.hop_kind = 'queue'
)
select
    end_ns // 60000000000 * 60000000000 as minute_ns,
    hop_kind, hop_name,
    map {'waits': count(*)}::MAP(VARCHAR, DOUBLE) as n,
    map {'end_ns': list(end_ns - end_ns // 60000000000 * 60000000000 order by end_ns, span_id),
         'budget_ms': list(budget_total_ms order by end_ns, span_id)}::MAP(VARCHAR, DOUBLE[])
        as vals,
    list({'task_id': task_id, 'span_id': span_id, 'rank': duration_ms} order by end_ns, span_id)
        as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from waits
group by all
