-- Each report's stored default-policy pass@k and pass^k cells as its summary entry holds
-- them (the typed rows of dashboard/analysis/summary.py): k ascending up to the report's
-- k_max (greatest($min_k_max, runs_per_case)), a NaN read as NULL (UNKNOWN) and an empty
-- reason as NULL. One row: one (report, metric, k); at_k: pass@k, else pass^k.
-- $report_ids: the reports wanted; $at, $hat: the two metrics' names.
SELECT
    m.report_id, m.metric = $at AS at_k, m.k,
    nullif(m.value, 'NaN') AS value, nullif(m.ci_low, 'NaN') AS ci_low,
    nullif(m.ci_high, 'NaN') AS ci_high, nullif(m.unknown_reason, '') AS unknown_reason
FROM metrics AS m JOIN reports AS r USING (report_id)
WHERE m.report_id IN (SELECT unnest($report_ids))
  AND m.metric IN ($at, $hat)
  AND m.k <= greatest($min_k_max, coalesce(r.runs_per_case, $min_k_max))
ORDER BY m.report_id, m.metric, m.k
