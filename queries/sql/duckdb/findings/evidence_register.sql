-- queries.findings.evidence.refresh: the questions stored from now on
insert into main.evidence_questions select unnest($questions)
