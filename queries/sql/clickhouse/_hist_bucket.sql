-- the exponential-histogram bucket of `value` (scale 5, OpenTelemetry's index; exact zeros in
-- bucket -1000000): DuckDB's _hist_bucket.sql
if(value = 0, -1000000, toInt32(ceil(log2(value) * 32)) - 1)
