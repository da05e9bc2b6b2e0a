-- snippet `evidence_best5` (an aggregate over evidence rows) of the findings verdicts: the
-- group's best five examples across its minutes (each minute holds its own best five, so the
-- best five of all minutes are among them; ties as in _evidence_top5.sql), as {task_id,
-- span_id}. A verdict takes it in the aggregate that reads its evidence rows by key, not
-- from a CTE of its own: ClickHouse analyses the evidence again at each reference.
arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
         arraySlice(arrayReverseSort(groupArrayArray(examples)), 1, 5))
