-- the spans a finding question reads: the judged spans' finding columns, typed once per span
-- by the materializer (agentsla_finding_spans; queries.findings.scope asks one task's
-- findings with _scoped_spans instead)
finding_spans
