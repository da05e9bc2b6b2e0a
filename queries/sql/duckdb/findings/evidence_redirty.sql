-- queries.findings.evidence.refresh: minutes this round left for the next one
insert into main.evidence_dirty values ($lo_ns, $hi_ns)
