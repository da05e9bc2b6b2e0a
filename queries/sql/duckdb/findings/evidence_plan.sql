-- queries.findings.evidence.plan: the stale minutes within [$roll_lo, $roll_hi) (changed since
-- the worker stored their evidence, or not reached yet); every other minute's evidence is stored
select lo_ns, hi_ns
from evidence_dirty
where hi_ns >= $roll_lo and lo_ns < $roll_hi
