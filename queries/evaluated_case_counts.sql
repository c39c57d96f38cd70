-- Trials and passes of the cases that enter the metrics under multivon-eval's rule, for
-- reports still lacking metrics. One row: one evaluated case, in report then file order.
-- $report_ids: only these reports (a list), or NULL for every such report.
SELECT report_id, case_idx, n, c
FROM cases
WHERE n IS NOT NULL AND report_id NOT IN (
      -- the listed reports' id range only: zone maps skip the rest of `metrics`
      SELECT DISTINCT report_id FROM metrics
      WHERE report_id BETWEEN coalesce(list_min($report_ids), 0)
                          AND coalesce(list_max($report_ids), 2147483647))
  AND ($report_ids IS NULL OR list_contains($report_ids, report_id))
ORDER BY report_id, case_idx
