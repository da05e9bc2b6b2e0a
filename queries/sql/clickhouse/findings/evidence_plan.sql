-- queries.findings.evidence.plan: the dirty marks reaching the window's whole minutes
select lo_ns, hi_ns
from agentsla_evidence_dirty final
where hi_ns >= {roll_lo:Int64} and lo_ns < {roll_hi:Int64}
