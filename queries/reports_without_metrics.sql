-- Reports whose default-policy metrics are not in the catalog yet. One row: one report.
-- No parameters.
SELECT report_id, file, runs_per_case, stored_pass_at_k, stored_pass_hat_k
FROM reports
WHERE report_id NOT IN (SELECT DISTINCT report_id FROM metrics)
ORDER BY report_id
