-- queries.findings.evidence.refresh: the questions to store changed (new ones, or new
-- thresholds): forget the evidence of the others
delete from main.finding_evidence where question not in (select unnest($questions))
