-- queries.findings.evidence._register: the stored questions from now on (replacing the others)
insert into agentsla_evidence_questions (questions, version)
values ({questions:Array(String)}, {version:UInt64})
