-- queries.root_causes.root_causes: which first failing hops caused the blamed tasks? (Pareto)
with {{raw_blamed}}, {{cause_rows}},
per_cause as (
    select
        ffh_kind, ffh_name, ffh_reason,
        sum(tasks) as tasks,
        sum(lost_us) / 1e6 as seconds_lost,
        sum(failed) as failed,
        sum(degraded) as degraded,
        sum(budget_exhausted) as budget_exhausted,
        sum(rejected) as rejected
    from cause_rows
    group by ffh_kind, ffh_name, ffh_reason
    having sum(tasks) > 0
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
limit $limit
