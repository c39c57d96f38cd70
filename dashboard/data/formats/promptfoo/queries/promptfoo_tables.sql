-- The tables that make a SQLite file promptfoo's database: one row for each of `evals`
-- and `eval_results` the file has (both: promptfoo's). No parameters.
SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('evals', 'eval_results')
