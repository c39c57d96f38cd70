-- Adds the samples of a batch of Inspect logs to `cases` (one row per sample, in the
-- dataset's order; dashboard/data/formats/inspect_rows.py says what each column holds).
-- Nothing is excluded or has a stored status.
-- One list per column, one element per case, in the same order: $report_id, $case_idx,
-- $case_id, $input, $status, $runs, $pass_count, $n, $c, $agent_errors, $trial_passes,
-- $other_errors, $score, $model_error, $tags (lists of text), $n_trials,
-- $agent_errors_left_out.
INSERT INTO cases
SELECT
    CAST(unnest($report_id) AS INTEGER), CAST(unnest($case_idx) AS INTEGER),
    CAST(unnest($case_id) AS VARCHAR), CAST(unnest($input) AS VARCHAR),
    CAST(unnest($status) AS VARCHAR), NULL, CAST(unnest($runs) AS INTEGER),
    CAST(unnest($pass_count) AS INTEGER), CAST(unnest($n) AS INTEGER),
    CAST(unnest($c) AS INTEGER), CAST(unnest($agent_errors) AS INTEGER),
    CAST(unnest($trial_passes) AS INTEGER), CAST(unnest($other_errors) AS INTEGER),
    CAST(unnest($score) AS DOUBLE), CAST(unnest($model_error) AS VARCHAR), NULL, NULL,
    CAST(unnest($tags) AS VARCHAR[]), CAST(unnest($n_trials) AS INTEGER), NULL,
    CAST(unnest($agent_errors_left_out) AS INTEGER)
