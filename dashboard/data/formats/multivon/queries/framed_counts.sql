-- How many rows the framed read gave and how many files they came from: a good frame gives
-- one row for each file of the batch. One row: (row_count, files).
-- Template: {table} is the framed rows' table, one of staging.py's allow-listed names.
SELECT count(*) AS row_count, count(DISTINCT filename) AS files FROM {table}
