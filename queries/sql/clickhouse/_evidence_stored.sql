-- snippet (for `evidence_<question>` in a verdict): the stored evidence of the question
-- {question} in the window's clean whole minutes [roll_lo, roll_hi), the dirty ones
-- {raw_minutes} left out (queries.findings.evidence.ask)
select minute_ns, hop_kind, hop_name, task_type, label, n, task_ids, vals, examples, first_ns,
       last_ns
from agentsla_finding_evidence final
where question = {question:String}
  and minute_ns >= {roll_lo:Int64} and minute_ns < {roll_hi:Int64}
  and not has({raw_minutes:Array(Int64)}, minute_ns)
