-- queries.findings.evidence.refresh: store a question's evidence of the hour [$lo_ns, $hi_ns)
-- in the hour tier (its evidence query at $grain_ns = an hour: minute_ns is the hour's start)
insert into main.finding_evidence_hourly by name
select $question as question, *
from ({{evidence}})
