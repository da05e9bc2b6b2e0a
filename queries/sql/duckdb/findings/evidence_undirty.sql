-- queries.findings.evidence.refresh: the dirty rows this round saw are done (the writer's
-- newer rows, and the round's own for the minutes it left, stay)
delete from main.evidence_dirty where rowid in (select unnest($seen::bigint[]))
