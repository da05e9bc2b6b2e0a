-- snippet `evidence_hist` of the findings verdicts: the exponential histograms evidence_rows
-- keep in vals (`<metric>_bucket` and `<metric>_count`, in parallel, as DuckDB's evidence)
-- added up per hop and metric, for the hops of the verdict's `hist_hops`: the `hist` that
-- _hist_quantiles.sql reads
select (hop_kind, hop_name) as grp, metric, toInt32(b.1) as bucket, sum(b.2) as count
from (select hop_kind, hop_name, vals, substring(key, 1, length(key) - 7) as metric
      from evidence_rows
      array join arrayFilter(k -> endsWith(k, '_bucket'), mapKeys(vals)) as key
      where (hop_kind, hop_name) in (select hop_kind, hop_name from hist_hops))
array join arrayZip(vals[concat(metric, '_bucket')], vals[concat(metric, '_count')]) as b
group by grp, metric, bucket
