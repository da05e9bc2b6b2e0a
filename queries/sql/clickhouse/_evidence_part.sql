-- snippet `evidence_part` of evidence_tallies: no key part
CAST(NULL, 'Nullable(String)')
