-- queries.findings.evidence.refresh: the hours of the minutes [$lo_ns, $hi_ns) just stored
-- need their hour-tier evidence built again (not yet marked: one mark an hour)
insert into main.evidence_hours_stale
select hour_ns
from (select unnest(range($lo_ns // 3600000000000 * 3600000000000, $hi_ns,
                          3600000000000)) as hour_ns) h
where not exists (select 1 from main.evidence_hours_stale s where s.hour_ns = h.hour_ns)
