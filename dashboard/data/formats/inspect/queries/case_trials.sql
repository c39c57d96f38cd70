-- The epochs of one case of an Inspect report as the catalog holds them, with what is
-- needed to read their transcripts back from the log: the sample's id (cases.case_id)
-- and the scorer and threshold the log was read with (reports.harness_facts).
-- One row: one epoch, in epoch order. $report_id, $case_idx: the case.
SELECT
    t.trial_idx, t.run_index, t.attempt, t.status, t.recorded_at, t.model_error,
    t.judge_error, t.evaluator_error, t.latency_ms, c.case_id,
    r.harness_facts ->> '$.scorer' AS scorer,
    CAST(r.harness_facts ->> '$.pass_threshold' AS DOUBLE) AS pass_threshold
FROM trials AS t
JOIN cases AS c USING (report_id, case_idx)
JOIN reports AS r USING (report_id)
WHERE t.report_id = $report_id AND t.case_idx = $case_idx AND r.harness = 'inspect-ai'
ORDER BY t.run_index, t.attempt, t.trial_idx
