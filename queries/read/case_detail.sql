-- One case of one report as stored: input and outcome (its output and graders stay in the
-- file: case_text).
-- $report_id, $case_idx: the case. One row (or none).
SELECT c.case_idx, c.case_id, c.input, c.status, c.stored_status, c.runs,
       c.pass_count, c.n, c.c, c.score, c.model_error, c.judge_error, c.evaluator_error,
       c.tags, c.n_trials, c.excluded_reason, r.format, r.file
FROM cases AS c JOIN reports AS r USING (report_id)
WHERE c.report_id = $report_id AND c.case_idx = $case_idx
