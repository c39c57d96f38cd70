-- Stores the lottery ranks computed for a batch of reports, read from arrays.
-- Template: {rows} is the name the arrays are registered by: c0 report_id, c1 case_idx,
-- c2 rank (dashboard/data/load/results.py).
INSERT INTO lottery SELECT c0, c1, c2 FROM {rows}
