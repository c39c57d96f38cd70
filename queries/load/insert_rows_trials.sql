-- Adds one row per sample-epoch of a batch of Inspect logs to `trials`: its outcome, not
-- its transcript (dashboard/data/load/transcripts.py reads that from the log for the case shown).
-- run_index is the epoch; attempt is 1 plus the epoch's error retries.
-- One list per column, one element per epoch, in the same order: $report_id, $case_idx,
-- $trial_idx, $run_index, $attempt, $status, $recorded_at (ISO text), $model_error,
-- $latency_ms.
INSERT INTO trials
SELECT
    CAST(unnest($report_id) AS INTEGER), CAST(unnest($case_idx) AS INTEGER),
    CAST(unnest($trial_idx) AS INTEGER), CAST(unnest($run_index) AS INTEGER),
    CAST(unnest($attempt) AS INTEGER), CAST(unnest($status) AS VARCHAR),
    try_cast(unnest($recorded_at) AS TIMESTAMPTZ), CAST(unnest($model_error) AS VARCHAR), NULL,
    NULL, CAST(unnest($latency_ms) AS DOUBLE)
