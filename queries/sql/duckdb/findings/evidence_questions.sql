-- queries.findings.evidence: the questions (and thresholds) whose evidence is stored
select question from evidence_questions
