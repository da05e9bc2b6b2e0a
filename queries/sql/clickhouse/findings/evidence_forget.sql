-- queries.findings.evidence._register: delete the evidence of questions no longer stored
insert into agentsla_finding_evidence
select * except (version, is_deleted), {version:UInt64}, 1
from agentsla_finding_evidence final
where question not in {questions:Array(String)}
