-- snippet `evidence_top5` (an aggregate) of the evidence queries: the group's best five
-- examples `ex` (rank, task_id, span_id), greatest first: ties go to the greater task and span
-- id, as DuckDB's arg_max over {'r': rank, 't': task id, 's': span id} picks them
arraySlice(arrayReverseSort(groupArray(ex)), 1, 5)
