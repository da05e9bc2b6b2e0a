-- The columns of a question's evidence (collector/store/evidence.py: a question's tables hold
-- them after its stored id, `question`): key (hop or task type, and the label of those keyed
-- finer), additive numbers `n` (each verdict knows which it sums and which it takes the max
-- of), distinct task ids, values a verdict takes a median of, the period's best five examples
-- with the rank they merge by, first and last ends
minute_ns BIGINT, hop_kind VARCHAR, hop_name VARCHAR, task_type VARCHAR,
n MAP(VARCHAR, DOUBLE), label VARCHAR, task_ids VARCHAR[], vals MAP(VARCHAR, DOUBLE[]),
examples STRUCT(task_id VARCHAR, span_id VARCHAR, rank DOUBLE)[], first_ns BIGINT,
last_ns BIGINT
