-- Adds one row per recorded trial (0.18+ reports) to `trials`, in file order: outcomes and
-- errors only. No parameters; reads `stage_cases`.
INSERT INTO trials
SELECT report_id, case_idx, trial_idx,
       CAST(t.run_index AS INTEGER), CAST(t.attempt AS INTEGER), t.status,
       try_cast(t.recorded_at AS TIMESTAMPTZ), t.model_error, t.judge_error,
       t.evaluator_error, t.latency_ms
FROM (SELECT report_id, case_idx, unnest(trials) AS t, generate_subscripts(trials, 1) AS trial_idx
      FROM stage_cases)
