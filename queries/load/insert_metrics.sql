-- Stores the metrics rows computed for a batch of reports, read from arrays DuckDB scans as
-- they are (no pandas, no value converted on its own). NaN is an UNKNOWN estimate: NULL.
-- Template: {rows} is the name the arrays are registered by, c0 .. c9 in METRIC_COLUMNS'
-- order (dashboard/data/load/results.py).
INSERT INTO metrics
SELECT c0, c1, c2, nullif(c3, 'NaN'), nullif(c4, 'NaN'), nullif(c5, 'NaN'), c6, c7, c8, c9
FROM {rows}
