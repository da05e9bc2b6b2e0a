-- queries.findings.evidence.refresh: delete a question's stored rows of the minutes
-- [lo_ns, hi_ns) it recomputes (deleted rows at {version}; the new ones follow at a higher
-- version)
insert into agentsla_finding_evidence
select * except (version, is_deleted), {version:UInt64}, 1
from agentsla_finding_evidence final
where question = {question:String} and minute_ns >= {lo_ns:Int64} and minute_ns < {hi_ns:Int64}
