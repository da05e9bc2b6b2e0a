-- snippet `evidence_examples` of the findings verdicts: each key's best five examples across
-- the minutes of temp.evidence_rows (each minute holds its own best five, so the best five of
-- all minutes are among them); ties go to the greater task and span id, so the stored and the
-- raw evidence name the same five
select
    hop_kind, hop_name, task_type,
    arg_max({'task_id': e.task_id, 'span_id': e.span_id},
            {'r': e.rank, 't': e.task_id, 's': e.span_id}, 5) as examples
from (select hop_kind, hop_name, task_type, unnest(examples) as e from temp.evidence_rows)
group by all
