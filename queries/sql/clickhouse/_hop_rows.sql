hop_rows as (
    -- hop counts at t_ns: per whole hour or minute and shard from hop_minutes(_hourly), per
    -- span from raw_spans (the counts of collector/store/rollups.py HOPS, DuckDB's
    -- _hop_rows.sql; a logical call counts at its first attempt)
    select minute_ns as t_ns, hop_kind, hop_name, calls, logical_calls, retries, errors,
        timeouts, rate_limited, circuit_open, input_tokens, output_tokens
    from {{rollup_tiers(hop_minutes)}}
    where true
      and ({hop_kind:Nullable(String)} is null or hop_kind = {hop_kind:Nullable(String)})
    union all
    select r.end_ns, r.hop_kind, r.hop_name, 1,
        toInt64(if(r.call_id is not null, r.span_id = r.call_id,
                   coalesce(r.retry_attempt, 0) = 0)),
        toInt64(coalesce(r.attempt, r.retry_attempt, 0) > 0),
        toInt64(coalesce(r.is_error, false)),
        toInt64(coalesce(r.error_type = 'timeout', false)),
        toInt64(coalesce(r.error_type = 'rate_limited', false)),
        toInt64(coalesce(r.error_type = 'circuit_open', false)),
        coalesce(r.input_tokens, 0), coalesce(r.output_tokens, 0)
    from raw_spans as r
)
