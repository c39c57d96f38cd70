-- The id the next report added takes. One row: (first_id).
SELECT coalesce(max(report_id), 0) + 1 AS first_id FROM reports
