-- the exponential-histogram bucket of `value` (scale 5, OpenTelemetry's index; exact zeros in
-- bucket -1000000): collector/store/rollups.py bucket_sql, the one the writer stores
case when value = 0 then -1000000 else ceil(log2(value) * 32)::integer - 1 end
