-- queries.findings.evidence.refresh: minutes this round left for the next one, as recently
-- marked as the newest mark it saw over them
insert into main.evidence_dirty (lo_ns, hi_ns, marked_ns) values ($lo_ns, $hi_ns, $marked_ns)
