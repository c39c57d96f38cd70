-- Each UNKNOWN metric given (a report, a metric, a k) gets its own reason.
-- $report_ids, $metrics, $ks, $reasons: parallel lists, one element per metric.
UPDATE metrics SET unknown_reason = u.reason
FROM (
    SELECT unnest($report_ids) AS report_id, unnest($metrics) AS metric, unnest($ks) AS k,
        unnest($reasons) AS reason
) AS u
WHERE metrics.report_id = u.report_id AND metrics.metric = u.metric AND metrics.k = u.k
    AND metrics.value IS NULL
