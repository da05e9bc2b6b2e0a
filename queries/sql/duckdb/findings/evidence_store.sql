-- queries.findings.evidence.refresh: store a question's evidence of [$lo_ns, $hi_ns) in its table:
-- of the minutes, or of the hour tier (its evidence query at $grain_ns = an hour: minute_ns is
-- the hour's start)
insert into main.{{evidence_table}} by name
select $question as question, *
from ({{evidence}})
