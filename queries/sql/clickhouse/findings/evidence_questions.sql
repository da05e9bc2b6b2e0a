-- queries.findings.evidence: the stored questions (name @ digest) of the newest registration
select arrayJoin(questions) as question from agentsla_evidence_questions final
