-- snippet: evidence of findings/failing_failovers for the failovers whose last marking span
-- ended in [$lo_ns, $hi_ns), per minute of that end and backup (marking spans read from
-- [$start_ns, $end_ns); the backup's own calls from the failover's start, and from $reach_ns,
-- to $end_ns). The most common failure type and primary hop are tallied per value
-- (`failure_type=...`, `primary=...`).
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
        min(fallback_from) as fallback_from,
        min(start_ns) as start_ns,
        max(end_ns) as end_ns,
        -- a marking span that is the backup's own call speaks for the backup
        bool_or(coalesce(is_error, false)) filter (where hop_name = backup) as backup_span_failed,
        bool_or(coalesce(is_error, false)) as marked_failed,
        arg_max(error_type, {'e': end_ns, 's': span_id}) as marked_error_type,
        arg_max(span_id, {'b': hop_name = backup, 's': span_id}) as span_id,
        arg_max(hop_kind, {'b': hop_name = backup, 's': span_id}) as hop_kind
    from marked
    group by task_id, trace_id, backup
    having max(end_ns) >= $lo_ns and max(end_ns) < $hi_ns
),
backup_calls as (
    -- the backup hop's own spans in the same trace, from the failover on
    select
        f.trace_id, f.backup,
        arg_max(coalesce(b.is_error, false), {'t': b.start_ns, 's': b.span_id}) as last_failed,
        arg_max(b.error_type, {'t': b.start_ns, 's': b.span_id}) as last_error_type,
        arg_max(b.span_id, {'t': b.start_ns, 's': b.span_id}) as last_span_id,
        max(b.hop_kind) as backup_kind
    from failovers f
    join spans b on b.trace_id = f.trace_id and b.hop_name = f.backup and b.start_ns >= f.start_ns
    where b.start_ns >= $reach_ns and b.start_ns < $end_ns
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
    end_ns // $grain_ns * $grain_ns as minute_ns,
    backup_kind as hop_kind, backup as hop_name,
    map_concat(
        map {'failovers': count(*)::DOUBLE, 'failed': (count(*) filter (where failed))::DOUBLE},
        coalesce(map_from_entries(list_transform(
            map_entries(histogram(failure_type) filter (where failed)),
            lambda e: {'key': 'failure_type=' || e.key, 'value': e.value::DOUBLE})), map()),
        coalesce(map_from_entries(list_transform(
            map_entries(histogram(fallback_from)),
            lambda e: {'key': 'primary=' || e.key, 'value': e.value::DOUBLE})), map())
    )::MAP(VARCHAR, DOUBLE) as n,
    arg_max({'task_id': task_id, 'span_id': example_span_id, 'rank': end_ns::DOUBLE},
            {'r': end_ns::DOUBLE, 't': task_id, 's': example_span_id}, 5)
        filter (where failed) as examples,
    min(end_ns) filter (where failed) as first_ns,
    max(end_ns) filter (where failed) as last_ns
from judged
group by all
