-- The columns of the key counts (queries/findings/evidence.py, KEY_COUNTS; their tables hold
-- them after the stored id, `question`): a minute, a hash of an idempotency key, its successful
-- executions that ended in the minute
minute_ns BIGINT, key_hash UBIGINT, executions INTEGER
