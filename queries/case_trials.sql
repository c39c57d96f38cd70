-- The recorded trials of one case (multivon-eval 0.18+), in run order. One row: one trial.
-- evaluators is the trial's per-grader JSON list (name, score, passed, reason, metadata).
-- $report_id, $case_idx: the case.
SELECT trial_idx, run_index, attempt, status, recorded_at, output, model_error, judge_error,
       evaluator_error, latency_ms, evaluators
FROM trials
WHERE report_id = $report_id AND case_idx = $case_idx
ORDER BY run_index, attempt, trial_idx
