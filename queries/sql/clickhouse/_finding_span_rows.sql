-- every stored version of the judged spans' finding columns (agentsla_finding_spans without
-- FINAL), for a filter that only narrows what a question then reads through the finding_spans
-- placeholder (a span judged again counts once per version): FINAL over a day of rows cost
-- nearly all of /findings at 100M spans (docs/scale-out.md, Measured). One task's findings
-- (queries.findings.scope) read the scoped spans instead, as for finding_spans
agentsla_finding_spans
