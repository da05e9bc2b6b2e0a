-- snippet `evidence_part` of the questions keyed finer than a hop or task type: the label
label
