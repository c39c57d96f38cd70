-- The recorded trials (multivon-eval 0.18+) of one case, read from its report file on
-- demand: transcripts and evidence stay in the file, not in the catalog.
-- One row: one trial, in run order. evaluators is the trial's per-grader JSON list.
-- $file: the report's absolute path; $columns: dashboard/data/catalog/schema.py TRIALS_ONLY;
-- $case_idx: the case's position in the file (from 1); $max_bytes: the size limit.
SELECT
    trial_idx, CAST(t.run_index AS INTEGER) AS run_index, CAST(t.attempt AS INTEGER) AS attempt,
    t.status, try_cast(t.recorded_at AS TIMESTAMPTZ) AS recorded_at, t.output, t.model_error,
    t.judge_error, t.evaluator_error, t.latency_ms, to_json(t.evaluators) AS evaluators
FROM (
    SELECT unnest(cases[$case_idx].trials) AS t,
           generate_subscripts(cases[$case_idx].trials, 1) AS trial_idx
    FROM read_json($file, columns = $columns, format = 'auto', records = true,
                   maximum_object_size = $max_bytes)
)
ORDER BY run_index, attempt, trial_idx
