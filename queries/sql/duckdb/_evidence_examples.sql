-- snippet `evidence_examples` of the findings verdicts: each key's best five examples across
-- the minutes of temp.evidence_rows (each minute holds its own best five, so the best five of
-- all minutes are among them); ties go to the greater task and span id, so the stored and the
-- raw evidence name the same five. `part`: the rest of the key, for questions keyed finer
-- than a hop or task type (queries.findings.evidence.VERDICT_SNIPPETS), else null.
select
    hop_kind, hop_name, task_type, part,
    arg_max({'task_id': e.task_id, 'span_id': e.span_id},
            {'r': e.rank, 't': e.task_id, 's': e.span_id}, 5) as examples
from (select hop_kind, hop_name, task_type, {{evidence_part}} as part, unnest(examples) as e
      from temp.evidence_rows)
group by all
