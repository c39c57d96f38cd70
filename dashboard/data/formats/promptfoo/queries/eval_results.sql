-- One eval's results: one row per result (a test's repeat run against one prompt and
-- provider), with every column (`*`, as evals.sql), in testIdx order and, within one
-- testIdx, in the order promptfoo wrote them. $eval_id: the eval's id.
SELECT * FROM eval_results WHERE eval_id = $eval_id ORDER BY test_idx, rowid
