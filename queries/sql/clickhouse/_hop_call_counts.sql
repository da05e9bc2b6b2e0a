-- snippet: a hop's call counts over spans aliased w (a logical call counts at its first
-- attempt, as in DuckDB's _hop_rows.sql): logical_calls, errors, timeouts, rate_limited,
-- circuit_open, input_tokens, output_tokens
countIf(if(w.call_id is not null, w.span_id = w.call_id,
           coalesce(w.retry_attempt, 0) = 0)) as logical_calls,
    countIf(coalesce(w.is_error, false)) as errors,
    countIf(coalesce(w.error_type = 'timeout', false)) as timeouts,
    countIf(coalesce(w.error_type = 'rate_limited', false)) as rate_limited,
    countIf(coalesce(w.error_type = 'circuit_open', false)) as circuit_open,
    sum(coalesce(w.input_tokens, 0)) as input_tokens,
    sum(coalesce(w.output_tokens, 0)) as output_tokens
