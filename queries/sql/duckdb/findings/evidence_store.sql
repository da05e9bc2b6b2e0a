-- queries.findings.evidence.refresh: store a question's evidence of the minutes [$lo_ns, $hi_ns)
insert into main.finding_evidence by name
select $question as question, *
from ({{evidence}})
