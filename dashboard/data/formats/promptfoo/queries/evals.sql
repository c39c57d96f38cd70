-- The evals of promptfoo's database, oldest first: one row per eval, with every column
-- (`*`: a database an older promptfoo made lacks some, e.g. runtime_options, and its
-- export then leaves them out). $eval_id: one eval's id, or NULL for every eval.
SELECT * FROM evals WHERE $eval_id IS NULL OR id = $eval_id ORDER BY created_at, id
