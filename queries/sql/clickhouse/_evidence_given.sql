-- snippet (for `evidence_<question>` in a verdict): the stored minutes (_evidence_stored.sql)
-- and the evidence of the raw ranges, asked one range a statement (findings/evidence_raw.sql)
-- and given back as JSON lines {raw_evidence}
{{evidence_stored}}
union all
select minute_ns, hop_kind, hop_name, task_type, label, n, task_ids, vals, examples, first_ns,
       last_ns
from format(JSONEachRow,
            'minute_ns Int64, hop_kind Nullable(String), hop_name Nullable(String),
             task_type Nullable(String), label Nullable(String),
             n Map(String, Nullable(Float64)), task_ids Array(String),
             vals Map(String, Array(Float64)), examples Array(Tuple(Float64, String, String)),
             first_ns Nullable(Int64), last_ns Nullable(Int64)',
            {raw_evidence:String})
