-- snippet: quantiles of merged exponential histograms. Needs `hist` ({{hist_keys}}, metric,
-- bucket, count) and `probs` (p_metric, label, q); gives `quantiles` ({{hist_keys}}, label,
-- value). Linear interpolation between the values at ranks floor and ceil of (n - 1) q + 1, as
-- quantile_cont does, each read as its bucket's midpoint: within 1.1 % (docs/rollups.md).
hist_merged as (
    select {{hist_keys}}, metric, bucket, sum(count) as count
    from hist
    group by all
),
hist_cumulative as (
    select *,
        sum(count) over (partition by {{hist_keys}}, metric order by bucket
                         rows between unbounded preceding and current row) as cum,
        sum(count) over (partition by {{hist_keys}}, metric) as n,
        case when bucket = -1000000 then 0.0
             else pow(2.0, bucket / 32.0) * (1 + pow(2.0, 1 / 32.0)) / 2 end as value
    from hist_merged
    where count > 0
),
hist_ranked as (
    select {{hist_keys}}, label,
        min(value) filter (where cum >= floor((n - 1) * q) + 1) as lo,
        min(value) filter (where cum >= ceil((n - 1) * q) + 1) as hi,
        any_value((n - 1) * q - floor((n - 1) * q)) as frac
    from hist_cumulative
    join probs on p_metric = metric
    group by all
),
quantiles as (
    select {{hist_keys}}, label, lo + frac * (hi - lo) as value
    from hist_ranked
)
