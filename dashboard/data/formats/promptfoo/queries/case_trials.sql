-- The repeats of one test of a promptfoo report as the catalog holds them, with what is
-- needed to find their rows in the eval file again: the test's key (cases.case_id) and
-- the (prompt, provider) pair the report is (reports.harness_facts) and its eval (in a
-- promptfoo database, which holds many).
-- One row: one repeat, in testIdx order. $report_id, $case_idx: the case.
SELECT
    t.trial_idx, t.run_index, t.attempt, t.status, t.recorded_at, t.model_error,
    t.judge_error, t.evaluator_error, t.latency_ms, c.case_id,
    CAST(r.harness_facts ->> '$.promptIdx' AS INTEGER) AS prompt_idx,
    CAST(r.harness_facts ->> '$.repeats' AS INTEGER) AS repeats,
    r.metadata ->> '$.evalId' AS eval_id
FROM trials AS t
JOIN cases AS c USING (report_id, case_idx)
JOIN reports AS r USING (report_id)
WHERE t.report_id = $report_id AND t.case_idx = $case_idx AND r.harness = 'promptfoo'
ORDER BY t.run_index, t.trial_idx
