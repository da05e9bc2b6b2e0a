-- snippet: the key counts (queries/findings/evidence.py, KEY_COUNTS) of [$lo_ns, $hi_ns): each
-- idempotency key's successful executions (innermost or not) per minute of their end, by a hash
-- of the key alone, from which findings/duplicate_keys takes the candidate keys
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    hash(idempotency_key) as key_hash,
    count(*)::INTEGER as executions
from spans
where end_ns >= $lo_ns and end_ns < $hi_ns
  and idempotency_key is not null and not coalesce(is_error, false)
group by all
