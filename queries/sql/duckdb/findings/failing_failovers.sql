-- queries.findings.false_failover.failing_failovers: which backups that traffic failed over to then failed themselves?
with marked as (
    -- spans marking a failover to a backup (the backup's own call, or the caller serving it)
    select
        task_id, trace_id, span_id, hop_kind, hop_name, start_ns, end_ns, is_error,
        error_type, fallback_from,
        coalesce(fallback_to, hop_name) as backup
    from spans
    where end_ns >= $start_ns and end_ns < $end_ns
      and fallback_used
      and (fallback_kind = 'backup_model' or (fallback_kind is null and fallback_to is not null))
),
failovers as (
    -- one failover per trace and backup, however many spans mark it
    select
        task_id, trace_id, backup,
        any_value(fallback_from) as fallback_from,
        min(start_ns) as start_ns,
        max(end_ns) as end_ns,
        -- a marking span that is the backup's own call speaks for the backup
        bool_or(coalesce(is_error, false)) filter (where hop_name = backup) as backup_span_failed,
        bool_or(coalesce(is_error, false)) as marked_failed,
        arg_max(error_type, end_ns) as marked_error_type,
        arg_max(span_id, hop_name = backup) as span_id,
        arg_max(hop_kind, hop_name = backup) as hop_kind
    from marked
    group by task_id, trace_id, backup
),
backup_calls as (
    -- the backup hop's own spans in the same trace, from the failover on
    select
        f.trace_id, f.backup,
        arg_max(coalesce(b.is_error, false), b.start_ns) as last_failed,
        arg_max(b.error_type, b.start_ns) as last_error_type,
        arg_max(b.span_id, b.start_ns) as last_span_id,
        any_value(b.hop_kind) as backup_kind
    from failovers f
    join spans b on b.trace_id = f.trace_id and b.hop_name = f.backup and b.start_ns >= f.start_ns
    group by f.trace_id, f.backup
),
judged as (
    select
        f.*,
        coalesce(b.backup_kind, f.hop_kind) as backup_kind,
        -- the backup's last call decides; without one, the marking spans do
        coalesce(b.last_failed, f.backup_span_failed, f.marked_failed) as failed,
        coalesce(b.last_error_type, f.marked_error_type) as failure_type,
        coalesce(b.last_span_id, f.span_id) as example_span_id
    from failovers f
    left join backup_calls b on b.trace_id = f.trace_id and b.backup = f.backup
)
select
    backup_kind as hop_kind, backup as hop_name,
    count(*) as failovers,
    count(*) filter (where failed) as failed_failovers,
    count(*) filter (where failed) / count(*) as failure_share,
    mode(failure_type) filter (where failed) as failure_type,
    mode(fallback_from) as primary_hop,
    arg_max({'task_id': task_id, 'span_id': example_span_id}, end_ns, 5)
        filter (where failed) as examples,
    min(end_ns) filter (where failed) as first_ns,
    max(end_ns) filter (where failed) as last_ns
from judged
group by backup_kind, backup
having count(*) filter (where failed) >= $false_failover_min_failures
   and count(*) filter (where failed) >= $false_failover_min_share * count(*)
order by failed_failovers desc
