-- snippet: evidence of findings/rejections for the tasks that finished in [$lo_ns, $hi_ns), per
-- minute of their end: all finished tasks (the row without a hop), and the rejected ones per
-- hop (first failing hop, else the root). The writer marks the minute of a task row it
-- replaces too (collector/store/evidence.py), so a lost task found again leaves its old minute.
with finished as (
    select task_id, root_span_id, root_name, outcome, end_ns, ffh_kind, ffh_name, ffh_span_id
    from tasks
    where finished and end_ns >= $lo_ns and end_ns < $hi_ns
)
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    null::VARCHAR as hop_kind, null::VARCHAR as hop_name,
    map {'finished': count(*)}::MAP(VARCHAR, DOUBLE) as n
from finished
group by all
union all by name
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    coalesce(ffh_kind, 'gateway') as hop_kind,
    coalesce(ffh_name, root_name) as hop_name,
    map {'rejected': count(*)}::MAP(VARCHAR, DOUBLE) as n,
    arg_max({'task_id': task_id, 'span_id': coalesce(ffh_span_id, root_span_id),
             'rank': end_ns::DOUBLE},
            {'r': end_ns::DOUBLE, 't': task_id, 's': coalesce(ffh_span_id, root_span_id)}, 5)
        as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from finished
where outcome = 'rejected'
group by all
