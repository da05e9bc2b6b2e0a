-- snippet (for `evidence_<question>` in a verdict): the stored minutes (_evidence_stored.sql)
-- and the rest of the window from raw rows: the question's evidence query `evidence_source`
-- over [lo_ns, hi_ns), which holds every raw range, keeping the minutes not taken from storage
{{evidence_stored}}
union all
select minute_ns, hop_kind, hop_name, task_type, label, n, task_ids, vals, examples, first_ns,
       last_ns
from ({{evidence_source}})
where not (minute_ns >= {roll_lo:Int64} and minute_ns < {roll_hi:Int64})
   or has({raw_minutes:Array(Int64)}, minute_ns)
