-- queries.findings.duplicate_side_effect.duplicate_executions: which keys may a hop have executed successfully more than once, once within the window?
-- From the key counts gathered into temp.evidence_rows (each key's executions per minute from
-- the minute of the lookback's start on, stored or from raw rows), by minute and by a hash of
-- the key alone: a minute at an edge, a collision, or a key two hops executed once each only
-- adds a candidate, which findings/duplicate_executions counts by hop and key from raw rows
select key_hash
from temp.evidence_rows
where key_hash in (select key_hash from temp.evidence_rows
                   where minute_ns > $start_ns - 60000000000 and minute_ns < $end_ns)
group by key_hash
having sum(executions) > 1
