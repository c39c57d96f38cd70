-- Reports whose default-policy metrics are not in the catalog yet. One row: one report.
-- $report_ids: only these reports (a list), or NULL for every such report.
SELECT report_id, file, runs_per_case, stored_pass_at_k, stored_pass_hat_k
FROM reports
WHERE report_id NOT IN (
      -- the listed reports' id range only: zone maps skip the rest of `metrics`
      SELECT DISTINCT report_id FROM metrics
      WHERE report_id BETWEEN coalesce(list_min($report_ids), 0)
                          AND coalesce(list_max($report_ids), 2147483647))
  AND ($report_ids IS NULL OR list_contains($report_ids, report_id))
ORDER BY report_id
