hop_rows as (
    -- hop counts at t_ns: per minute from hop_minutes, per span from raw_spans (the counts of
    -- collector/store/rollups.py HOPS; a logical call counts at its first attempt)
    select minute_ns as t_ns, hop_kind, hop_name, calls, logical_calls, retries, errors,
        timeouts, rate_limited, circuit_open, input_tokens, output_tokens
    from hop_minutes_tiers
    where {{tier_range}}
      and ($hop_kind is null or hop_kind = $hop_kind)
    union all
    select end_ns, hop_kind, hop_name, 1,
        (case when call_id is not null then span_id = call_id
              else coalesce(retry_attempt, 0) = 0 end)::integer,
        (coalesce(attempt, retry_attempt, 0) > 0)::integer,
        coalesce(is_error, false)::integer,
        coalesce(error_type = 'timeout', false)::integer,
        coalesce(error_type = 'rate_limited', false)::integer,
        coalesce(error_type = 'circuit_open', false)::integer,
        coalesce(input_tokens, 0), coalesce(output_tokens, 0)
    from raw_spans
)
