-- The UNKNOWN metrics of Harbor reports, with what their reason is worded from: k, the
-- fewest counted attempts of a task (runs), how many tasks were evaluated (n_cases), and
-- whether some evaluated task has more attempts than the fewest (uneven).
-- One row: one UNKNOWN (report, metric, k). $report_ids: the reports (a list).
SELECT
    m.report_id, m.metric, m.k, m.runs, m.n_cases,
    coalesce(bool_or(c.n <> m.runs), false) AS uneven
FROM metrics AS m
JOIN reports AS r USING (report_id)
LEFT JOIN cases AS c ON c.report_id = m.report_id AND c.n IS NOT NULL
WHERE r.harness = 'harbor' AND m.value IS NULL AND list_contains($report_ids, m.report_id)
GROUP BY m.report_id, m.metric, m.k, m.runs, m.n_cases
ORDER BY m.report_id, m.metric, m.k
