-- Adds one row per staged report to `reports`. Release fields are filled later by
-- dashboard/data/load/releases.py (they depend on every report of the suite).
-- The format is the multivon-eval version range whose writer produced this shape
-- (../shared/reference/multivon-format.md §2). No parameters; reads `stage`, `stage_cases`
-- and `batch_files`.
INSERT INTO reports
SELECT
    b.report_id,
    b.path AS file,
    coalesce(s.suite, '') AS suite,
    coalesce(s.model, '') AS model,
    s.execution ->> '$.target_before.declaration.version' AS target_version,
    NULL AS release, NULL AS release_source, NULL AS release_rank,
    CASE
        WHEN s.schema = 'multivon.report/v2' AND (s.execution IS NOT NULL OR s.provider_evidence IS NOT NULL)
            THEN '0.19-0.20'
        WHEN s.schema = 'multivon.report/v2' THEN '0.18'
        WHEN list_contains(s.summary_keys, 'purpose') OR list_contains(s.summary_keys, 'pass_at_k')
            THEN CASE WHEN coalesce(p.graders_have_metadata, false) THEN '0.17' ELSE '0.16' END
        WHEN list_contains(s.summary_keys, 'evaluated') THEN '0.7-0.15'
        WHEN list_contains(s.summary_keys, 'pass_rate_ci_95') THEN '0.5-0.6'
        ELSE '0.4-'
    END AS format,
    NOT (list_contains(s.summary_keys, 'purpose') OR list_contains(s.summary_keys, 'pass_at_k')
         OR coalesce(s.schema, '') = 'multivon.report/v2') AS upgraded,
    s.schema,
    p.recorded_at,
    b.mtime_ns,
    s.summary -> '$.pass_at_k' AS stored_pass_at_k,
    s.summary -> '$.pass_hat_k' AS stored_pass_hat_k,
    p.runs_per_case,
    coalesce(p.cases_total, 0), coalesce(p.cases_evaluated, 0), coalesce(p.cases_errored, 0),
    coalesce(p.cases_skipped, 0), coalesce(p.cases_excluded, 0), p.runs_min,
    coalesce(p.cases_with_trials, 0),
    'multivon-eval' AS harness, NULL AS log_status, NULL AS metadata, NULL AS harness_facts
FROM (SELECT *, coalesce(json_keys(summary), []) AS summary_keys FROM stage) AS s
JOIN batch_files AS b ON s.filename = b.abspath
LEFT JOIN (
    SELECT report_id, max(runs) AS runs_per_case, bool_or(graders_have_metadata) AS graders_have_metadata,
           count(*) AS cases_total,
           count(*) FILTER (WHERE n IS NOT NULL) AS cases_evaluated,
           count(*) FILTER (WHERE status IN ('model_error', 'judge_error', 'evaluator_error', 'timeout')) AS cases_errored,
           count(*) FILTER (WHERE status = 'skipped') AS cases_skipped,
           count(*) FILTER (WHERE excluded_reason IS NOT NULL) AS cases_excluded,
           min(runs) AS runs_min,
           count(*) FILTER (WHERE n_trials > 0) AS cases_with_trials,
           min(first_trial_at) AS recorded_at
    FROM stage_cases GROUP BY report_id
) AS p ON p.report_id = b.report_id
