-- The attempts of one case (task) of a Harbor report as the catalog holds them, with what
-- is needed to read their transcripts back from the job folder: the task's name
-- (cases.case_id), the eval key and the reward key and threshold the job was read with
-- (reports.harness_facts). One row: one attempt, in attempt order.
-- $report_id, $case_idx: the case.
SELECT
    t.trial_idx, t.run_index, t.attempt, t.status, t.recorded_at, t.model_error,
    t.judge_error, t.evaluator_error, t.latency_ms, c.case_id,
    r.harness_facts ->> '$.eval' AS eval_key,
    r.harness_facts ->> '$.reward_key' AS reward_key,
    CAST(r.harness_facts ->> '$.pass_threshold' AS DOUBLE) AS pass_threshold,
    CAST(r.harness_facts ->> '$.counts' = 'reward_valid' AS BOOLEAN) AS valid_rule
FROM trials AS t
JOIN cases AS c USING (report_id, case_idx)
JOIN reports AS r USING (report_id)
WHERE t.report_id = $report_id AND t.case_idx = $case_idx AND r.harness = 'harbor'
ORDER BY t.run_index, t.attempt, t.trial_idx
