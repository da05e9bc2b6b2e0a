-- queries.findings.evidence.refresh: the stale hours to build, newest first: ended by
-- $settled_ns and with no dirty minute left
select hour_ns
from main.evidence_hours_stale s
where hour_ns + $hour_ns <= $settled_ns
  and not exists (select 1 from main.evidence_dirty d
                  where d.hi_ns >= s.hour_ns and d.lo_ns < s.hour_ns + $hour_ns)
order by hour_ns desc
