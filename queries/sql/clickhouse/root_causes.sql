-- queries.root_causes.root_causes: which first failing hops caused the blamed tasks? (Pareto)
with {{raw_tasks}}, {{cause_rows}},
per_cause as (
    -- columns read as c.*: unqualified names would be this select's own aliases
    select
        c.ffh_kind as ffh_kind, c.ffh_name as ffh_name, c.ffh_reason as ffh_reason,
        sum(c.tasks) as tasks,
        sum(c.lost_us) / 1e6 as seconds_lost,
        sum(c.failed) as failed,
        sum(c.degraded) as degraded,
        sum(c.budget_exhausted) as budget_exhausted,
        sum(c.rejected) as rejected
    from cause_rows as c
    group by c.ffh_kind, c.ffh_name, c.ffh_reason
    having sum(c.tasks) > 0
),
ranked as (
    select *,
        tasks / sum(tasks) over () as share,
        sum(tasks) over (order by tasks desc, seconds_lost desc, ffh_kind, ffh_name, ffh_reason
                         rows unbounded preceding) / sum(tasks) over () as cumulative_share
    from per_cause
)
select *
from ranked
order by tasks desc, seconds_lost desc, ffh_kind, ffh_name, ffh_reason
limit {limit:UInt64}
