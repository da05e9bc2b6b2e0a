-- queries.findings.evidence.refresh: the questions to store changed (new ones, or new
-- thresholds): forget the evidence of the question's other versions
delete from main.{{evidence_table}} where question <> $question
