-- Stored default-policy metrics. One row: one (report, metric, k).
-- No parameters.
SELECT report_id, metric, k, value, ci_low, ci_high, method, n_cases, runs, unknown_reason
FROM metrics
ORDER BY report_id, metric, k
