-- Trials and passes of the cases that enter the metrics under multivon-eval's rule, for
-- the listed reports (those reports_without_metrics found). One row: one evaluated case,
-- in report then file order.
-- $report_ids: the reports (a list).
SELECT report_id, case_idx, n, c
FROM cases
WHERE n IS NOT NULL
  -- the listed reports' id range first: zone maps skip the rest of `cases`
  AND report_id BETWEEN list_min($report_ids) AND list_max($report_ids)
  AND list_contains($report_ids, report_id)
ORDER BY report_id, case_idx
