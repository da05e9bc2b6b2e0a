-- snippet: evidence of findings/rejections for the tasks that finished in [$lo_ns, $hi_ns), per
-- minute of their end: one row of all finished tasks (no hop, n['finished']) and one per first
-- failing hop (else the root) of the rejected ones (n['rejected'])
with finished as (
    select task_id, root_span_id, root_name, outcome, end_ns, ffh_kind, ffh_name, ffh_span_id,
           end_ns // 60000000000 * 60000000000 as minute_ns
    from tasks
    where finished and end_ns >= $lo_ns and end_ns < $hi_ns
)
select minute_ns, null as hop_kind, null as hop_name,
       map {'finished': count(*)}::MAP(VARCHAR, DOUBLE) as n
from finished
group by minute_ns
union all by name
select
    minute_ns,
    coalesce(ffh_kind, 'gateway') as hop_kind,
    coalesce(ffh_name, root_name) as hop_name,
    map {'rejected': count(*)}::MAP(VARCHAR, DOUBLE) as n,
    arg_max({'task_id': task_id, 'span_id': coalesce(ffh_span_id, root_span_id), 'rank': end_ns},
            {'r': end_ns, 't': task_id, 's': coalesce(ffh_span_id, root_span_id)}, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from finished
where outcome = 'rejected'
group by all
