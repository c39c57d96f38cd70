-- Flattens the cases of `stage` into the rows of `stage_cases`: one row per case, in
-- file order, with multivon-eval's upgrade applied (EvalReport.from_dict, 0.20.0
-- result.py:823-884): runs default 1; pass_count from the stored field (0.18+) else
-- round(run_pass_rate * runs) (Python rounds half to even) for multi-run cases, -1 for
-- single-run ones; status recomputed in upstream's order: skipped, model error, judge
-- error, evaluator error, every grader skipped (0.17+), then passed / failed_quality.
-- Cases whose numbers are impossible get an excluded_reason and never reach a metric.
-- The loader runs it ahead of the batch's store where it can (staging.py), into a table of
-- its own (flatten_cases.sql), else in the store (flatten_cases_temp.sql), and
-- `stage_cases` is a view of its rows.
-- No parameters; reads `stage` and `batch_files` (abspath, report_id).
WITH raw AS (
    SELECT b.report_id, unnest(s.cases) AS c, generate_subscripts(s.cases, 1) AS case_idx
    FROM stage AS s JOIN batch_files AS b ON s.filename = b.abspath
),
flat AS (
    SELECT
        report_id, case_idx, c.case_id, c.input,
        c.status AS stored_status, c.passed AS stored_passed,
        coalesce(c.skipped, false) AS skipped,
        c.model_error, c.judge_error, c.evaluator_error,
        coalesce(c.runs, 1) AS runs_raw,
        coalesce(c.run_pass_rate, 1.0) AS run_pass_rate,
        c.run_pass_rate AS run_pass_rate_raw,
        c.pass_count AS pass_count_raw,
        c.score, coalesce(c.tags, []) AS tags,
        coalesce(c.evaluators, []) AS evaluators,
        coalesce(c.trials, []) AS trials
    FROM raw
),
counted AS (
    SELECT
        *,
        CASE
            WHEN runs_raw > 1 THEN coalesce(pass_count_raw, round_even(run_pass_rate * runs_raw, 0))
            ELSE -1
        END AS pass_count_num,
        list_filter(evaluators, lambda e: NOT json_truthy(json_extract(e.metadata, '$.skipped'))) AS measured,
        len(list_filter(trials, lambda t: t.status = 'passed')) AS trials_passed
    FROM flat
),
judged AS (
    SELECT
        *,
        CASE
            WHEN skipped THEN 'skipped'
            WHEN model_error IS NOT NULL THEN 'model_error'
            WHEN judge_error IS NOT NULL THEN 'judge_error'
            WHEN evaluator_error IS NOT NULL THEN 'evaluator_error'
            WHEN len(evaluators) > 0 AND len(measured) = 0 THEN 'skipped'
            WHEN pass_count_num >= 0 THEN
                CASE WHEN pass_count_num = runs_raw THEN 'passed' ELSE 'failed_quality' END
            WHEN len(measured) > 0 AND list_bool_and(list_transform(measured, lambda e: coalesce(e.passed, false)))
                THEN 'passed'
            ELSE 'failed_quality'
        END AS status,
        CASE
            WHEN runs_raw <> floor(runs_raw) OR runs_raw < 1 THEN
                format('runs is {}; it must be a whole number of at least 1', num_text(runs_raw))
            WHEN runs_raw > 1 AND pass_count_raw IS NULL AND run_pass_rate_raw IS NULL THEN
                'run_pass_rate is missing or null, so its passes are unknown'
            WHEN run_pass_rate < 0 OR run_pass_rate > 1 THEN
                format('run_pass_rate {} is outside [0, 1]', num_text(run_pass_rate))
            WHEN pass_count_raw IS NOT NULL AND pass_count_raw <> floor(pass_count_raw) THEN
                format('pass_count {} is not a whole number', num_text(pass_count_raw))
            WHEN runs_raw > 1 AND (pass_count_num < 0 OR pass_count_num > runs_raw) THEN
                format('pass_count {} is outside 0..runs ({})', num_text(pass_count_num), num_text(runs_raw))
            WHEN runs_raw > 1 AND abs(run_pass_rate - pass_count_num / runs_raw) > 0.0000501 THEN
                format('run_pass_rate {} disagrees with pass_count {} of {} runs',
                       num_text(run_pass_rate), num_text(pass_count_num), num_text(runs_raw))
            WHEN len(trials) > 0 AND len(trials) <> runs_raw THEN
                format('it records {} trials but runs is {}', len(trials), num_text(runs_raw))
            WHEN len(trials) > 0 AND runs_raw > 1 AND model_error IS NULL AND judge_error IS NULL
                 AND evaluator_error IS NULL AND trials_passed <> pass_count_num THEN
                format('its trials record {} passes but pass_count is {}', trials_passed, num_text(pass_count_num))
        END AS excluded_reason
    FROM counted
)
SELECT
    report_id, case_idx, case_id, input, status, stored_status,
    CAST(runs_raw AS INTEGER) AS runs, CAST(pass_count_num AS INTEGER) AS pass_count,
    CASE WHEN excluded_reason IS NULL AND status IN ('passed', 'failed_quality')
         THEN CASE WHEN runs_raw > 1 THEN CAST(runs_raw AS INTEGER) ELSE 1 END END AS n,
    CASE WHEN excluded_reason IS NULL AND status IN ('passed', 'failed_quality')
         THEN CASE WHEN runs_raw > 1 THEN CAST(pass_count_num AS INTEGER)
                   ELSE CAST(status = 'passed' AS INTEGER) END END AS c,
    len(list_filter(trials, lambda t: t.status IN ('model_error', 'timeout'))) AS agent_errors,
    len(list_filter(trials, lambda t: t.status = 'passed')) AS trial_passes,
    len(list_filter(trials, lambda t: t.status IN ('judge_error', 'evaluator_error'))) AS other_errors,
    score, model_error, judge_error, evaluator_error, tags,
    len(trials) AS n_trials, excluded_reason,
    list_min(list_transform(trials, lambda t: try_cast(t.recorded_at AS TIMESTAMPTZ))) AS first_trial_at,
    list_bool_or(list_transform(evaluators, lambda e: e.metadata IS NOT NULL)) AS graders_have_metadata
FROM judged
