-- Adds the staged cases to `cases` (the metrics pass ranks the lottery cases: `lottery`).
-- No parameters; reads `stage_cases`.
INSERT INTO cases
SELECT report_id, case_idx, case_id, input, status, stored_status, runs, pass_count,
       n, c, agent_errors, trial_passes, other_errors, score, model_error, judge_error, evaluator_error, tags,
       n_trials, excluded_reason, 0 AS agent_errors_left_out
FROM stage_cases
