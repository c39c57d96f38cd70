-- Stored default-policy metrics. One row: one (report, metric, k).
-- $report_ids: the reports wanted, or NULL for all.
SELECT report_id, metric, k, value, ci_low, ci_high, method, n_cases, runs, unknown_reason
FROM metrics
WHERE $report_ids IS NULL OR report_id IN (SELECT unnest($report_ids))
ORDER BY report_id, metric, k
