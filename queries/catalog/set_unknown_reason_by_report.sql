-- Every UNKNOWN metric of each report given gets that report's reason.
-- $report_ids, $reasons: parallel lists, one reason per report.
UPDATE metrics SET unknown_reason = u.reason
FROM (SELECT unnest($report_ids) AS report_id, unnest($reasons) AS reason) AS u
WHERE metrics.report_id = u.report_id AND metrics.value IS NULL
