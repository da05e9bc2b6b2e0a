-- queries.findings.saturation.rejections: where were finished tasks rejected, and what share of all finished tasks?
with finished as (
    select task_id, root_span_id, root_name, outcome, end_ns, ffh_kind, ffh_name, ffh_span_id
    from tasks
    where finished and end_ns >= $start_ns and end_ns < $end_ns
),
total as (
    select count(*) as tasks from finished
)
select
    coalesce(f.ffh_kind, 'gateway') as hop_kind,
    coalesce(f.ffh_name, f.root_name) as hop_name,
    count(*) as rejected_tasks,
    count(*) / any_value(t.tasks) as rejected_share,
    arg_max({'task_id': f.task_id, 'span_id': coalesce(f.ffh_span_id, f.root_span_id)}, f.end_ns, 5)
        as examples,
    min(f.end_ns) as first_ns,
    max(f.end_ns) as last_ns
from finished f, total t
where f.outcome = 'rejected'
group by 1, 2
having count(*) >= $saturation_min_rejections
   and count(*) >= $saturation_rejection_share * any_value(t.tasks)
order by rejected_tasks desc
