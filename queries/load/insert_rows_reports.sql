-- Adds one row per Inspect log of a batch to `reports` (dashboard/data/ingest_inspect.py
-- parsed them in Python: dashboard/data/formats/). Release fields are filled later by
-- dashboard/data/load/releases.py, as for multivon-eval reports; an Inspect log has no stored
-- pass@k block and is never upgraded.
-- One list per column, one element per log, in the same order: $report_id, $file,
-- $suite, $model, $target_version, $format, $schema, $recorded_at (ISO text), $mtime_ns,
-- $runs_per_case, $cases_total, $cases_evaluated, $cases_errored, $cases_skipped,
-- $runs_min, $cases_with_trials, $harness, $log_status, $metadata, $harness_facts (JSON text).
INSERT INTO reports
SELECT
    CAST(unnest($report_id) AS INTEGER), CAST(unnest($file) AS VARCHAR),
    CAST(unnest($suite) AS VARCHAR), CAST(unnest($model) AS VARCHAR),
    CAST(unnest($target_version) AS VARCHAR), NULL, NULL, NULL,
    CAST(unnest($format) AS VARCHAR), false, CAST(unnest($schema) AS VARCHAR),
    try_cast(unnest($recorded_at) AS TIMESTAMPTZ), CAST(unnest($mtime_ns) AS BIGINT), NULL, NULL,
    CAST(unnest($runs_per_case) AS INTEGER), CAST(unnest($cases_total) AS INTEGER),
    CAST(unnest($cases_evaluated) AS INTEGER), CAST(unnest($cases_errored) AS INTEGER),
    CAST(unnest($cases_skipped) AS INTEGER), 0, CAST(unnest($runs_min) AS INTEGER),
    CAST(unnest($cases_with_trials) AS INTEGER), CAST(unnest($harness) AS VARCHAR),
    CAST(unnest($log_status) AS VARCHAR), CAST(unnest($metadata) AS JSON),
    CAST(unnest($harness_facts) AS JSON)
