-- queries.findings.evidence.refresh: the dirty minutes this round saw are done (the writer's
-- newer rows are not in this round's snapshot and stay)
delete from main.evidence_dirty
