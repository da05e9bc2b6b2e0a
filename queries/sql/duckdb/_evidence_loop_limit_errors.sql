-- snippet: evidence of findings/loop_limit_errors for the spans with error_type loop_limit that
-- ended in [$lo_ns, $hi_ns), per minute of that end and hop
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    hop_kind, hop_name,
    map {'loop_limit_errors': count(*), 'loop_limit': max(loop_limit)}::MAP(VARCHAR, DOUBLE) as n,
    list(distinct task_id) as task_ids,
    arg_max({'task_id': task_id, 'span_id': span_id, 'rank': end_ns},
            {'r': end_ns, 't': task_id, 's': span_id}, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from spans
where end_ns >= $lo_ns and end_ns < $hi_ns
  and error_type = 'loop_limit'
group by all
