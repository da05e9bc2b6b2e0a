-- snippet: evidence of findings/failing_failovers for the failovers whose last marking span
-- ended in [lo_ns, hi_ns), per minute of that end and backup (marking spans read from
-- [start_ns, end_ns); the backup's own calls from the failover's start, and from reach_ns, to
-- end_ns); DuckDB's twin. The most common failure type and primary hop are tallied per value
-- (`failure_type=...`, `primary=...`).
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
),
judged as (
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
)
select
    intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
    hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
    CAST(NULL, 'Nullable(String)') as label,
    CAST([], 'Array(String)') as task_ids,
    mapConcat(
        map('failovers', toFloat64(count()), 'failed', toFloat64(countIf(failed))),
        sumMapIf(map(concat('failure_type=', assumeNotNull(failure_type)), 1.0),
                 failed and failure_type is not null),
        sumMapIf(map(concat('primary=', assumeNotNull(primary_hop)), 1.0),
                 primary_hop is not null)) as n,
    CAST(map(), 'Map(String, Array(Float64))') as vals,
    arraySlice(arrayReverseSort(groupArrayIf(
        (toFloat64(end_ns), task_id, assumeNotNull(example_span_id)), failed)), 1, 5)
        as examples,
    minIfOrNull(end_ns, failed) as first_ns,
    maxIfOrNull(end_ns, failed) as last_ns
from judged
group by minute_ns, hop_kind, hop_name
settings join_use_nulls = 1
