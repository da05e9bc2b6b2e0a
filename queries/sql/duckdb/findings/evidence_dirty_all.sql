-- queries.findings.evidence.refresh: every stored minute needs its evidence again
insert into main.evidence_dirty (lo_ns, hi_ns)
select min(start_ns) // 60000000000 * 60000000000, max(end_ns) // 60000000000 * 60000000000
from spans
having count(*) > 0
