-- How much write-ahead log a file catalog holds before DuckDB checkpoints it on its own:
-- more than DuckDB's default, so that a long load does not checkpoint again and again
-- (each checkpoint rewrites the tables' growing last row groups, and the blocks it frees
-- stay in the file). Every command that writes settles the log at its end; a load's log
-- up to this size is held in memory meanwhile. No parameters.
SET checkpoint_threshold = '256MB'
