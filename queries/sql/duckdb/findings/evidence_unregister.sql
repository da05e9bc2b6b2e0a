-- queries.findings.evidence.refresh: forget the list of stored questions (a new one follows)
delete from main.evidence_questions
