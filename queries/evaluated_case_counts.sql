-- Trials and passes of the cases that enter the metrics under multivon-eval's rule, for
-- reports still lacking metrics. One row: one evaluated case, in report then file order.
-- No parameters.
SELECT report_id, case_idx, n, c
FROM cases
WHERE n IS NOT NULL AND report_id NOT IN (SELECT DISTINCT report_id FROM metrics)
ORDER BY report_id, case_idx
