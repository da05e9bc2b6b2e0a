raw_spans as (
    -- spans of the window outside the rollups' whole minutes [$roll_lo, $roll_hi), by their
    -- end; two ranges, each a constant filter DuckDB checks against its zone maps; only the
    -- columns hop_rows and hop_hist read
    select s.end_ns, s.hop_kind, s.hop_name, s.span_id, s.call_id, s.retry_attempt, s.attempt,
        s.is_error, s.error_type, s.input_tokens, s.output_tokens, s.duration_ms, s.ttft_ms
    from spans s
    where s.end_ns >= $start_ns and s.end_ns < $roll_lo
      and ($hop_kind is null or s.hop_kind = $hop_kind)
{{hop_task_filter}}
    union all
    select s.end_ns, s.hop_kind, s.hop_name, s.span_id, s.call_id, s.retry_attempt, s.attempt,
        s.is_error, s.error_type, s.input_tokens, s.output_tokens, s.duration_ms, s.ttft_ms
    from spans s
    where s.end_ns >= $roll_hi and s.end_ns < $end_ns
      and ($hop_kind is null or s.hop_kind = $hop_kind)
{{hop_task_filter}}
)
