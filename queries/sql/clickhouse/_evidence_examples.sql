-- snippet `evidence_examples` of the findings verdicts: each key's best five examples across
-- the minutes of evidence_rows (each minute holds its own best five, so the best five of all
-- minutes are among them; ties as in _evidence_top5.sql), as {task_id, span_id}. `part`: the
-- rest of the key, for questions keyed finer than a hop or task type
-- (queries.findings.evidence.VERDICT_SNIPPETS), else null.
select hop_kind, hop_name, task_type, part,
    arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
             {{evidence_top5}}) as examples
from (select hop_kind, hop_name, task_type, {{evidence_part}} as part, ex
      from evidence_rows
      array join examples as ex)
group by hop_kind, hop_name, task_type, part
