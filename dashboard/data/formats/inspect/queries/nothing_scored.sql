-- The Inspect reports among $report_ids none of whose samples has a scored epoch (every
-- epoch unscored, Inspect's NaN, or errored), for the reason their metrics are UNKNOWN.
-- One row: one report, with the scorer it was read with, its unscored epochs (trials
-- neither scored nor errored) and its errored epochs.
-- $report_ids: the reports whose metrics were just stored.
SELECT
    r.report_id,
    any_value(r.harness_facts ->> '$.scorer') AS scorer,
    count(t.report_id) FILTER (WHERE t.status = 'skipped') AS unscored,
    count(t.report_id) FILTER (WHERE t.status = 'model_error') AS errored
FROM reports AS r
LEFT JOIN trials AS t USING (report_id)
WHERE r.harness = 'inspect-ai' AND r.cases_evaluated = 0
  AND list_contains($report_ids, r.report_id)
GROUP BY r.report_id
ORDER BY r.report_id
