-- queries.findings.evidence._register: delete the evidence of a question's other versions
-- (other thresholds, an earlier evidence query: `name@digest` ids of the same name)
insert into agentsla_finding_evidence
select * except (version, is_deleted), {version:UInt64}, 1
from agentsla_finding_evidence final
where splitByChar('@', question)[1] = {name:String} and question != {question:String}
