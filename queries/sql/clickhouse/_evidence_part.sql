-- snippet `evidence_part` of evidence_examples and evidence_tallies: no key part
CAST(NULL, 'Nullable(String)')
