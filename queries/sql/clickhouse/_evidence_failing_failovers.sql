-- snippet: evidence of findings/failing_failovers: the failovers whose last marking span ended
-- in [lo_ns, hi_ns), one row per trace and backup (marking spans read from [start_ns, end_ns);
-- the backup's own calls from the failover's start, and from reach_ns, to end_ns), judged
-- failed or not (DuckDB's twin, which adds them up per minute and tallies failure types and
-- primary hops per value)
with marked as (
    -- spans marking a failover to a backup (the backup's own call, or the caller serving it)
    select
        task_id, trace_id, span_id, hop_kind, hop_name, start_ns, end_ns, is_error,
        error_type, fallback_from,
        coalesce(fallback_to, hop_name) as backup
    from {{finding_spans}}
    where end_ns >= {start_ns:Int64} and end_ns < {end_ns:Int64}
      and fallback_used
      and (fallback_kind = 'backup_model' or (fallback_kind is null and fallback_to is not null))
),
failovers as materialized (
    -- one failover per trace and backup, however many spans mark it
    select
        task_id, trace_id, backup,
        min(fallback_from) as primary_hop,
        min(start_ns) as first_start_ns,
        max(end_ns) as last_end_ns,
        -- a marking span that is the backup's own call speaks for the backup
        if(countIf(hop_name = backup) > 0, maxIf(is_error, hop_name = backup), NULL)
            as backup_span_failed,
        max(is_error) as marked_failed,
        argMax(tuple(error_type), (end_ns, span_id)).1 as marked_error_type,
        argMax(span_id, (hop_name = backup, span_id)) as marked_span_id,
        argMax(hop_kind, (hop_name = backup, span_id)) as marked_kind
    from marked
    group by task_id, trace_id, backup
    having last_end_ns >= {lo_ns:Int64} and last_end_ns < {hi_ns:Int64}
),
backup_calls as (
    -- the backup hop's own spans in the same trace, from the failover on
    select
        f.trace_id as trace_id, f.backup as backup,
        argMax(b.is_error, (b.start_ns, b.span_id)) as last_failed,
        argMax(tuple(b.error_type), (b.start_ns, b.span_id)).1 as last_error_type,
        argMax(b.span_id, (b.start_ns, b.span_id)) as last_span_id,
        max(b.hop_kind) as backup_kind
    from failovers as f
    inner join {{finding_spans}} as b on b.trace_id = f.trace_id and b.hop_name = f.backup
    where b.start_ns >= f.first_start_ns
      and b.start_ns >= {reach_ns:Int64} and b.start_ns < {end_ns:Int64}
      and b.trace_id in (select trace_id from failovers)
    group by f.trace_id, f.backup
)
select
    f.task_id as task_id, f.backup as hop_name, f.primary_hop as primary_hop,
    f.last_end_ns as end_ns,
    coalesce(b.backup_kind, f.marked_kind) as hop_kind,
    -- the backup's last call decides; without one, the marking spans do
    coalesce(b.last_failed, f.backup_span_failed, f.marked_failed) as failed,
    coalesce(b.last_error_type, f.marked_error_type) as failure_type,
    coalesce(b.last_span_id, f.marked_span_id) as example_span_id
from failovers as f
left join backup_calls as b on b.trace_id = f.trace_id and b.backup = f.backup
settings join_use_nulls = 1
