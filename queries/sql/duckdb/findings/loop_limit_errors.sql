-- queries.findings.runaway_loop.loop_limit_errors: which hops stopped with error_type loop_limit?
select
    hop_kind, hop_name,
    count(*) as loop_limit_errors,
    count(distinct task_id) as tasks,
    max(loop_limit) as loop_limit,
    arg_max({'task_id': task_id, 'span_id': span_id}, end_ns, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from spans
where end_ns >= $start_ns and end_ns < $end_ns
  and error_type = 'loop_limit'
group by hop_kind, hop_name
order by loop_limit_errors desc
