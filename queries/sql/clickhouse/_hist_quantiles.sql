-- snippet: quantiles of merged exponential histograms. Needs `hist` (grp, metric, bucket,
-- count) and `probs` (p_metric, label, q); gives `quantiles` (grp, label, value, n: how
-- many values the label's metric holds).
hist_cumulative as (
    select grp, metric, bucket,
        sum(count) over (partition by grp, metric order by bucket
                         rows between unbounded preceding and current row) as cum,
        sum(count) over (partition by grp, metric) as n,
        if(bucket = -1000000, 0.0, pow(2.0, bucket / 32.0) * (1 + pow(2.0, 1 / 32.0)) / 2)
            as value
    from hist
),
quantiles as (
    -- linear interpolation between the values at ranks floor and ceil of (n - 1) q + 1, each
    -- read as its bucket's midpoint: DuckDB's _hist_quantiles.sql, step for step
    select grp, label, lo + frac * (hi - lo) as value, metric_n as n
    from (
        select grp, label,
            minIf(value, cum >= floor((n - 1) * q) + 1) as lo,
            minIf(value, cum >= ceil((n - 1) * q) + 1) as hi,
            any((n - 1) * q - floor((n - 1) * q)) as frac,
            any(n) as metric_n
        from hist_cumulative
        inner join probs on probs.p_metric = hist_cumulative.metric
        group by grp, label
    )
)
